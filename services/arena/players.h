#pragma once

// Connect Four players for az-arena: the two baselines a learning network is measured against, and
// a network player (a weights file, with or without MCTS).
//
//   random    a uniformly random playable column
//   onestep   one ply of lookahead: plays a winning column, else blocks the opponent's winning
//             column, else avoids columns that hand the opponent a win on top, else random
//   MODEL     a weights file: MCTS with `simulations` playouts (no root noise, most visited move),
//             or the raw policy's most probable column with 0 simulations
//
// Not thread-safe: one player per game loop.

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/games/connect4/connect_four.h"
#include "core/mcts/random.h"

namespace az::arena {

class Player {
 public:
  virtual ~Player() = default;
  // A playable column of `position` (a position where the game is not over). Errors only from a
  // network (LibTorch).
  virtual Result<int> Choose(const games::ConnectFourPosition& position, mcts::Rng& rng) = 0;
  virtual const std::string& name() const = 0;
};

struct PlayerOptions {
  int simulations = 32;  // for a network: playouts per move; 0: raw policy
  int threads = 1;       // LibTorch intra-op threads
};

// "random", "onestep", or the path of a weights file of a Connect Four network. NOT_FOUND /
// DATA_LOSS / FAILED_PRECONDITION for a file that is missing, damaged, or not a Connect Four
// network.
Result<std::unique_ptr<Player>> MakePlayer(const std::string& spec, const PlayerOptions& options);

// The columns where the side to move connects four at once (a bit per column).
std::uint32_t WinningColumns(const games::ConnectFourPosition& position);

}  // namespace az::arena
