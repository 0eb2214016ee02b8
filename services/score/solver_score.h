#pragma once

// az-score's work: how often a model's move keeps the game-theoretic value of a position (win,
// draw or loss, by the game's exact solver), with its raw policy or with MCTS (docs/learning.md).
// For any registered game with a solver (core/games/game.h's Solvable): tic-tac-toe is scored on
// every reachable position; Connect Four on a stored set whose values the solver computed once
// (position_set.h; the small set that ships by default), or on random positions solved now.
//
//   AZ_ASSIGN_OR_RETURN(ScoreReport report, ScoreModel({.game = "tictactoe", .model = path}));
//   std::cout << FormatReport(report);  // "score tictactoe positions 4520 kept 4431 (98.0%) ..."

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace az::score {

struct ScoreOptions {
  std::string game = "tictactoe";  // a registered game with a solver
  // A weights file; "uniform" (no network: the first legal move, or MCTS with equal priors); or
  // "onestep" (no search: a move that wins at once, else the first move after which the opponent
  // cannot win at once, else the first legal move).
  std::string model = "uniform";
  int simulations = 0;  // 0: the raw policy's most probable move; N: MCTS, N playouts
  // Instead of the policy, the network's value one ply ahead (no search; simulations 0, a weights
  // file): the move after which the network values the position worst for the opponent, a move
  // that ends the game valued exactly. Beside the raw policy's share it tells which of the two
  // heads chooses better (docs/learning.md, "Which head misses").
  bool one_ply_value = false;
  // With simulations > 0: the root's rule, as self-play's (`--root-selection`): PUCT, or Gumbel
  // AlphaZero's sequential halving without its noise (the move self-play's search would train
  // toward), with sigma's scale `gumbel_c_scale` (scripts/run's Connect Four preset: 1.0).
  bool gumbel = false;
  float gumbel_c_scale = 0.1f;
  // With simulations > 0: PUCT's exploration constant below a Gumbel root, and at a PUCT root
  // too (self-play's `c-puct`; its default, 1.5).
  float c_puct = 1.5f;
  int threads = 1;  // LibTorch intra-op threads; 0: the process's setting is left alone
  // Which positions. A stored set (position_set.h): `positions_file`, or the shipped set named
  // `set` (ShippedSetPath: "small", "full"). Else, with `positions` > 0, that many positions from
  // seeded random play at plies [min_ply, max_ply], solved now (slow for Connect Four: ~80 s for
  // 400). Else every reachable position for an enumerable game (tic-tac-toe), and the shipped
  // "small" set for the others (Connect Four). At most one of the three may be given.
  std::string positions_file;
  std::string set;
  int positions = 0;
  int min_ply = 8;
  int max_ply = 30;
  std::uint64_t seed = 1;
  // Score the model as a player instead (enumerable games): the positions it faces when it plays
  // one side from the start, its own move in its positions and every reply of the opponent's, for
  // either side. Perfect play is a share of 1 here: no opponent can make it lose a won or drawn
  // game.
  bool as_player = false;
};

// The figures of a group of positions. A trivial position (every legal move keeps the value) is
// kept by any move, so the share over the non-trivial ones, (kept - trivial) / (positions -
// trivial), is the one that separates players; it is 0 when every position is trivial.
struct Tally {
  int positions = 0;
  int kept = 0;     // the model's move keeps the position's value
  int trivial = 0;  // every legal move keeps the value
  double share() const { return positions == 0 ? 0 : static_cast<double>(kept) / positions; }
  double nontrivial_share() const {
    return positions == trivial ? 0 : static_cast<double>(kept - trivial) / (positions - trivial);
  }
};

// The positions of one band of plies.
struct BandScore : Tally {
  int min_ply = 0;
  int max_ply = 0;
};

// The positions of a stored set reached by one kind of play (position_set.h's sources).
struct SourceScore : Tally {
  std::string source;  // "random", "strong", "mixed"
};

// The positions whose solver value for the side to move is one outcome: a model that keeps a win
// and one that keeps a draw are different skills (in a lost position every move keeps the value,
// so those are all trivial).
struct ValueScore : Tally {
  std::string value;  // one of kValueNames
};

// The names of the solver values for the side to move, indexed by 1 - value (+1 win, 0 draw,
// -1 loss): the order of ScoreReport::values and of its text lines.
inline constexpr std::string_view kValueNames[] = {"win", "draw", "loss"};

struct ScoreReport : Tally {
  std::string game;
  std::string model;
  int simulations = 0;
  bool one_ply_value = false;
  bool gumbel = false;
  float gumbel_c_scale = 0.0f;  // with gumbel
  float c_puct = 0.0f;          // with simulations > 0
  bool as_player = false;
  // Where the positions came from: a stored set's path, "reachable" (every reachable position),
  // "as-player", or "random N" (solved at run time).
  std::string set;
  std::vector<BandScore> bands;
  std::vector<SourceScore> sources;  // stored sets only, the sources present
  std::vector<ValueScore> values;    // the values present, in the order win, draw, loss
  double seconds = 0;
};

// Scores the model on the game's position set. INVALID_ARGUMENT for an unknown game, a game
// without a solver, options out of range or in conflict, or a stored set that is malformed or of
// another game; NOT_FOUND for a set file that is missing; the model's errors (NOT_FOUND,
// DATA_LOSS, FAILED_PRECONDITION when it is not a network of that game); the network's errors.
Result<ScoreReport> ScoreModel(const ScoreOptions& options);

// "score <game> positions N kept K (S%) trivial T non-trivial U% in X s [set]" ("score <game>
// one-ply-value positions ..." for ScoreOptions::one_ply_value), then a line per band, one per
// source and one per value.
std::string FormatReport(const ScoreReport& report);
// The same as one JSON object: game, model, simulations, one_ply_value, root_selection ("puct",
// "gumbel"), gumbel_c_scale (with gumbel), c_puct (with simulations > 0), as_player, set,
// positions, kept, share, trivial, nontrivial_share, seconds, bands (min_ply, max_ply and the
// tally: positions, kept, trivial, share, nontrivial_share), sources (source and the tally), values
// (value and the tally).
std::string ReportJson(const ScoreReport& report);

}  // namespace az::score
