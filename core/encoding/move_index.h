#pragma once

// The network's action space: 4672 indices, 73 move types from each of the 64 squares, always in
// the side to move's frame (for Black both squares are flipped rank-wise, sq ^ 56, the same flip as
// the input planes: see docs/encoding.md for why not 63 - sq).
//
//   [0, 3584)     queen-type moves:   from * 56 + direction * 7 + (distance - 1)
//                 direction 0..7 = N, NE, E, SE, S, SW, W, NW (clockwise from "forward"),
//                 distance 1..7; covers queen, rook, bishop, king, pawn moves, castling (the king's
//                 two-square move) and promotions to a queen.
//   [3584, 4096)  knight moves:       3584 + from * 8 + k
//                 k 0..7 = (rank, file) steps (+2,+1) (+1,+2) (-1,+2) (-2,+1) (-2,-1) (-1,-2)
//                 (+1,-2) (+2,-1), clockwise from forward-right.
//   [4096, 4672)  under-promotions:   4096 + from * 9 + direction * 3 + piece
//                 direction 0 = capture towards the a-file, 1 = straight, 2 = capture towards the
//                 h-file; piece 0 = knight, 1 = bishop, 2 = rook.
//
// "from", "N" and "forward" are in the side to move's frame: for Black, e7e5 is encoded as e2e4.
// Every index is in range; not every index names a geometrically possible move (e.g. a1 going
// west), and the legal moves of a position map to distinct indices.

#include <cstdint>
#include <span>

#include "core/base/status.h"
#include "core/chess/position.h"
#include "core/chess/types.h"

namespace az::encoding {

inline constexpr int kPolicySize = 4672;
inline constexpr int kQueenMovesBase = 0;
inline constexpr int kKnightMovesBase = 3584;
inline constexpr int kUnderPromotionsBase = 4096;

// The policy index of `move` played by `side_to_move`. The move must be a well-formed move of that
// side (from the move generator): a queen-type or knight step, or an under-promotion one step
// forward; anything else is a bug (checked). Constant time, no allocation.
int MoveToIndex(chess::Color side_to_move, chess::Move move);

// The policy index of a legal move of `position`.
inline int MoveToIndex(const chess::Position& position, chess::Move move) {
  return MoveToIndex(position.SideToMove(), move);
}

// The legal move of `position` that `index` names: the inverse of MoveToIndex, resolving the move's
// kind (castling, en passant, promotion to a queen) from the position. InvalidArgument, saying why,
// when the index is out of [0, kPolicySize), names a step off the board, or names no legal move
// here. Generates the legal moves to check (about 0.1-0.2 us).
Result<chess::Move> IndexToMove(const chess::Position& position, int index);

// Writes the policy index of each of `moves` (legal moves of `position`) to out[i] and returns the
// count. `out` must hold moves.size() entries (checked).
int MoveIndices(const chess::Position& position, const chess::MoveList& moves,
                std::span<std::uint16_t> out);

// The legal-move mask: writes kPolicySize floats to `out` (checked to hold that many), 1.0f at the
// index of every legal move of `position` and 0.0f elsewhere. Returns the number of legal moves.
// Generates the legal moves itself; no allocation.
int LegalMoveMask(const chess::Position& position, std::span<float> out);

}  // namespace az::encoding
