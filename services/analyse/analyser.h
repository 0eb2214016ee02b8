#pragma once

// az-analyse's work: for any registered game, one answer per position, from a network's raw
// policy or from MCTS (docs/analyse.md). A library so that tests and the learning benchmark run it
// in process.
//
//   AZ_ASSIGN_OR_RETURN(auto analyser, CreateAnalyser({.game = "connect4", .model = path}));
//   std::string answer = analyser->AnalyseLine("4453");  // "bestmove 4 value 0.1234 ..."
//
// Not thread-safe: one analyser per thread.

#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::analyse {

struct AnalyseOptions {
  std::string game = "connect4";  // a registered game's name
  std::string model = "uniform";  // a weights file, or "uniform" (every legal move alike, value 0)
  // 0: the raw policy's most probable legal move; N > 0: MCTS with N playouts, no root noise, the
  // most visited move.
  int simulations = 0;
  int threads = 1;      // LibTorch intra-op threads
  int batch = 8;        // leaves per network call within one search
  float fpu_base = -1;  // < 0: 1.0 with a model, 0 with the uniform evaluator (as az-search)
};

class Analyser {
 public:
  virtual ~Analyser() = default;
  // The answer for one input line, without a newline:
  //   bestmove <move> value <v> [visits <n>] [prior <p>]
  // where <move> is the game's text form of a move and <v> the value for the side to move in
  // [-1, 1] (the network's P(win) - P(loss) for the raw policy, the root's for a search); or
  //   error <reason>
  // when the line is not a position of the game, or the game is over in it. Never throws; a
  // network error is an error line too.
  virtual std::string AnalyseLine(std::string_view line) = 0;
};

// INVALID_ARGUMENT for an unknown game or options out of range; the model's errors (NOT_FOUND,
// DATA_LOSS, FAILED_PRECONDITION when it is not a network of that game).
Result<std::unique_ptr<Analyser>> CreateAnalyser(const AnalyseOptions& options);

// Reads `in` to its end, writes exactly one answer line per input line to `out`, in order, flushed
// per line (so a pipe gets answers as it goes). Returns how many lines got an error answer.
int AnalyseStream(Analyser& analyser, std::istream& in, std::ostream& out);

}  // namespace az::analyse
