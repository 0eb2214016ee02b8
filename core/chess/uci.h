#pragma once

// UCI long algebraic notation: "e2e4", "e7e8q", castling as the king's move "e1g1".

#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/chess/position.h"
#include "core/chess/types.h"

namespace az::chess {

// "e2e4", "a7a8q"; the null move is "0000".
std::string MoveToUci(Move m);

// The legal move of `position` that `uci` names. InvalidArgument when the text is not a UCI move
// (length, squares, promotion letter) or names no legal move in this position; the message says
// which.
Result<Move> ParseUciMove(const Position& position, std::string_view uci);

// "e4" for the square 28; ParseSquare accepts lower-case "a1".."h8" only.
std::string SquareToString(Square s);
Result<Square> ParseSquare(std::string_view text);

}  // namespace az::chess
