#pragma once

// One chess game between two UCI engines (uci_client.h), refereed by the project's own rules
// (core/chess): every move an engine sends is checked for legality, and the game ends on
// checkmate, stalemate, insufficient material, threefold repetition or the fifty-move rule as
// core/chess::Game decides, on the length limit, or on adjudication of the engines' own scores.
//
// Adjudication (each off when its move count is 0), as cutechess-cli does it:
//   resign  an engine whose reported score was at or below -resign_score centipawns on each of
//           its last resign_moves moves loses;
//   draw    after full move draw_after_move, when both engines' last draw_moves scores were
//           all within +-draw_score, the game is drawn.
// A move without a score breaks both runs.
//
// Forfeits: an illegal or malformed move, an engine that exits, or one that does not answer in
// time loses the game (the record names the engine that failed, so that the caller restarts it
// before the next game). With a clock, an engine has its remaining time plus time_margin for a
// move; with movetime, movetime plus time_margin; with only nodes or depth, move_timeout.

#include <chrono>
#include <string>
#include <vector>

#include "core/chess/game.h"
#include "services/match/uci_client.h"

namespace az::match {

struct Adjudication {
  int resign_moves = 0;
  int resign_score = 1000;
  int draw_moves = 0;
  int draw_score = 10;
  int draw_after_move = 40;
  int max_plies = 512;  // plies played by the engines (the opening's not counted); 0: no limit
};

struct ChessGameOptions {
  Adjudication adjudication;
  std::chrono::milliseconds time_margin{100};
  std::chrono::milliseconds move_timeout{std::chrono::seconds(120)};
  std::chrono::milliseconds stop_grace{std::chrono::seconds(2)};
  std::chrono::milliseconds ready_timeout{std::chrono::seconds(60)};
};

struct ChessGameRecord {
  int white_score = 0;             // +1 white won, -1 black won, 0 drawn
  std::string termination;         // "checkmate", "adjudication: resignation", "time forfeit", ...
  std::string start_fen;           // empty for the standard start position
  std::vector<chess::Move> moves;  // from the start position: the opening's moves, then the game's
  std::vector<std::string> comments;  // one per move: "" for the opening's, "+0.35/12 0.51s"
  int opening_plies = 0;
  bool white_failed = false;  // crashed, timed out or sent an illegal move: restart it
  bool black_failed = false;
};

// "1-0", "0-1", "1/2-1/2".
std::string ResultText(int white_score);

// The UCI position command for `game` (its start position and every move): "position startpos
// moves e2e4 ..." or "position fen <FEN> moves ...".
std::string PositionCommand(const chess::Game& game);

// Plays `opening` (a position with its history) to the end. The engines must have been started;
// NewGame is sent to both first.
ChessGameRecord PlayChessGame(UciEngine& white, UciEngine& black, const chess::Game& opening,
                              const ChessGameOptions& options);

}  // namespace az::match
