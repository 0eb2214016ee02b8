#include "core/chess/bitboard.h"

#include <mutex>
#include <vector>

#include "core/base/check.h"

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
// Magic multipliers for the portable path, found once by a seeded random search for sparse numbers
// that map every relevant occupancy of a square to a slot without a harmful collision (the tables
// are the same size as the PEXT ones). Embedded so that start-up does not repeat the ~0.2 s search;
// InitSlider still verifies every entry.
// clang-format off
constexpr Bitboard kRookMagics[64] = {
    0x2080044000201080ULL, 0x0200104020820500ULL, 0x8080100080200008ULL, 0x0480100044800800ULL,
    0x0880080080265400ULL, 0xC080010400800200ULL, 0x2100208200044900ULL, 0x0200007A04003051ULL,
    0x0400802040008000ULL, 0x0824804000200488ULL, 0x0000801000200080ULL, 0x0A20800802100081ULL,
    0x4507000500480010ULL, 0x6802000200100805ULL, 0x0404000204108841ULL, 0x0402000100A04204ULL,
    0x8080024004200040ULL, 0x0000260045020180ULL, 0x004C110020004100ULL, 0x1010010008102100ULL,
    0x0501010010080004ULL, 0x4202008080020400ULL, 0x1000808002000100ULL, 0x9020060008830044ULL,
    0x1000410100208000ULL, 0x08A8400040201001ULL, 0x3200100080802000ULL, 0x4302002200081040ULL,
    0x0820110100040800ULL, 0x0086000200080410ULL, 0x0248810400422810ULL, 0x2440210200009044ULL,
    0xB040401088800020ULL, 0x02A0004000803080ULL, 0x9040801000802000ULL, 0x0800080080801000ULL,
    0x0602001022000408ULL, 0x8602000280800400ULL, 0x4404480244008110ULL, 0x0400840472000481ULL,
    0x00C0002040888000ULL, 0x8020100420424004ULL, 0x0420020400101000ULL, 0x108E615001010008ULL,
    0x2400100801010004ULL, 0x8200040002008080ULL, 0x400A000801020084ULL, 0x10210C1050820001ULL,
    0x0440208000401080ULL, 0x000080C001200180ULL, 0x4000420880102200ULL, 0x2002204388120200ULL,
    0x0008300801004500ULL, 0x0134008004020080ULL, 0x0821000402000100ULL, 0x0A010104A40A4200ULL,
    0x8101001040800029ULL, 0x0000201440048101ULL, 0x0821004008142001ULL, 0x0260050021100089ULL,
    0x19C1000800020411ULL, 0x0002000148441002ULL, 0x0210008110220804ULL, 0x000A10208C004902ULL,
};
constexpr Bitboard kBishopMagics[64] = {
    0x0002080801045200ULL, 0x000404080A0020C4ULL, 0x400842084A020802ULL, 0x8404404080020020ULL,
    0x81140C2210000020ULL, 0x0412080404004848ULL, 0x08E2020120080001ULL, 0x0101040222020200ULL,
    0x404060040C00D400ULL, 0x8084120808510544ULL, 0x0801100080810A04ULL, 0x00C4080606400081ULL,
    0xA002040420111000ULL, 0x28200101201040E1ULL, 0x0080008088609041ULL, 0x40100B0426010400ULL,
    0x0110102102D04503ULL, 0x040880A001010200ULL, 0x0242018108020080ULL, 0x4008000422002060ULL,
    0x0401015890400004ULL, 0x1003000020884008ULL, 0x2204428609300886ULL, 0x9200203100880412ULL,
    0x0911940090202A08ULL, 0x1C292088140C0424ULL, 0x0040281010004440ULL, 0x0010040080401020ULL,
    0x0C0882000401040DULL, 0x0111010002004100ULL, 0x4034840001090880ULL, 0x4341010402108088ULL,
    0x5081051050401000ULL, 0x0008010800848800ULL, 0x2540804100300418ULL, 0x0000020080080080ULL,
    0x0882038401020020ULL, 0x2406004300220480ULL, 0x0408080080004240ULL, 0x0402040030404200ULL,
    0x1080880840000890ULL, 0x0104110809024200ULL, 0x0000840248001100ULL, 0x0000098401015020ULL,
    0x0210011020841402ULL, 0x0202040820202200ULL, 0x00A021090518021EULL, 0x0204008410428101ULL,
    0x80040E430C202421ULL, 0x40030142100D1801ULL, 0x000008840C090010ULL, 0x8004420042022000ULL,
    0x810C105082120200ULL, 0x0110D00210C90120ULL, 0x004008011C00A200ULL, 0x0002440802004008ULL,
    0x0808804C00A00800ULL, 0x0040008409481200ULL, 0x0938108500880410ULL, 0x0020000000840420ULL,
    0x4110202808210108ULL, 0x0140084208090508ULL, 0x2000404308220080ULL, 0x4010204081204100ULL,
};
// clang-format on
#endif

void InitSlider(SliderEntry (&entries)[64], Bitboard* table, const int (&dirs)[4][2],
                [[maybe_unused]] const Bitboard* magics) {
  Bitboard* next = table;
  std::vector<Bitboard> occupancies;
  std::vector<Bitboard> attacks;
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
    e.magic = magics[s];
    std::vector<bool> filled(size, false);
    for (std::size_t i = 0; i < size; ++i) {
      const std::size_t index = (occupancies[i] * e.magic) >> e.shift;
      AZ_CHECK(!filled[index] || next[index] == attacks[i], "bad magic for a sliding piece");
      filled[index] = true;
      next[index] = attacks[i];
    }
#endif
    next += size;
  }
}

void InitTables() {
  AttackTables& t = g_tables;
#ifdef __BMI2__
  const Bitboard* rook_magics = nullptr;
  const Bitboard* bishop_magics = nullptr;
#else
  const Bitboard* rook_magics = kRookMagics;
  const Bitboard* bishop_magics = kBishopMagics;
#endif
  InitSlider(t.rook, g_rook_attacks, kRookDirections, rook_magics);
  InitSlider(t.bishop, g_bishop_attacks, kBishopDirections, bishop_magics);

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
