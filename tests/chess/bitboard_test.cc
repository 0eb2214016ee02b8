#include "core/chess/bitboard.h"

#include <gtest/gtest.h>

#include <random>

#include "core/chess/position.h"

namespace az::chess {
namespace {

// Reference: walk each ray until the edge or the first occupied square (included).
Bitboard WalkRays(Square s, Bitboard occupied, const int (&dirs)[4][2]) {
  Bitboard attacks = 0;
  for (const auto& d : dirs) {
    int f = FileOf(s) + d[0];
    int r = RankOf(s) + d[1];
    while (f >= 0 && f < 8 && r >= 0 && r < 8) {
      attacks |= SquareBb(MakeSquare(f, r));
      if (occupied & SquareBb(MakeSquare(f, r))) break;
      f += d[0];
      r += d[1];
    }
  }
  return attacks;
}

constexpr int kRookDirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
constexpr int kBishopDirs[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

// Checks whichever method this build uses (PEXT or magics) against the ray walk.
TEST(BitboardTest, SlidingAttacksMatchARayWalkForRandomOccupancies) {
  internal::EnsureTablesInitialized();
  std::mt19937_64 rng(1);
  for (Square s = 0; s < 64; ++s) {
    for (int i = 0; i < 300; ++i) {
      // Sparse and dense boards both.
      const Bitboard occupied = (i % 2) ? (rng() & rng()) : (rng() | rng());
      ASSERT_EQ(RookAttacks(s, occupied), WalkRays(s, occupied, kRookDirs)) << s;
      ASSERT_EQ(BishopAttacks(s, occupied), WalkRays(s, occupied, kBishopDirs)) << s;
    }
  }
}

TEST(BitboardTest, BetweenAndLineAreStrictAndFull) {
  internal::EnsureTablesInitialized();
  EXPECT_EQ(Between(kA1, kA8), kFileA & ~SquareBb(kA1) & ~SquareBb(kA8));
  EXPECT_EQ(Between(kA1, kH8), Between(kH8, kA1));
  EXPECT_EQ(PopCount(Between(kA1, kH8)), 6);
  EXPECT_EQ(Between(kE1, kE2), 0u);
  EXPECT_EQ(Between(kA1, kB3), 0u);  // not aligned
  EXPECT_EQ(Line(kC3, kE3), kRank3);
  EXPECT_EQ(Line(kA1, kB3), 0u);
  EXPECT_EQ(KnightAttacks(kA1), SquareBb(kB3) | SquareBb(kC2));
  EXPECT_EQ(PawnAttacks(kWhite, kE4), SquareBb(kD5) | SquareBb(kF5));
  EXPECT_EQ(PawnAttacks(kBlack, kA5), SquareBb(kB4));
}

}  // namespace
}  // namespace az::chess
