#pragma once

// Bitboard helpers and attack tables. Sliding attacks use PEXT (BMI2) when the compiler targets it
// and magic multiplication (embedded, verified magics) otherwise; both index tables of the same
// size. The tables are built once per process (about 0.9 MB, a few milliseconds) before main(), and
// Position's factories make sure of it too, so any code holding a Position can call these.
//
// Every target of this project is compiled with the same -march flags, so every translation unit
// takes the same branch of `#ifdef __BMI2__` below; do not mix objects built with different flags.

#include <bit>
#include <cstdint>

#include "core/chess/types.h"

#ifdef __BMI2__
#include <immintrin.h>
#endif

namespace az::chess {

inline constexpr Bitboard kFileA = 0x0101010101010101ULL;
inline constexpr Bitboard kFileH = kFileA << 7;
inline constexpr Bitboard kRank1 = 0xFFULL;
inline constexpr Bitboard kRank2 = kRank1 << 8;
inline constexpr Bitboard kRank3 = kRank1 << 16;
inline constexpr Bitboard kRank4 = kRank1 << 24;
inline constexpr Bitboard kRank5 = kRank1 << 32;
inline constexpr Bitboard kRank6 = kRank1 << 40;
inline constexpr Bitboard kRank7 = kRank1 << 48;
inline constexpr Bitboard kRank8 = kRank1 << 56;
inline constexpr Bitboard kDarkSquares = 0xAA55AA55AA55AA55ULL;  // a1 is dark
inline constexpr Bitboard kLightSquares = ~kDarkSquares;

constexpr Bitboard SquareBb(Square s) { return Bitboard{1} << s; }
constexpr int PopCount(Bitboard b) { return std::popcount(b); }
// Lsb and PopLsb require b != 0.
constexpr Square Lsb(Bitboard b) { return std::countr_zero(b); }
constexpr Square PopLsb(Bitboard& b) {
  const Square s = Lsb(b);
  b &= b - 1;
  return s;
}
constexpr bool MoreThanOne(Bitboard b) { return (b & (b - 1)) != 0; }

// Shifts the whole board one step "forward" for colour c (north for White, south for Black), and
// forward-diagonally towards the a-file (West) or the h-file (East), dropping what falls off.
template <Color c>
constexpr Bitboard Forward(Bitboard b) {
  return c == kWhite ? b << 8 : b >> 8;
}
template <Color c>
constexpr Bitboard ForwardWest(Bitboard b) {
  return c == kWhite ? (b & ~kFileA) << 7 : (b & ~kFileA) >> 9;
}
template <Color c>
constexpr Bitboard ForwardEast(Bitboard b) {
  return c == kWhite ? (b & ~kFileH) << 9 : (b & ~kFileH) >> 7;
}

namespace internal {

// One entry per square for a sliding piece: the relevant-occupancy mask and where its block of
// attack sets starts. magic/shift are used only without BMI2.
struct SliderEntry {
  Bitboard mask;
  const Bitboard* attacks;
  Bitboard magic;
  unsigned shift;
};

struct AttackTables {
  SliderEntry rook[64];
  SliderEntry bishop[64];
  Bitboard knight[64];
  Bitboard king[64];
  Bitboard pawn[2][64];      // squares a pawn of the colour on that square attacks
  Bitboard between[64][64];  // squares strictly between two aligned squares, else 0
  Bitboard line[64][64];     // the full line through two aligned squares, else 0
};
extern AttackTables g_tables;

// Builds the tables on the first call (thread-safe); later calls are one atomic load.
void EnsureTablesInitialized();

}  // namespace internal

inline Bitboard RookAttacks(Square s, Bitboard occupied) {
  const internal::SliderEntry& e = internal::g_tables.rook[s];
#ifdef __BMI2__
  return e.attacks[_pext_u64(occupied, e.mask)];
#else
  return e.attacks[((occupied & e.mask) * e.magic) >> e.shift];
#endif
}
inline Bitboard BishopAttacks(Square s, Bitboard occupied) {
  const internal::SliderEntry& e = internal::g_tables.bishop[s];
#ifdef __BMI2__
  return e.attacks[_pext_u64(occupied, e.mask)];
#else
  return e.attacks[((occupied & e.mask) * e.magic) >> e.shift];
#endif
}
inline Bitboard QueenAttacks(Square s, Bitboard occupied) {
  return RookAttacks(s, occupied) | BishopAttacks(s, occupied);
}
inline Bitboard KnightAttacks(Square s) { return internal::g_tables.knight[s]; }
inline Bitboard KingAttacks(Square s) { return internal::g_tables.king[s]; }
inline Bitboard PawnAttacks(Color c, Square s) { return internal::g_tables.pawn[c][s]; }
inline Bitboard Between(Square a, Square b) { return internal::g_tables.between[a][b]; }
inline Bitboard Line(Square a, Square b) { return internal::g_tables.line[a][b]; }

// "PEXT (BMI2)" or "magic bitboards": which sliding-attack method this build uses.
const char* SlidingAttackMethod();

}  // namespace az::chess
