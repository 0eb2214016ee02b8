#pragma once

// An exact Connect Four solver: the game-theoretic value (win, draw or loss with perfect play) of
// any position, and of each of its moves. Tests check the search against it, and the learning
// benchmark (docs/learning.md) scores a model's moves with it.
//
// A weak solver in the manner of Pascal Pons' (http-free summary: negamax with alpha-beta over
// {-1, 0, +1} on the bitboard, only moves that do not hand the opponent an immediate win, moves
// ordered centre-first and by the threats they create, a transposition table of bounds, and two
// null-window searches instead of one full window). Positions past a dozen plies solve in
// milliseconds; the empty board takes minutes.
//
// Not thread-safe (the table): one solver per thread. The table persists across calls, so a run of
// related positions gets faster.

#include <array>
#include <cstdint>
#include <vector>

#include "core/games/connect4/connect_four_position.h"

namespace az::games {

class ConnectFourSolver {
 public:
  // A table of 2^table_log2 entries of 16 bytes (22: 64 MiB).
  explicit ConnectFourSolver(int table_log2 = 22);

  // The value of `position` for its side to move: +1 win, 0 draw, -1 loss. A position whose last
  // move connected four is -1, a full board 0.
  int Solve(const ConnectFourPosition& position);

  // The value, for the side to move, of playing each column: +1, 0, -1, or kIllegal for a full
  // column (or every column once the game is over).
  static constexpr int kIllegal = -2;
  std::array<int, kConnectFourWidth> MoveValues(const ConnectFourPosition& position);

  // Nodes searched since construction.
  std::uint64_t nodes() const { return nodes_; }

 private:
  struct Entry {
    std::uint64_t key = 0;  // current + mask + 1 (0: empty)
    std::int8_t value = 0;
    std::uint8_t bound = 0;  // kLower, kUpper or kExact
  };
  int Negamax(std::uint64_t current, std::uint64_t mask, int moves, int alpha, int beta);

  std::vector<Entry> table_;
  std::uint64_t table_mask_;
  std::uint64_t nodes_ = 0;
};

}  // namespace az::games
