#pragma once

// The learner's Prometheus metrics (docs/learner.md, "Metrics"). This file alone turns the training
// loop's reports into metrics; nothing else sees prometheus-cpp.

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace az::learner {

// Why a sampled batch was not trained on (the label of az_learner_skipped_batches_total).
enum class SkipKind {
  kNonFiniteLoss,      // the weighted loss was NaN or inf
  kNonFiniteGradient,  // a gradient was
  kNoValidSamples,     // every record of the batch was malformed
  kTrainError,         // the trainer refused the batch or LibTorch failed
};
std::string_view SkipKindName(SkipKind kind);

// One optimizer step that was taken.
struct StepReport {
  std::uint64_t step = 0;  // the trainer's optimizer steps after this one
  double loss = 0;
  double policy_loss = 0;
  double value_loss = 0;
  double grad_norm = 0;
  double learning_rate = 0;
  double beta = 0;
  std::uint64_t samples = 0;          // trained on in this step
  double sample_seconds = 0;          // waiting for and receiving the batch
  double train_seconds = 0;           // decode, TrainStep
  std::span<const double> staleness;  // per sample: model versions behind the learner's
};

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
  void SetWaiting(bool waiting);  // 1 while the replay daemon cannot serve a batch

 private:
  struct Families;
  std::unique_ptr<Families> m_;
};

}  // namespace az::learner
