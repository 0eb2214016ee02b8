#pragma once

// Zobrist keys. Fixed at compile time from a seeded generator, so every process and every build
// computes the same hash for the same position (hashes may cross process boundaries).

#include <array>
#include <cstdint>

#include "core/chess/types.h"

namespace az::chess::zobrist {

namespace internal {
constexpr std::uint64_t SplitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

struct Keys {
  std::uint64_t piece_square[kPieceIndexSize][64];  // unused piece codes stay 0
  std::uint64_t castling[16];                       // one per set of rights; castling[0] = 0
  std::uint64_t en_passant_file[8];
  std::uint64_t black_to_move;
};

constexpr Keys MakeKeys() {
  Keys keys{};
  std::uint64_t state = 0x5A6F62726973744BULL;  // fixed seed
  for (int c = 0; c < kNumColors; ++c) {
    for (int pt = 0; pt < kNumPieceTypes; ++pt) {
      for (int s = 0; s < 64; ++s) {
        keys.piece_square[MakePiece(static_cast<Color>(c), static_cast<PieceType>(pt))][s] =
            SplitMix64(state);
      }
    }
  }
  // One key per right, combined by XOR, so a change of rights is one XOR of two entries.
  std::uint64_t right_keys[4] = {};
  for (auto& k : right_keys) k = SplitMix64(state);
  for (int set = 0; set < 16; ++set) {
    for (int bit = 0; bit < 4; ++bit) {
      if (set & (1 << bit)) keys.castling[set] ^= right_keys[bit];
    }
  }
  for (auto& k : keys.en_passant_file) k = SplitMix64(state);
  keys.black_to_move = SplitMix64(state);
  return keys;
}
}  // namespace internal

inline constexpr internal::Keys kKeys = internal::MakeKeys();

inline std::uint64_t PieceSquare(Piece p, Square s) { return kKeys.piece_square[p][s]; }
inline std::uint64_t Castling(CastlingRights rights) { return kKeys.castling[rights]; }
inline std::uint64_t EnPassantFile(int file) { return kKeys.en_passant_file[file]; }
inline std::uint64_t BlackToMove() { return kKeys.black_to_move; }

}  // namespace az::chess::zobrist
