#pragma once

// Legal move generation. Moves are generated legal (check and pin masks, en passant tested for
// discovered checks), never pseudo-legal and filtered, so no make/unmake is needed to test them.
// No allocation: moves go into a fixed-capacity MoveList.

#include "core/chess/position.h"
#include "core/chess/types.h"

namespace az::chess {

// Writes the legal moves of the side to move into `moves`, replacing its contents. Order: king
// moves, pawn moves, en passant, knight, diagonal and straight slider moves, castling.
void GenerateLegalMoves(const Position& position, MoveList& moves);

// The same moves, returned by value.
MoveList LegalMoves(const Position& position);

// How many legal moves the side to move has, without writing them out (faster than generating).
int CountLegalMoves(const Position& position);

}  // namespace az::chess
