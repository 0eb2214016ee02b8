#pragma once

// The network input for Connect Four: three 6x7 planes built from a position record, from the side
// to move's point of view (so the network never needs to know which colour it plays):
//   plane 0: the side to move's stones, plane 1: the opponent's, plane 2: all ones (lets the
//   convolutions see the board's edges through zero padding).
// Layout: out[plane * 42 + row * 7 + column], row 0 at the bottom; 1.0f for a stone, else 0.0f.

#include <span>

#include "core/games/connect4/connect_four_position.h"

namespace az::games {

inline constexpr int kConnectFourPlanes = 3;
inline constexpr int kConnectFourInputSize = kConnectFourPlanes * kConnectFourCells;

// Writes kConnectFourInputSize floats; `out` must hold at least that many (checked).
void EncodeConnectFour(const ConnectFourRecord& record, std::span<float> out);

}  // namespace az::games
