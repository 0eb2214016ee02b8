#include "core/encoding/position_record.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/position.h"
#include "tests/encoding/test_games.h"

namespace az::encoding {
namespace {

using chess::Game;
using chess::Position;

// A layout change without a version bump breaks every reader of old records: this test pins it.
TEST(PositionRecordTest, LayoutIsPinned) {
  EXPECT_EQ(sizeof(PositionRecord), 240u);
  EXPECT_EQ(offsetof(PositionRecord, magic), 0u);
  EXPECT_EQ(offsetof(PositionRecord, version), 4u);
  EXPECT_EQ(offsetof(PositionRecord, side_to_move), 6u);
  EXPECT_EQ(offsetof(PositionRecord, castling), 7u);
  EXPECT_EQ(offsetof(PositionRecord, en_passant), 8u);
  EXPECT_EQ(offsetof(PositionRecord, history_count), 9u);
  EXPECT_EQ(offsetof(PositionRecord, halfmove_clock), 10u);
  EXPECT_EQ(offsetof(PositionRecord, fullmove_number), 12u);
  EXPECT_EQ(offsetof(PositionRecord, repetitions), 14u);
  EXPECT_EQ(offsetof(PositionRecord, reserved), 23u);
  EXPECT_EQ(offsetof(PositionRecord, boards), 24u);
  EXPECT_EQ(offsetof(PackedBoard, pieces), 8u);
  EXPECT_EQ(kRecordVersion, 1);
  const PositionRecord record;
  EXPECT_EQ(std::memcmp(&record, "AZPR", 4), 0);
}

TEST(PositionRecordTest, StartPositionPacksToKnownBytes) {
  const PositionRecord record = MakeRecord(Game());
  EXPECT_EQ(record.boards[0].occupied, 0xFFFF00000000FFFFULL);
  // a1..h1 = R N B Q K B N R (3 1 2 4 5 2 1 3), low nibble first; 8 White pawns (0); 8 Black pawns
  // (8); a8..h8 = r n b q k b n r (11 9 10 12 13 10 9 11).
  const std::uint8_t expected[16] = {0x13, 0x42, 0x25, 0x31, 0x00, 0x00, 0x00, 0x00,
                                     0x88, 0x88, 0x88, 0x88, 0x9B, 0xCA, 0xAD, 0xB9};
  EXPECT_EQ(std::memcmp(record.boards[0].pieces, expected, 16), 0);
  EXPECT_EQ(record.side_to_move, chess::kWhite);
  EXPECT_EQ(record.castling, chess::kAllCastlingRights);
  EXPECT_EQ(record.en_passant, chess::kNoSquare);
  EXPECT_EQ(record.history_count, 0);
  EXPECT_EQ(record.halfmove_clock, 0);
  EXPECT_EQ(record.fullmove_number, 1);
  for (int t = 1; t < kRecordBoards; ++t) EXPECT_EQ(record.boards[t].occupied, 0u);
}

TEST(PositionRecordTest, RecordHoldsTheGamesHistoryAndRepetitions) {
  int positions = 0;
  testing::ForEachRandomGamePosition({.seed = 11, .games = 40}, [&](const Game& game) {
    const PositionRecord record = MakeRecord(game);
    ASSERT_EQ(record.history_count, std::min(game.ply(), kHistoryLength));
    for (int t = 0; t <= record.history_count; ++t) {
      chess::Piece squares[64];
      UnpackBoard(record.boards[t], squares);
      const Position& pos = game.PositionAt(t);
      for (int s = 0; s < 64; ++s) ASSERT_EQ(squares[s], pos.PieceOn(s)) << "t=" << t << " s=" << s;
      ASSERT_EQ(record.repetitions[t], game.RepetitionCount(t) - 1);
    }
    ++positions;
  });
  EXPECT_GT(positions, 2000);
}

TEST(PositionRecordTest, RecordGivesBackTheLivePosition) {
  int positions = 0;
  testing::ForEachRandomGamePosition({.seed = 12, .games = 30}, [&](const Game& game) {
    Result<Position> back = RecordToPosition(MakeRecord(game));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_TRUE(*back == game.position()) << game.position().ToFen() << " vs " << back->ToFen();
    ++positions;
  });
  EXPECT_GT(positions, 1000);
}

// Each case corrupts one field of a valid record; validation must name it.
TEST(PositionRecordTest, ValidationRejectsEachMalformedField) {
  Game game;
  for (const char* m : {"e2e4", "g8f6", "e4e5", "d7d5"}) ASSERT_TRUE(game.PlayUci(m).ok());
  const PositionRecord good = MakeRecord(game);  // White to move, en passant on d6
  ASSERT_EQ(good.en_passant, chess::kD6);
  ASSERT_TRUE(ValidateRecord(good).ok()) << ValidateRecord(good).ToString();

  struct Case {
    const char* what;
    std::function<void(PositionRecord&)> corrupt;
    StatusCode code;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"magic", [](PositionRecord& r) { r.magic ^= 1; }, StatusCode::kDataLoss, "magic"},
      {"version", [](PositionRecord& r) { r.version = 2; }, StatusCode::kInvalidArgument,
       "version 2"},
      {"side", [](PositionRecord& r) { r.side_to_move = 2; }, StatusCode::kInvalidArgument,
       "side to move"},
      {"castling", [](PositionRecord& r) { r.castling = 16; }, StatusCode::kInvalidArgument,
       "castling"},
      {"en passant square", [](PositionRecord& r) { r.en_passant = chess::kD3; },
       StatusCode::kInvalidArgument, "en-passant"},
      {"en passant range", [](PositionRecord& r) { r.en_passant = 65; },
       StatusCode::kInvalidArgument, "en-passant"},
      {"history count", [](PositionRecord& r) { r.history_count = 9; },
       StatusCode::kInvalidArgument, "history_count"},
      {"fullmove", [](PositionRecord& r) { r.fullmove_number = 0; }, StatusCode::kInvalidArgument,
       "fullmove"},
      {"reserved", [](PositionRecord& r) { r.reserved = 1; }, StatusCode::kInvalidArgument,
       "reserved"},
      {"piece code", [](PositionRecord& r) { r.boards[2].pieces[0] = 0x76; },
       StatusCode::kInvalidArgument, "invalid code"},
      {"trailing nibble",  // 31 pieces left, but the 32nd nibble (the h8 rook) is still set
       [](PositionRecord& r) { r.boards[0].occupied &= ~(1ULL << chess::kH8); },
       StatusCode::kInvalidArgument, "past its pieces"},
      {"too many pieces", [](PositionRecord& r) { r.boards[1].occupied |= 0x0000FFFF00000000ULL; },
       StatusCode::kInvalidArgument, "pieces, at most 32"},
      {"board past history", [](PositionRecord& r) { r.boards[6].occupied = 1; },
       StatusCode::kInvalidArgument, "past history_count"},
      {"repetition past history", [](PositionRecord& r) { r.repetitions[8] = 1; },
       StatusCode::kInvalidArgument, "past history_count"},
      {"kings", [](PositionRecord& r) { r.boards[0].pieces[2] = 0x22; },  // e1 king -> bishop
       StatusCode::kInvalidArgument, "kings"},
  };
  for (const Case& c : cases) {
    PositionRecord bad = good;
    c.corrupt(bad);
    const Status s = ValidateRecord(bad);
    EXPECT_EQ(s.code(), c.code) << c.what << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s.ToString();
    EXPECT_FALSE(RecordToPosition(bad).ok()) << c.what;
  }
}

}  // namespace
}  // namespace az::encoding
