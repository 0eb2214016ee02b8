#pragma once

// az-score's work: how often a model's move keeps the game-theoretic value of a position (win,
// draw or loss, by the game's exact solver), with its raw policy or with MCTS (docs/learning.md).
// For any registered game with a solver (core/games/game.h's Solvable): tic-tac-toe is scored on
// every reachable position, Connect Four on a deterministic set of positions from random play.
//
//   AZ_ASSIGN_OR_RETURN(ScoreReport report, ScoreModel({.game = "tictactoe", .model = path}));
//   std::cout << FormatReport(report);  // "score tictactoe positions 4520 kept 4431 (98.0%) ..."

#include <string>
#include <vector>

#include "core/base/status.h"

namespace az::score {

struct ScoreOptions {
  std::string game = "tictactoe";  // a registered game with a solver
  std::string model = "uniform";   // a weights file, or "uniform" (the first legal move)
  int simulations = 0;             // 0: the raw policy's most probable move; N: MCTS, N playouts
  int threads = 1;                 // LibTorch intra-op threads
  // Positions for games too large to score every position of: how many, and their plies.
  int positions = 400;
  int min_ply = 8;
  int max_ply = 30;
  std::uint64_t seed = 1;
  // Score the model as a player instead (enumerable games): the positions it faces when it plays
  // one side from the start, its own move in its positions and every reply of the opponent's, for
  // either side. Perfect play is a share of 1 here: no opponent can make it lose a won or drawn game.
  bool as_player = false;
};

// The positions of one band of plies.
struct BandScore {
  int min_ply = 0;
  int max_ply = 0;
  int positions = 0;
  int kept = 0;  // the model's move keeps the position's value
};

struct ScoreReport {
  std::string game;
  bool as_player = false;
  int positions = 0;
  int kept = 0;
  // Positions where every legal move keeps the value (any player scores them): what a share
  // should be read against. The first legal move's share is also reported as a floor.
  int trivial = 0;
  std::vector<BandScore> bands;
  double seconds = 0;
  double share() const { return positions == 0 ? 0 : static_cast<double>(kept) / positions; }
};

// Scores the model on the game's position set. INVALID_ARGUMENT for an unknown game, a game
// without a solver or options out of range; the model's errors (NOT_FOUND, DATA_LOSS,
// FAILED_PRECONDITION when it is not a network of that game); the network's errors.
Result<ScoreReport> ScoreModel(const ScoreOptions& options);

// "score <game> positions N kept K (S%) trivial T in X s" and a line per band.
std::string FormatReport(const ScoreReport& report);
// The same as one JSON object (fields: game, positions, kept, share, trivial, seconds, bands).
std::string ReportJson(const ScoreReport& report);

}  // namespace az::score
