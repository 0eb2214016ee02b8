#pragma once

// The network input for Connect Four: seven 6x7 planes built from a position record, from the side
// to move's point of view (stones are the side to move's or the opponent's, not by colour):
//   plane 0: the side to move's stones, plane 1: the opponent's, plane 2: all ones (lets the
//   convolutions see the board's edges through zero padding), plane 3: the cells a stone would
//   land in now (the lowest empty cell of each open column), planes 4 and 5: the empty cells where
//   a stone of the side to move (4) or of the opponent (5) would complete four, reachable now or
//   not, plane 6: all ones when the side to move is the first player, else zeros (which threats
//   count depends on it). Planes 3-6 are what Connect Four play is about; like KataGo's liberty
//   and ladder planes, they spare a small network from learning them (docs/learning.md).
// Layout: out[plane * 42 + row * 7 + column], row 0 at the bottom; 1.0f for a stone, else 0.0f.

#include <span>

#include "core/games/connect4/connect_four_position.h"

namespace az::games {

inline constexpr int kConnectFourPlanes = 7;
inline constexpr int kConnectFourLandingPlane = 3;  // the cells a stone would land in now
inline constexpr int kConnectFourInputSize = kConnectFourPlanes * kConnectFourCells;

// Writes kConnectFourInputSize floats; `out` must hold at least that many (checked).
void EncodeConnectFour(const ConnectFourRecord& record, std::span<float> out);

}  // namespace az::games
