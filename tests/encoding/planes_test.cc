#include "core/encoding/planes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/position.h"
#include "core/encoding/position_record.h"
#include "tests/encoding/test_games.h"

namespace az::encoding {
namespace {

using chess::Game;
using chess::Position;

// A straightforward encoder written from the table in planes.h, reading the live Game square by
// square (no record, no bitboard packing): the independent reference the record path must match.
std::vector<float> ReferencePlanes(const Game& game) {
  std::vector<float> planes(kInputFloats, 0.0f);
  const chess::Color us = game.position().SideToMove();
  const auto frame = [us](chess::Square s) { return us == chess::kWhite ? s : chess::FlipRank(s); };
  const auto fill = [&planes](int channel, float value) {
    for (int s = 0; s < 64; ++s) planes[s * kNumPlanes + channel] = value;
  };
  for (int t = 0; t <= kHistoryLength && t <= game.ply(); ++t) {
    const Position& pos = game.PositionAt(t);
    const int base = t == 0 ? 0 : 18 + 13 * (t - 1);
    for (int s = 0; s < 64; ++s) {
      const chess::Piece p = pos.PieceOn(s);
      if (p == chess::kNoPiece) continue;
      const int channel = (chess::ColorOf(p) == us ? 0 : 6) + chess::TypeOf(p);
      planes[frame(s) * kNumPlanes + base + channel] = 1.0f;
    }
    const int earlier = game.RepetitionCount(t) - 1;
    if (t == 0) {
      if (earlier >= 1) fill(12, 1.0f);
      if (earlier >= 2) fill(13, 1.0f);
    } else if (earlier >= 1) {
      fill(base + 12, 1.0f);
    }
  }
  const Position& pos = game.position();
  fill(14, us == chess::kBlack ? 1.0f : 0.0f);
  fill(15, std::min(1.0f, pos.FullmoveNumber() / 100.0f));
  fill(17, std::min(1.0f, pos.HalfmoveClock() / 50.0f));
  for (chess::Color c : {chess::kWhite, chess::kBlack}) {
    for (chess::CastlingSide side : {chess::kKingSide, chess::kQueenSide}) {
      if (!pos.CanCastle(c, side)) continue;
      const chess::Square rook =
          chess::MakeSquare(side == chess::kKingSide ? 7 : 0, c == chess::kWhite ? 0 : 7);
      planes[frame(rook) * kNumPlanes + 16] = 1.0f;
    }
  }
  return planes;
}

std::vector<float> Encode(const PositionRecord& record) {
  std::vector<float> planes(kInputFloats, -1.0f);  // garbage the encoder must overwrite
  EncodePlanes(record, planes);
  return planes;
}

Game GameFrom(const std::string& fen, const std::vector<std::string>& moves = {}) {
  Result<Game> game = Game::FromFen(fen);
  EXPECT_TRUE(game.ok()) << game.status().ToString();
  Game g = game.ok() ? std::move(*game) : Game();
  for (const std::string& m : moves) {
    const Status s = g.PlayUci(m);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  return g;
}

// The non-zero entries as (frame square, channel, value), for golden comparisons.
using Entry = std::tuple<int, int, float>;
std::set<Entry> NonZero(const std::vector<float>& planes, int first_channel, int last_channel) {
  std::set<Entry> entries;
  for (int s = 0; s < 64; ++s) {
    for (int c = first_channel; c <= last_channel; ++c) {
      const float v = planes[s * kNumPlanes + c];
      if (v != 0.0f) entries.insert({s, c, v});
    }
  }
  return entries;
}

// The start position's piece entries from the mover's frame, with piece channels offset by `base`:
// own pieces on rows 0-1, the opponent's on rows 6-7 (the start position is mirror-symmetric).
std::set<Entry> StartPieces(int base) {
  std::set<Entry> e;
  const int back_rank[8] = {3, 1, 2, 4, 5, 2, 1, 3};  // R N B Q K B N R
  for (int file = 0; file < 8; ++file) {
    e.insert({file, base + back_rank[file], 1.0f});
    e.insert({8 + file, base + 0, 1.0f});
    e.insert({48 + file, base + 6, 1.0f});
    e.insert({56 + file, base + 6 + back_rank[file], 1.0f});
  }
  return e;
}

TEST(PlanesTest, StartPositionForWhiteSetsTheExpectedSquares) {
  const std::vector<float> planes = Encode(MakeRecord(Game()));
  EXPECT_EQ(NonZero(planes, 0, 11), StartPieces(0));
  EXPECT_TRUE(NonZero(planes, 12, 14).empty());  // no repetition, White to move
  // Castling: the four rook home squares, a1 h1 a8 h8.
  EXPECT_EQ(NonZero(planes, 16, 16),
            (std::set<Entry>{{0, 16, 1.0f}, {7, 16, 1.0f}, {56, 16, 1.0f}, {63, 16, 1.0f}}));
  for (int s = 0; s < 64; ++s) {
    EXPECT_FLOAT_EQ(planes[s * kNumPlanes + 15], 0.01f);  // fullmove 1 / 100
    EXPECT_EQ(planes[s * kNumPlanes + 17], 0.0f);
  }
  EXPECT_TRUE(NonZero(planes, 18, 121).empty());  // no earlier positions
}

TEST(PlanesTest, AfterE4BlackSeesTheBoardFlippedWithItsOwnPiecesFirst) {
  const std::vector<float> planes =
      Encode(MakeRecord(GameFrom(std::string(chess::kStartFen), {"e2e4"})));
  // Black's pieces are "ours" (channels 0-5) on rows 0-1; White's e-pawn moved from e2 (flipped:
  // e7 = 52) to e4 (flipped: e5 = 36).
  std::set<Entry> expected = StartPieces(0);
  expected.erase({52, 6, 1.0f});
  expected.insert({36, 6, 1.0f});
  EXPECT_EQ(NonZero(planes, 0, 11), expected);
  EXPECT_TRUE(NonZero(planes, 12, 13).empty());
  for (int s = 0; s < 64; ++s) {
    EXPECT_EQ(planes[s * kNumPlanes + 14], 1.0f);         // Black to move
    EXPECT_FLOAT_EQ(planes[s * kNumPlanes + 15], 0.01f);  // still fullmove 1
    EXPECT_EQ(planes[s * kNumPlanes + 17], 0.0f);         // a pawn move resets the clock
  }
  EXPECT_EQ(NonZero(planes, 16, 16),
            (std::set<Entry>{{0, 16, 1.0f}, {7, 16, 1.0f}, {56, 16, 1.0f}, {63, 16, 1.0f}}));
  // One ply ago: the start position, in Black's perspective and flip: channels 18-29, the white
  // e-pawn back on flipped e7; no repetition marker; nothing earlier.
  EXPECT_EQ(NonZero(planes, 18, 30), StartPieces(18));
  EXPECT_TRUE(NonZero(planes, 31, 121).empty());
}

TEST(PlanesTest, HistoryIsMostRecentFirstInTheCurrentPerspective) {
  const Game game = GameFrom(std::string(chess::kStartFen), {"e2e4", "c7c5", "g1f3"});
  const std::vector<float> planes = Encode(MakeRecord(game));
  // Black to move; flipped frame. One ply ago (channels 18-30) Black's c-pawn was on c5 (flipped c4
  // = 26), not yet the knight on f3; two plies ago (31-43) the c-pawn was on c7 (flipped c2 = 10).
  EXPECT_EQ(planes[26 * kNumPlanes + 18 + 0], 1.0f);
  EXPECT_EQ(planes[10 * kNumPlanes + 18 + 0], 0.0f);
  EXPECT_EQ(planes[(chess::kG1 ^ 56) * kNumPlanes + 18 + 7], 1.0f);  // White knight still on g1
  EXPECT_EQ(planes[10 * kNumPlanes + 31 + 0], 1.0f);
  EXPECT_EQ(planes[26 * kNumPlanes + 31 + 0], 0.0f);
  // Three plies ago is the start position; four plies ago is before the game: zeros.
  EXPECT_EQ(NonZero(planes, 44, 56), StartPieces(44));
  EXPECT_TRUE(NonZero(planes, 57, 121).empty());
}

TEST(PlanesTest, RepetitionPlanesCountEarlierOccurrences) {
  Game game;
  const std::vector<std::string> cycle = {"g1f3", "g8f6", "f3g1", "f6g8"};
  for (const std::string& m : cycle) ASSERT_TRUE(game.PlayUci(m).ok());
  // The start position, seen for the second time.
  std::vector<float> planes = Encode(MakeRecord(game));
  EXPECT_EQ(NonZero(planes, 12, 12).size(), 64u);
  EXPECT_TRUE(NonZero(planes, 13, 13).empty());
  for (int t = 1; t <= 4; ++t) {  // none of the earlier positions had occurred before them
    EXPECT_TRUE(NonZero(planes, 18 + 13 * (t - 1) + 12, 18 + 13 * (t - 1) + 12).empty());
  }
  ASSERT_TRUE(game.PlayUci("g1f3").ok());
  planes = Encode(MakeRecord(game));
  EXPECT_EQ(NonZero(planes, 12, 12).size(), 64u);            // after 1.Nf3, second time
  EXPECT_EQ(NonZero(planes, 18 + 12, 18 + 12).size(), 64u);  // 1 ply ago: start, second time
  EXPECT_TRUE(NonZero(planes, 57 + 12, 57 + 12).empty());    // 4 plies ago: 1.Nf3, first time
  for (const char* m : {"g8f6", "f3g1", "f6g8"}) ASSERT_TRUE(game.PlayUci(m).ok());
  planes = Encode(MakeRecord(game));  // the start position a third time
  EXPECT_EQ(NonZero(planes, 12, 12).size(), 64u);
  EXPECT_EQ(NonZero(planes, 13, 13).size(), 64u);
}

TEST(PlanesTest, ClockPlanesScaleAndSaturate) {
  std::vector<float> planes = Encode(MakeRecord(GameFrom("4k3/8/8/8/8/8/8/R3K3 w Q - 25 150")));
  EXPECT_FLOAT_EQ(planes[17], 0.5f);
  EXPECT_FLOAT_EQ(planes[15], 1.0f);
  planes = Encode(MakeRecord(GameFrom("4k3/8/8/8/8/8/8/R3K3 w Q - 80 37")));
  EXPECT_FLOAT_EQ(planes[63 * kNumPlanes + 17], 1.0f);
  EXPECT_FLOAT_EQ(planes[63 * kNumPlanes + 15], 0.37f);
}

TEST(PlanesTest, CastlingPlaneKeepsEachOfTheFourRightsApart) {
  // Every subset of rights gives a different plane, for either side to move: nothing is lost.
  for (const char* side : {"w", "b"}) {
    std::set<std::set<Entry>> seen;
    for (int rights = 0; rights < 16; ++rights) {
      std::string field;
      if (rights & chess::kWhiteKingSide) field += 'K';
      if (rights & chess::kWhiteQueenSide) field += 'Q';
      if (rights & chess::kBlackKingSide) field += 'k';
      if (rights & chess::kBlackQueenSide) field += 'q';
      if (field.empty()) field.push_back('-');
      std::string fen = "r3k2r/8/8/8/8/8/8/R3K2R ";
      fen.append(side).append(" ").append(field).append(" - 0 1");
      const Game game = GameFrom(fen);
      const std::set<Entry> plane = NonZero(Encode(MakeRecord(game)), 16, 16);
      EXPECT_EQ(plane.size(), static_cast<std::size_t>(std::popcount(unsigned(rights))));
      seen.insert(plane);
    }
    EXPECT_EQ(seen.size(), 16u) << side;
  }
  // Black to move with only White's king-side right: h1 flipped to h8 (63), the opponent's side.
  const Game game = GameFrom("r3k2r/8/8/8/8/8/8/R3K2R b K - 0 1");
  EXPECT_EQ(NonZero(Encode(MakeRecord(game)), 16, 16), (std::set<Entry>{{63, 16, 1.0f}}));
}

TEST(PlanesTest, MirroredPositionsDifferOnlyInTheColourPlane) {
  int compared = 0;
  testing::ForEachRandomGamePosition({.seed = 7, .games = 20}, [&](const Game& game) {
    const std::string fen = game.position().ToFen();
    Result<Position> mirror = Position::FromFen(testing::MirrorFen(fen));
    ASSERT_TRUE(mirror.ok()) << mirror.status().ToString();
    const std::vector<float> a = Encode(MakeRecord(game.position()));
    const std::vector<float> b = Encode(MakeRecord(*mirror));
    for (int i = 0; i < kInputFloats; ++i) {
      if (i % kNumPlanes == kColorPlane) {
        ASSERT_NE(a[i], b[i]);
      } else {
        ASSERT_EQ(a[i], b[i]) << fen << " square " << i / kNumPlanes << " channel "
                              << i % kNumPlanes;
      }
    }
    ++compared;
  });
  RecordProperty("positions", compared);
  EXPECT_GT(compared, 1000);
}

// The property the compact record exists for: the planes a record expands to are exactly the live
// game's, after the record crossed a byte boundary, for both colours and with repetitions.
TEST(PlanesTest, RecordExpandsToExactlyTheLiveGamesPlanes) {
  int positions = 0, black_to_move = 0, repeated = 0, repeated_in_history = 0;
  std::vector<float> from_record(kInputFloats);
  testing::ForEachRandomGamePosition({.seed = 42, .games = 120}, [&](const Game& game) {
    const PositionRecord live = MakeRecord(game);
    unsigned char bytes[sizeof(PositionRecord)];
    std::memcpy(bytes, &live, sizeof(bytes));
    PositionRecord received;
    std::memcpy(&received, bytes, sizeof(received));
    ASSERT_TRUE(ValidateRecord(received).ok()) << ValidateRecord(received).ToString();

    EncodePlanes(received, from_record);
    const std::vector<float> reference = ReferencePlanes(game);
    ASSERT_EQ(std::memcmp(from_record.data(), reference.data(), kInputBytes), 0)
        << game.position().ToFen() << " at ply " << game.ply();
    std::vector<float> live_planes(kInputFloats);
    EncodeGame(game, live_planes);
    ASSERT_EQ(live_planes, reference);

    ++positions;
    black_to_move += game.position().SideToMove() == chess::kBlack;
    repeated += game.RepetitionCount() > 1;
    for (int t = 1; t <= std::min(game.ply(), kHistoryLength); ++t) {
      if (game.RepetitionCount(t) > 1) {
        ++repeated_in_history;
        break;
      }
    }
  });
  // The sample must cover what the property is about.
  RecordProperty("positions", positions);
  RecordProperty("black_to_move", black_to_move);
  RecordProperty("repeated", repeated);
  RecordProperty("repeated_in_history", repeated_in_history);
  EXPECT_GT(positions, 5000);
  EXPECT_GT(black_to_move, positions / 3);
  EXPECT_GT(repeated, 200);
  EXPECT_GT(repeated_in_history, 200);
}

TEST(PlanesTest, BatchEncodesEachRecordIntoItsOwnSliceAndNothingElse) {
  std::vector<PositionRecord> records;
  testing::ForEachRandomGamePosition(
      {.seed = 3, .games = 2, .max_plies = 20},
      [&](const Game& game) { records.push_back(MakeRecord(game)); });
  ASSERT_GE(records.size(), 10u);
  std::vector<float> batch(records.size() * kInputFloats + 1, -7.0f);
  EncodeBatch(records, std::span<float>(batch).first(records.size() * kInputFloats));
  EXPECT_EQ(batch.back(), -7.0f);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::vector<float> single = Encode(records[i]);
    ASSERT_TRUE(std::equal(single.begin(), single.end(), batch.begin() + i * kInputFloats)) << i;
  }
}

TEST(PlanesTest, GarbageRecordsAreRejectedByValidationAndEncodeWithinBounds) {
  std::mt19937_64 rng(5);
  std::vector<float> planes(kInputFloats + 1, 0.0f);
  for (int i = 0; i < 2000; ++i) {
    // Random bytes behind a valid magic and version, so that validation looks past the header.
    PositionRecord record;
    unsigned char* bytes = reinterpret_cast<unsigned char*>(&record);
    for (std::size_t b = 6; b < sizeof(record); ++b) bytes[b] = static_cast<unsigned char>(rng());
    EXPECT_FALSE(ValidateRecord(record).ok());
    planes.back() = 3.0f;
    EncodePlanes(record, std::span<float>(planes).first(kInputFloats));
    EXPECT_EQ(planes.back(), 3.0f);
    for (int k = 0; k < kInputFloats; ++k) ASSERT_TRUE(planes[k] >= 0.0f && planes[k] <= 1.0f);
  }
}

}  // namespace
}  // namespace az::encoding
