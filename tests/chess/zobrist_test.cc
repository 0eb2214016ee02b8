#include "core/chess/zobrist.h"

#include <gtest/gtest.h>

#include <set>

#include "core/chess/position.h"
#include "core/chess/uci.h"

namespace az::chess {
namespace {

TEST(ZobristTest, KeysAreDistinctAndNonZero) {
  std::set<std::uint64_t> keys;
  int count = 0;
  for (Color c : {kWhite, kBlack}) {
    for (int pt = kPawn; pt <= kKing; ++pt) {
      for (Square s = 0; s < 64; ++s) {
        keys.insert(zobrist::PieceSquare(MakePiece(c, static_cast<PieceType>(pt)), s));
        ++count;
      }
    }
  }
  for (int f = 0; f < 8; ++f, ++count) keys.insert(zobrist::EnPassantFile(f));
  for (int r = 1; r < 16; ++r, ++count)
    keys.insert(zobrist::Castling(static_cast<CastlingRights>(r)));
  keys.insert(zobrist::BlackToMove());
  ++count;
  EXPECT_EQ(static_cast<int>(keys.size()), count);
  EXPECT_EQ(keys.count(0), 0u);
  EXPECT_EQ(zobrist::Castling(0), 0u);
}

TEST(ZobristTest, HashDistinguishesSideCastlingAndEnPassant) {
  const auto hash = [](const char* fen) { return Position::FromFen(fen)->Hash(); };
  const char* base = "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1";
  EXPECT_NE(hash(base), hash("r3k2r/8/8/3pP3/8/8/8/R3K2R b KQkq - 0 1"));
  EXPECT_NE(hash(base), hash("r3k2r/8/8/3pP3/8/8/8/R3K2R w Kkq d6 0 1"));
  EXPECT_NE(hash(base), hash("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq - 0 1"));
  // Clocks are not part of the position's identity.
  EXPECT_EQ(hash(base), hash("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 7 30"));
}

TEST(ZobristTest, TranspositionsHashEqual) {
  Position a;
  Position b;
  for (const char* m : {"g1f3", "g8f6", "b1c3"}) a.MakeMove(*ParseUciMove(a, m));
  for (const char* m : {"b1c3", "g8f6", "g1f3"}) b.MakeMove(*ParseUciMove(b, m));
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_EQ(a.Hash(), a.ComputeHash());
}

}  // namespace
}  // namespace az::chess
