#pragma once

// The learning curve inside a run (docs/learning.md): every published model's raw policy scored
// against the game's exact solver on the game's default benchmark (services/score: every position
// of tic-tac-toe, Connect Four's shipped small set) or a stored set named by the learner's
// `benchmark-set`, on a thread of its own so that training never waits for it; and a collapse
// watch that turns a falling benchmark or a value loss near zero into a warning (log, `status`,
// metrics, and the AzLearningCollapse alert).
//
//   SolverBenchmark bench("connect4", "full", [](const Result<BenchmarkResult>& r) { ... });
//   bench.Submit(7, "/run/models/model-7.azw");   // returns at once; the callback runs later
//
// Games without a solver (chess) have no benchmark: SolverBenchmark::Available says so.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "services/score/solver_score.h"

namespace az::learner {

struct BenchmarkResult {
  std::uint64_t model_version = 0;
  int positions = 0;
  int kept = 0;                 // positions where the model's move keeps the game's value
  int trivial = 0;              // positions where every move keeps it
  double share = 0;             // kept / positions
  double nontrivial_share = 0;  // (kept - trivial) / (positions - trivial)
  double seconds = 0;
  std::string set;  // which positions (a stored set's path, "reachable")
  // By the positions' solver value for the side to move, as the scorer splits them (kValueNames
  // order, only the values the set has): keeping a win and keeping a draw are different skills,
  // and a young network learns the draws last (docs/learning.md, "Where the misses are").
  std::vector<score::ValueScore> values;
};

// Scores submitted models one at a time on its own thread. When models come faster than they are
// scored, only the newest waiting one is scored (the others are skipped, counted in `skipped`).
// The callback runs on the benchmark's thread, with the result or the scorer's error (a model
// file already deleted: NOT_FOUND). The destructor finishes the model in hand and drops the rest.
class SolverBenchmark {
 public:
  using Callback = std::function<void(const Result<BenchmarkResult>&)>;

  // Whether `game` (a registered game's name) has a solver, and so a benchmark.
  static bool Available(const std::string& game);

  // `set`: a shipped set's name ("small", "full"), a set file (a path: it has a '/' or a '.'), or
  // empty for the game's default.
  SolverBenchmark(std::string game, std::string set, Callback callback);
  // Whether `set` (as above) can be scored for `game`: the file is found, parses, and is a set of
  // that game's positions. Checked at startup, so that a wrong name stops the learner at once.
  static Status CheckSet(const std::string& game, const std::string& set);
  SolverBenchmark(const SolverBenchmark&) = delete;
  SolverBenchmark& operator=(const SolverBenchmark&) = delete;
  ~SolverBenchmark();

  void Submit(std::uint64_t model_version, std::string path);
  // Blocks until nothing is waiting or being scored (tests).
  void WaitIdle();
  std::uint64_t skipped() const;

 private:
  void Work();

  const std::string game_;
  const std::string set_;
  const Callback callback_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::optional<std::pair<std::uint64_t, std::string>> waiting_;
  bool busy_ = false;
  bool stop_ = false;
  std::uint64_t skipped_ = 0;
  std::thread thread_;
};

// Decides when learning looks collapsed. Two signs, each a warning when it starts (and again after
// it has cleared and comes back):
//  - the benchmark share falls more than `max_drop` below the best share of the run so far (the
//    newest model plays worse than an older one did: the data narrowed, or training diverged);
//  - the value loss average stays below `min_value_loss` (the network predicts every outcome:
//    self-play settled into one result, as chess did when every game was a draw).
// Not thread-safe: the learner feeds it under its status lock.
class CollapseWatch {
 public:
  struct Options {
    double max_drop = 0.05;        // 0: this sign is off
    double min_value_loss = 0.01;  // 0: this sign is off
    std::uint64_t min_steps = 50;  // steps averaged before the value loss counts
  };

  explicit CollapseWatch(Options options) : options_(options) {}

  // A warning's text when this result starts the falling sign; nothing otherwise.
  std::optional<std::string> ObserveBenchmark(const BenchmarkResult& result);
  // A warning's text when this average starts the value-loss sign; nothing otherwise.
  std::optional<std::string> ObserveValueLoss(double value_loss_avg, std::uint64_t averaged_steps);

  bool benchmark_falling() const { return falling_; }
  bool value_loss_collapsed() const { return collapsed_; }
  bool suspected() const { return falling_ || collapsed_; }
  double best_share() const { return best_share_; }
  std::uint64_t best_model() const { return best_model_; }
  bool has_benchmark() const { return has_best_; }

 private:
  Options options_;
  bool has_best_ = false;
  double best_share_ = 0;
  std::uint64_t best_model_ = 0;
  bool falling_ = false;
  bool collapsed_ = false;
};

}  // namespace az::learner
