#include "core/encoding/move_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/chess/position.h"
#include "core/chess/uci.h"
#include "tests/encoding/test_games.h"

namespace az::encoding {
namespace {

using chess::Move;
using chess::Position;

Position FromFen(const std::string& fen) {
  Result<Position> p = Position::FromFen(fen);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Position();
}

// Indices computed by hand from the formulas in move_index.h (squares: a1 = 0, e2 = 12, ...).
TEST(MoveIndexTest, HandComputedIndices) {
  const std::string after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
  const std::string castles_w = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
  const std::string castles_b = "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1";
  struct Case {
    std::string fen;
    std::string uci;
    int index;
  };
  const std::vector<Case> cases = {
      // e2 (12) north (0) two squares: 12*56 + 0*7 + 1.
      {std::string(chess::kStartFen), "e2e4", 673},
      // Black's e7e5 is e2e4 in Black's flipped frame.
      {after_e4, "e7e5", 673},
      // Knight g1 (6) to f3: step (+2 ranks, -1 file) is k = 7: 3584 + 6*8 + 7.
      {std::string(chess::kStartFen), "g1f3", 3639},
      // Black b8c6 is b1c3 flipped: from 1, step (+2, +1) is k = 0: 3584 + 1*8 + 0.
      {after_e4, "b8c6", 3592},
      // Black g8f6 is g1f3 flipped: the same index, no file mirroring.
      {after_e4, "g8f6", 3639},
      // Under-promotions from a7 (48) straight (1) to a knight (0): 4096 + 48*9 + 1*3 + 0.
      {"4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8n", 4531},
      // The queen promotion is a queen-type move: a7 (48) north, one square: 48*56.
      {"4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q", 2688},
      // b7 (49) capturing towards the a-file (0) to a rook (2): 4096 + 49*9 + 0 + 2.
      {"r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7a8r", 4539},
      {"r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8n", 4540},
      {"r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8b", 4541},
      // Black e2e1=N is e7e8=N flipped: from 52: 4096 + 52*9 + 3 + 0; e2e1=Q: 52*56.
      {"4k3/8/8/8/8/8/4p3/K7 b - - 0 1", "e2e1n", 4567},
      {"4k3/8/8/8/8/8/4p3/K7 b - - 0 1", "e2e1q", 2912},
      // Black e2xf1=R is e7xf8=R flipped: towards the h-file (2), rook (2): 4096 + 468 + 6 + 2.
      {"4k3/8/8/8/8/8/4p3/K4N2 b - - 0 1", "e2f1r", 4572},
      // Castling is the king's two-square move: e1 (4) east (2) two: 4*56 + 2*7 + 1; queen side
      // west (6): 4*56 + 6*7 + 1. Black's castling gets the same indices.
      {castles_w, "e1g1", 239},
      {castles_w, "e1c1", 267},
      {castles_b, "e8g8", 239},
      {castles_b, "e8c8", 267},
      // En passant e5xd6: e5 (36) north-west (7) one square: 36*56 + 7*7 + 0; Black's e4xd3 is
      // the same move flipped.
      {"4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", "e5d6", 2065},
      {"4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1", "e4d3", 2065},
  };
  for (const Case& c : cases) {
    const Position pos = FromFen(c.fen);
    Result<Move> move = chess::ParseUciMove(pos, c.uci);
    ASSERT_TRUE(move.ok()) << c.uci << ": " << move.status().ToString();
    EXPECT_EQ(MoveToIndex(pos, *move), c.index) << c.uci << " in " << c.fen;
    Result<Move> decoded = IndexToMove(pos, c.index);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, *move) << c.uci << " decoded as " << chess::MoveToUci(*decoded);
  }
}

TEST(MoveIndexTest, EveryLegalMoveHasAUniqueIndexThatDecodesBackToIt) {
  int positions[2] = {0, 0};
  int castling[2] = {0, 0}, en_passant[2] = {0, 0}, under_promotions[2] = {0, 0};
  std::vector<std::uint16_t> indices(chess::kMaxMoves);
  std::vector<float> mask(kPolicySize);
  testing::ForEachRandomGamePosition({.seed = 21, .games = 100}, [&](const chess::Game& game) {
    const Position& pos = game.position();
    const int us = pos.SideToMove();
    const chess::MoveList moves = chess::LegalMoves(pos);
    std::vector<bool> used(kPolicySize, false);
    for (const Move m : moves) {
      const int index = MoveToIndex(pos, m);
      ASSERT_GE(index, 0);
      ASSERT_LT(index, kPolicySize);
      ASSERT_FALSE(used[index]) << chess::MoveToUci(m) << " shares index " << index << " in "
                                << pos.ToFen();
      used[index] = true;
      Result<Move> back = IndexToMove(pos, index);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      ASSERT_EQ(*back, m) << chess::MoveToUci(m) << " came back as " << chess::MoveToUci(*back);
      castling[us] += m.kind() == Move::kCastling;
      en_passant[us] += m.kind() == Move::kEnPassant;
      under_promotions[us] += m.kind() == Move::kPromotion && m.promotion() != chess::kQueen;
    }
    // The batch helpers agree with MoveToIndex.
    ASSERT_EQ(MoveIndices(pos, moves, indices), moves.size());
    for (int i = 0; i < moves.size(); ++i) ASSERT_EQ(indices[i], MoveToIndex(pos, moves[i]));
    ASSERT_EQ(LegalMoveMask(pos, mask), moves.size());
    for (int i = 0; i < kPolicySize; ++i) ASSERT_EQ(mask[i], used[i] ? 1.0f : 0.0f) << i;
    ++positions[us];
  });
  RecordProperty("white_positions", positions[0]);
  RecordProperty("black_positions", positions[1]);
  RecordProperty("castling", castling[0] + castling[1]);
  RecordProperty("en_passant", en_passant[0] + en_passant[1]);
  RecordProperty("under_promotions", under_promotions[0] + under_promotions[1]);
  for (int c = 0; c < 2; ++c) {  // both colours, every special move kind
    EXPECT_GT(positions[c], 2000) << c;
    EXPECT_GT(castling[c], 20) << c;
    EXPECT_GT(en_passant[c], 5) << c;
    EXPECT_GT(under_promotions[c], 20) << c;
  }
}

// The reason for the rank flip (sq ^ 56) rather than a rotation (63 - sq): a Black move and the
// rank-mirrored White move in the colour-mirrored position are the same action, as their input
// planes are the same (PlanesTest.MirroredPositionsDifferOnlyInTheColourPlane).
TEST(MoveIndexTest, BlackMovesShareIndicesWithTheMirroredWhiteMoves) {
  int compared = 0;
  testing::ForEachRandomGamePosition({.seed = 22, .games = 30}, [&](const chess::Game& game) {
    const Position& pos = game.position();
    const Position mirror = FromFen(testing::MirrorFen(pos.ToFen()));
    const chess::MoveList mirror_moves = chess::LegalMoves(mirror);
    ASSERT_EQ(chess::LegalMoves(pos).size(), mirror_moves.size());
    for (const Move m : chess::LegalMoves(pos)) {
      const Move mirrored = Move::FromRaw(static_cast<std::uint16_t>(m.raw() ^ (56 | (56 << 6))));
      ASSERT_TRUE(mirror_moves.contains(mirrored)) << chess::MoveToUci(m);
      ASSERT_EQ(MoveToIndex(pos, m), MoveToIndex(mirror, mirrored)) << chess::MoveToUci(m);
      ++compared;
    }
  });
  RecordProperty("moves", compared);
  EXPECT_GT(compared, 20000);
}

TEST(MoveIndexTest, DecodingRejectsIndicesThatNameNoLegalMove) {
  const Position start;
  for (int index : {-1, kPolicySize, 100000}) {
    const Result<Move> m = IndexToMove(start, index);
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(m.status().message().find("outside"), std::string::npos) << m.status().ToString();
  }
  // a1 (0) south (4) one square: 0*56 + 4*7 + 0 = 28 steps off the board.
  Result<Move> m = IndexToMove(start, 28);
  EXPECT_NE(m.status().message().find("off the board"), std::string::npos) << m.status().ToString();
  // e2e5 (12*56 + 0*7 + 2 = 674): on the board, not legal.
  m = IndexToMove(start, 674);
  EXPECT_NE(m.status().message().find("e2e5"), std::string::npos) << m.status().ToString();
  // e7e5 from White's side is e2e4 for Black only: for White it names e7's pawn moving south.
  m = IndexToMove(start, 52 * 56 + 4 * 7 + 1);
  EXPECT_FALSE(m.ok());
  // An under-promotion index from a square with no pawn.
  m = IndexToMove(start, kUnderPromotionsBase + 48 * 9 + 3);
  EXPECT_FALSE(m.ok());
}

}  // namespace
}  // namespace az::encoding
