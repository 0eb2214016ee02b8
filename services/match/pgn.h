#pragma once

// Standard Algebraic Notation and PGN export, so that az-match's games can be read by any chess
// GUI or tool (and by people).

#include <string>
#include <utility>
#include <vector>

#include "core/chess/position.h"
#include "core/chess/types.h"

namespace az::match {

// Standard Algebraic Notation of a legal move of `before`: piece letter (none for pawns), the
// shortest disambiguation (file, else rank, else both), "x" for captures (en passant too; a pawn
// capture names its file: "exd6"), "=Q" promotions, "O-O"/"O-O-O", and "+" or "#" after.
// An illegal move is a bug and stops the process.
std::string MoveToSan(const chess::Position& before, chess::Move move);

struct PgnGame {
  std::string event = "az-match", site = "?", date = "????.??.??", round = "?", white = "?",
              black = "?";
  std::string result = "*";  // "1-0", "0-1", "1/2-1/2", "*"
  std::string start_fen;     // empty: the standard start position (no SetUp/FEN tags)
  // e.g. "checkmate", "adjudication: resignation", "time forfeit": a [Termination "..."] tag when
  // not empty.
  std::string termination;
  // e.g. TimeControl, Opening; written after the others, in this order.
  std::vector<std::pair<std::string, std::string>> extra_tags;
  std::vector<chess::Move> moves;  // from the start position, all legal (checked: a bug otherwise)
  // Empty, or one per move ("" for none): written as {comment} after the move, e.g.
  // "+0.35/12 0.51s". A '}' in a comment is written as ')' so that it cannot end the comment.
  std::vector<std::string> comments;
};

// The game as PGN export format: the seven-tag roster in its order (Event, Site, Date, Round,
// White, Black, Result), then SetUp "1" and FEN when start_fen is set, Termination, PlyCount, the
// extra tags; a blank line; the movetext with move numbers ("1. e4 e5 2. Nf3"; a Black move after
// a comment, and a game starting with Black to move, get "N... "), comments in braces, lines at
// most 80 characters (broken between words; only a single word longer than that exceeds it), the
// result at the end; a blank line after. Tag values escape \ and ". A start_fen that does not
// parse, an illegal move or a comment count other than 0 or moves.size() is a bug and stops the
// process.
std::string FormatPgn(const PgnGame& game);

}  // namespace az::match
