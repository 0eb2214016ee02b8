#include "core/chess/bitboard.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace az::chess {
namespace internal {

AttackTables g_tables;

namespace {

// 102400 rook and 5248 bishop attack sets: one per subset of each square's relevant occupancy.
Bitboard g_rook_attacks[102400];
Bitboard g_bishop_attacks[5248];

constexpr int kRookDirections[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
constexpr int kBishopDirections[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

bool OnBoard(int file, int rank) { return file >= 0 && file < 8 && rank >= 0 && rank < 8; }

// Attacks by walking each ray until it leaves the board or hits an occupied square (included).
Bitboard SlowSliderAttacks(Square s, Bitboard occupied, const int (&dirs)[4][2]) {
  Bitboard attacks = 0;
  for (const auto& d : dirs) {
    int f = FileOf(s) + d[0];
    int r = RankOf(s) + d[1];
    while (OnBoard(f, r)) {
      const Square t = MakeSquare(f, r);
      attacks |= SquareBb(t);
      if (occupied & SquareBb(t)) break;
      f += d[0];
      r += d[1];
    }
  }
  return attacks;
}

// The squares whose occupancy matters: each ray without its last (edge) square.
Bitboard RelevantMask(Square s, const int (&dirs)[4][2]) {
  Bitboard mask = 0;
  for (const auto& d : dirs) {
    int f = FileOf(s) + d[0];
    int r = RankOf(s) + d[1];
    while (OnBoard(f + d[0], r + d[1])) {
      mask |= SquareBb(MakeSquare(f, r));
      f += d[0];
      r += d[1];
    }
  }
  return mask;
}

#ifndef __BMI2__
// xorshift64*, fixed seed: the magic search is deterministic.
struct Prng {
  std::uint64_t state;
  std::uint64_t Next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ULL;
  }
  std::uint64_t Sparse() { return Next() & Next() & Next(); }
};
#endif

void InitSlider(SliderEntry (&entries)[64], Bitboard* table, const int (&dirs)[4][2]) {
  Bitboard* next = table;
  std::vector<Bitboard> occupancies;
  std::vector<Bitboard> attacks;
  [[maybe_unused]] std::vector<int> epoch;
  for (Square s = 0; s < 64; ++s) {
    SliderEntry& e = entries[s];
    e.mask = RelevantMask(s, dirs);
    e.attacks = next;
    const int bits = PopCount(e.mask);
    e.shift = 64 - bits;
    const std::size_t size = std::size_t{1} << bits;
    occupancies.clear();
    attacks.clear();
    // Enumerate every subset of the mask (carry-rippler).
    Bitboard subset = 0;
    do {
      occupancies.push_back(subset);
      attacks.push_back(SlowSliderAttacks(s, subset, dirs));
      subset = (subset - e.mask) & e.mask;
    } while (subset != 0);
#ifdef __BMI2__
    e.magic = 0;
    for (std::size_t i = 0; i < size; ++i) next[_pext_u64(occupancies[i], e.mask)] = attacks[i];
#else
    // Search for a magic that maps every subset to a slot without a harmful collision.
    Prng prng{0x1F2E3D4C5B6A7988ULL ^ (static_cast<std::uint64_t>(s) * 0x9E3779B97F4A7C15ULL)};
    epoch.assign(size, 0);
    for (int attempt = 1;; ++attempt) {
      const Bitboard magic = prng.Sparse();
      if (PopCount((e.mask * magic) >> 56) < 6) continue;
      bool ok = true;
      for (std::size_t i = 0; i < size && ok; ++i) {
        const std::size_t index = (occupancies[i] * magic) >> e.shift;
        if (epoch[index] != attempt) {
          epoch[index] = attempt;
          next[index] = attacks[i];
        } else if (next[index] != attacks[i]) {
          ok = false;
        }
      }
      if (ok) {
        e.magic = magic;
        break;
      }
    }
#endif
    next += size;
  }
}

void InitTables() {
  AttackTables& t = g_tables;
  InitSlider(t.rook, g_rook_attacks, kRookDirections);
  InitSlider(t.bishop, g_bishop_attacks, kBishopDirections);

  constexpr int kKnightSteps[8][2] = {{1, 2},   {2, 1},   {2, -1}, {1, -2},
                                      {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
  constexpr int kKingSteps[8][2] = {{1, 0},  {1, 1},   {0, 1},  {-1, 1},
                                    {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
  for (Square s = 0; s < 64; ++s) {
    const int f = FileOf(s);
    const int r = RankOf(s);
    t.knight[s] = t.king[s] = 0;
    for (const auto& d : kKnightSteps) {
      if (OnBoard(f + d[0], r + d[1])) t.knight[s] |= SquareBb(MakeSquare(f + d[0], r + d[1]));
    }
    for (const auto& d : kKingSteps) {
      if (OnBoard(f + d[0], r + d[1])) t.king[s] |= SquareBb(MakeSquare(f + d[0], r + d[1]));
    }
    t.pawn[kWhite][s] = ForwardWest<kWhite>(SquareBb(s)) | ForwardEast<kWhite>(SquareBb(s));
    t.pawn[kBlack][s] = ForwardWest<kBlack>(SquareBb(s)) | ForwardEast<kBlack>(SquareBb(s));
  }

  for (Square a = 0; a < 64; ++a) {
    for (Square b = 0; b < 64; ++b) {
      t.between[a][b] = t.line[a][b] = 0;
      if (a == b) continue;
      const Bitboard bb = SquareBb(b);
      if (RookAttacks(a, 0) & bb) {
        t.between[a][b] = RookAttacks(a, bb) & RookAttacks(b, SquareBb(a));
        t.line[a][b] = (RookAttacks(a, 0) & RookAttacks(b, 0)) | SquareBb(a) | bb;
      } else if (BishopAttacks(a, 0) & bb) {
        t.between[a][b] = BishopAttacks(a, bb) & BishopAttacks(b, SquareBb(a));
        t.line[a][b] = (BishopAttacks(a, 0) & BishopAttacks(b, 0)) | SquareBb(a) | bb;
      }
    }
  }
}

std::once_flag g_init_once;

// Built before main() too, so code that never calls a factory still finds the tables ready.
[[maybe_unused]] const bool g_initialized_at_load = [] {
  EnsureTablesInitialized();
  return true;
}();

}  // namespace

void EnsureTablesInitialized() { std::call_once(g_init_once, InitTables); }

}  // namespace internal

const char* SlidingAttackMethod() {
#ifdef __BMI2__
  return "PEXT (BMI2)";
#else
  return "magic bitboards";
#endif
}

}  // namespace az::chess
