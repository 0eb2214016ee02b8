#pragma once

// az-search's work, apart from flag parsing: searches one chess position and prints the root's
// moves with their visit counts, most visited first, and last `bestmove <uci>`. Without a model the
// evaluator is uniform (equal priors, value 0) and the search finds short tactics by itself.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "core/base/status.h"
#include "core/chess/position.h"
#include "core/mcts/options.h"

namespace az::search_tool {

struct SearchToolOptions {
  std::string fen = std::string(chess::kStartFen);
  int simulations = 800;   // visits below the root, >= 1
  std::string model_path;  // a weights file (core/nn); empty: the uniform evaluator
  int batch = 16;          // leaves per evaluator call
  float risk_beta = 0.0f;
  // Default: the 1.0 with a model; 0 without one, because the FPU reduction trusts the
  // priors and uniform priors carry no information (docs/mcts.md has the measurements).
  std::optional<float> fpu_base;
  mcts::VirtualLoss virtual_loss = mcts::VirtualLoss::kLoss;  // spreads one tree's batch
  int threads = 1;  // LibTorch intra-op threads when a model is used
};

// Runs the search and writes to `out`:
//   info <key> <value> ...                                  (simulations, time, value, WDL)
//   <uci> visits <N> policy <N/sum> prior <P> q <Q>         one line per root move
//   bestmove <uci>
// For a position where the game is over: "info terminal <reason>" and "bestmove 0000".
// INVALID_ARGUMENT for a bad FEN or option; the model's load errors (NOT_FOUND, DATA_LOSS,
// FAILED_PRECONDITION); the evaluator's errors. Blocks for the whole search.
Status RunSearchTool(const SearchToolOptions& options, std::ostream& out);

}  // namespace az::search_tool
