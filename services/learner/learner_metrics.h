#pragma once

// The learner's Prometheus metrics (docs/learner.md, "Metrics"). This file alone turns the training
// loop's reports (loop/learner_loop.h: StepReport, SkipKind) into metrics; nothing else sees
// prometheus-cpp.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "services/learner/loop/learner_loop.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace az::learner {

class LearnerMetrics {
 public:
  explicit LearnerMetrics(prometheus::Registry& registry);
  ~LearnerMetrics();

  void ObserveStep(const StepReport& report);
  void CountSkipped(SkipKind kind);
  void CountMalformed(std::uint64_t records);
  void CountPriorityUpdates(std::uint64_t applied, std::uint64_t stale, std::uint64_t rejected);
  void CountPriorityFailure();
  void ObserveCheckpoint(double seconds);
  void ObservePublish(std::uint64_t model_version);
  // The step and model version a run starts from (restored from a checkpoint, or 0).
  void SetRestored(std::uint64_t step, std::uint64_t model_version);
  void CountRollback();
  void SetBeta(double beta);
  void SetSamplesPerSecond(double rate);
  void SetWaiting(bool waiting);
  // This learner's rank and the group's world size (1 for a single learner).
  void SetGroup(int rank, int world_size);  // 1 while the replay daemon cannot serve a batch
  // A published model's solver benchmark (solver_benchmark.h), and the run's best so far.
  void ObserveBenchmark(std::uint64_t model_version, double share, double nontrivial_share,
                        double best_share);
  // The same model's share by the positions' solver value ("win", "draw", "loss").
  void ObserveBenchmarkValue(std::string_view value, double share);
  void CountBenchmarkFailure();
  // The collapse watch's signs, and a warning raised (reason: benchmark_drop or value_loss).
  void SetCollapse(bool benchmark_falling, bool value_loss_collapsed);
  void CountCollapseWarning(std::string_view reason);

 private:
  struct Families;
  std::unique_ptr<Families> m_;
};

}  // namespace az::learner
