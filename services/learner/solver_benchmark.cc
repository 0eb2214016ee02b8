#include "services/learner/solver_benchmark.h"

#include <cstdio>
#include <utility>

#include "core/games/registry.h"
#include "services/score/solver_score.h"

namespace az::learner {
namespace {

std::string Percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * share);
  return text;
}

// The scorer's options for `set` (SolverBenchmark's constructor says what it may be).
score::ScoreOptions SetOptions(const std::string& game, const std::string& set) {
  score::ScoreOptions options{.game = game, .threads = 0};
  if (set.find_first_of("/.") != std::string::npos) {
    options.positions_file = set;
  } else {
    options.set = set;
  }
  return options;
}

}  // namespace

bool SolverBenchmark::Available(const std::string& game) {
  Result<const games::GameInfo*> info = games::FindGame(game);
  return info.ok() && (*info)->has_solver;
}

Status SolverBenchmark::CheckSet(const std::string& game, const std::string& set) {
  if (set.empty()) return Status::Ok();
  // The first legal move on every position: reads and checks the whole set, no network needed.
  Result<score::ScoreReport> report = score::ScoreModel(SetOptions(game, set));
  return report.ok() ? Status::Ok() : report.status().WithContext("benchmark-set " + set);
}

SolverBenchmark::SolverBenchmark(std::string game, std::string set, Callback callback)
    : game_(std::move(game)),
      set_(std::move(set)),
      callback_(std::move(callback)),
      thread_([this] { Work(); }) {}

SolverBenchmark::~SolverBenchmark() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SolverBenchmark::Submit(std::uint64_t model_version, std::string path) {
  {
    std::lock_guard lock(mutex_);
    if (waiting_) ++skipped_;
    waiting_.emplace(model_version, std::move(path));
  }
  wake_.notify_all();
}

void SolverBenchmark::WaitIdle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return !waiting_ && !busy_; });
}

std::uint64_t SolverBenchmark::skipped() const {
  std::lock_guard lock(mutex_);
  return skipped_;
}

void SolverBenchmark::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || waiting_; });
    if (stop_) break;
    const auto [version, path] = std::move(*waiting_);
    waiting_.reset();
    busy_ = true;
    lock.unlock();
    // threads 0: the learner's own LibTorch thread setting stays as it is.
    score::ScoreOptions options = SetOptions(game_, set_);
    options.model = path;
    Result<score::ScoreReport> report = score::ScoreModel(options);
    Result<BenchmarkResult> result = BenchmarkResult{};
    if (!report.ok()) {
      result = report.status();
    } else {
      result = BenchmarkResult{.model_version = version,
                               .positions = report->positions,
                               .kept = report->kept,
                               .trivial = report->trivial,
                               .share = report->share(),
                               .nontrivial_share = report->nontrivial_share(),
                               .seconds = report->seconds,
                               .set = report->set,
                               .values = report->values};
    }
    callback_(result);
    lock.lock();
    busy_ = false;
    if (!waiting_) idle_.notify_all();
  }
  busy_ = false;
  waiting_.reset();
  idle_.notify_all();
}

std::optional<std::string> CollapseWatch::ObserveBenchmark(const BenchmarkResult& result) {
  if (!has_best_ || result.share > best_share_) {
    has_best_ = true;
    best_share_ = result.share;
    best_model_ = result.model_version;
  }
  const bool falling = options_.max_drop > 0 && result.share < best_share_ - options_.max_drop;
  const bool started = falling && !falling_;
  falling_ = falling;
  if (!started) return std::nullopt;
  return "learning may be collapsing: model " + std::to_string(result.model_version) +
         " keeps the solver's value in " + Percent(result.share) + " of the benchmark, " +
         Percent(best_share_ - result.share) + " below model " + std::to_string(best_model_) +
         "'s " + Percent(best_share_) +
         " (the data may have narrowed: see docs/learning.md on the buffer and temperature)";
}

std::optional<std::string> CollapseWatch::ObserveValueLoss(double value_loss_avg,
                                                           std::uint64_t averaged_steps) {
  if (options_.min_value_loss <= 0 || averaged_steps < options_.min_steps) return std::nullopt;
  const bool collapsed = value_loss_avg < options_.min_value_loss;
  const bool started = collapsed && !collapsed_;
  collapsed_ = collapsed;
  if (!started) return std::nullopt;
  char figures[64];
  std::snprintf(figures, sizeof figures, "%.4f, below %.4g", value_loss_avg,
                options_.min_value_loss);
  return std::string("learning may be collapsing: the value loss averages ") + figures +
         ": the network predicts every outcome, so self-play has likely settled into one result "
         "(every game drawn, or one side always winning)";
}

}  // namespace az::learner
