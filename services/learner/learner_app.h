#pragma once

// The learner as an object (docs/learner.md): draws prioritized batches from the replay daemon,
// trains the network on them with importance weights, sends the per-sample losses back as new
// priorities, anneals beta, checkpoints and publishes models. The training step is the library
// loop/learner_loop.h over a ReplayBatchSource (replay_batch_source.h); this class owns the
// trainer, the checkpoint directory and the publisher (the loop's hooks), the control server, the
// metrics and `status`. main.cc parses the configuration, calls Create and Run; tests may do the
// same in process.
//
//   AZ_ASSIGN_OR_RETURN(auto app, LearnerApp::Create(config));
//   return app->Run();   // until `shutdown`, Stop() (SIGTERM), --max-steps, or a fatal error
//
// One step: sample (batch, beta) -> validate records (malformed ones dropped, counted, and
// withdrawn from the buffer) -> TrainStep with the weights -> update-priorities (slot, generation,
// loss; not when the daemon samples uniformly) -> beta for the next step. Every --publish-every
// steps the weights become model N+1
// (<model-dir>/model-N.azw, event "model"); every --checkpoint-every steps, on `checkpoint` and at
// shutdown the trainer is checkpointed. While the replay daemon cannot serve (below its minimum
// size, rate-limited, down or restarting) the loop waits, says so in the log every few seconds and
// in `status`, and goes on when it can.
//
// Games with an exact solver also score every --benchmark-every-th published model against it on a
// thread of their own (solver_benchmark.h): the run's learning curve in the log, `status`
// ("benchmark") and the metrics, watched for collapse together with the value loss.
//
// Data-parallel (--world-size > 1, docs/scaling.md): the learner joins the group before anything
// trains, every rank takes rank 0's state (restored checkpoint included), and the loop trains in
// step with the other ranks. Only rank 0 checkpoints, publishes and runs the benchmark; a failed
// collective ends Run with UNAVAILABLE (main exits 1: the supervisor restarts the rank).
//
// Commands: checkpoint (writes one now, answers with its path and step), plus the built-in status
// (step, beta, lr, last losses, samples/s, model version, what the loop is doing), pause (stops
// stepping after the step in hand), resume, shutdown, commands.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/nn/distributed.h"
#include "core/nn/trainer.h"
#include "core/replay/beta_schedule.h"
#include "ipc/server.h"
#include "services/common/metrics_exporter.h"
#include "services/learner/checkpoints.h"
#include "services/learner/learner_config.h"
#include "services/learner/learner_metrics.h"
#include "services/learner/loop/learner_loop.h"
#include "services/learner/loop/training_batch.h"
#include "services/learner/model_publisher.h"
#include "services/learner/replay_batch_source.h"
#include "services/learner/solver_benchmark.h"

namespace az::learner {

class LearnerApp : private LearnerLoopHooks {
 public:
  // The learning curve, in the run directory: one JSON line a scored model (time_unix_ms, model,
  // step: the learner's step when the score came in, kept, positions, share, nontrivial_share,
  // set), appended across restarts; scripts/learning-curve summarises it (docs/learning.md).
  static constexpr std::string_view kCurveFile = "benchmark.jsonl";

  // Builds the trainer, restores the newest valid checkpoint (unless there is none), binds the
  // control endpoint, the events endpoint and the metrics port; nothing trains yet. `config` must
  // have been finalised (FinalizeConfig). Errors: ALREADY_EXISTS when another learner serves this
  // service name in the run directory; DATA_LOSS when checkpoints exist but none loads;
  // FAILED_PRECONDITION with --no-resume over existing checkpoints, or CUDA asked for but missing;
  // UNAVAILABLE for ports that cannot be bound.
  static Result<std::unique_ptr<LearnerApp>> Create(const LearnerConfig& config);

  LearnerApp(const LearnerApp&) = delete;
  LearnerApp& operator=(const LearnerApp&) = delete;
  ~LearnerApp() override;

  // Trains until `shutdown`, Stop() or --max-steps, then finishes the step in hand, writes a
  // checkpoint and returns OK. Publishes model 0 (the initial weights) first when no model was
  // ever published in this run directory. Returns an error only for what training cannot go on
  // from (a checkpoint or model that cannot be written, LibTorch failing on every batch). Call
  // once.
  Status Run();
  // Asks Run() to return after the step in hand. Thread-safe; may be called before Run().
  void Stop();

  const std::string& endpoint() const { return server_->endpoint(); }
  int metrics_port() const { return exporter_ ? exporter_->port() : 0; }

 private:
  // What `status` shows; written by the loop, read on the server's thread.
  struct Snapshot {
    std::string activity = "starting";
    std::string device;
    std::string net;  // the trainer's network now (it changes when it grows)
    std::uint64_t step = 0;
    double beta = 0;
    double learning_rate = 0;
    double train_minutes = 0;  // the trainer's train_seconds / 60
    double loss = 0;
    double policy_loss = 0;
    double value_loss = 0;
    double policy_accuracy = 0;  // TrainStepStats::policy_accuracy of the last step
    double grad_norm = 0;
    // Exponential moving averages over about 50 steps: the trend, without one batch's noise.
    double loss_avg = 0;
    double policy_loss_avg = 0;
    double value_loss_avg = 0;
    double policy_accuracy_avg = 0;
    std::uint64_t averaged_steps = 0;
    // The plain mean of this process's first steps (kLossAverageSteps of them), kept: the
    // starting point of the trend.
    double initial_loss = 0;
    double initial_policy_loss = 0;
    double initial_value_loss = 0;
    double samples_per_second = 0;
    std::uint64_t samples_trained = 0;
    std::uint64_t samples_drawn = 0;
    std::uint64_t malformed = 0;
    std::uint64_t malformed_withdrawn = 0;
    std::uint64_t skipped_nonfinite = 0;
    std::uint64_t skipped_other = 0;
    std::uint64_t rollbacks = 0;
    std::uint64_t priority_updates_applied = 0;
    std::uint64_t priority_updates_stale = 0;
    std::int64_t model_version = -1;
    std::string model_path;
    std::string checkpoint_path;
    std::uint64_t checkpoint_step = 0;
    std::string resumed_from;
    std::string last_error;
    // The newest solver benchmark (benchmark_model < 0: none yet) and the collapse watch's
    // newest warning.
    std::int64_t benchmark_model = -1;
    BenchmarkResult benchmark;
    std::string collapse_warning;
  };

  explicit LearnerApp(const LearnerConfig& config) : config_(config) {}
  // Rank 0 of a group, or a single learner: the one that checkpoints and publishes.
  bool IsRoot() const { return config_.rank == 0; }
  Status Restore();
  // --grow-blocks: deepens the trainer once its training time reaches --grow-at-minutes, and
  // checkpoints the grown network at once, so that a restart or a rollback resumes it.
  Status MaybeGrow();
  // Group only, collective: every rank takes rank 0's trainer state and newest model version.
  Status SyncGroup(std::string_view why);
  void RegisterCommands();
  nlohmann::json StatusJson();

  // Turns what a loop step did into metrics and `status`.
  void Record(const StepOutcome& outcome);
  // LearnerLoopHooks.
  std::optional<std::uint64_t> model_version() const override;
  Status PublishModel() override;
  Status WriteCheckpoint(CheckpointReason why) override;
  Result<std::optional<RestoredCheckpoint>> Rollback() override;

  // Checkpoints the trainer, recording `model_version` (default: the newest published).
  Result<std::string> SaveCheckpoint(std::string_view why,
                                     std::optional<std::uint64_t> model_version = std::nullopt);
  // The version the next PublishModel gives.
  std::uint64_t NextModelVersion() const;
  void ServeCheckpointRequests();
  void LogProgress(bool force);
  void UpdateRate();
  // On the benchmark's thread: a model's score into status, metrics, the log and the watch.
  void RecordBenchmark(const Result<BenchmarkResult>& result);
  void AppendToCurve(const BenchmarkResult& r);                            // under status_mutex_
  void WarnCollapse(std::string_view reason, const std::string& warning);  // under status_mutex_

  LearnerConfig config_;
  // The data-parallel group (world size > 1), before the trainer that borrows it.
  std::unique_ptr<nn::ProcessGroup> group_;
  std::unique_ptr<nn::Trainer> trainer_;
  std::unique_ptr<BatchDecoder> decoder_;
  std::optional<replay::BetaSchedule> beta_;
  std::optional<CheckpointDir> checkpoints_;
  std::unique_ptr<ModelPublisher> publisher_;
  std::unique_ptr<ReplayBatchSource> source_;
  std::unique_ptr<LearnerLoop> loop_;
  std::unique_ptr<service::MetricsExporter> exporter_;
  std::unique_ptr<LearnerMetrics> metrics_;
  std::unique_ptr<ipc::Server> server_;

  std::atomic<bool> stop_{false};
  std::mutex checkpoint_mutex_;
  std::deque<ipc::Responder> checkpoint_requests_;

  std::mutex status_mutex_;
  Snapshot snapshot_;
  CollapseWatch collapse_{{}};       // under status_mutex_
  bool curve_write_failed_ = false;  // under status_mutex_: warned once

  // The loop's own.
  std::int64_t model_version_ = -1;  // newest published; -1: none yet
  std::uint64_t checkpointed_step_ = 0;
  bool has_checkpoint_ = false;
  std::chrono::steady_clock::time_point last_log_;
  std::chrono::steady_clock::time_point last_rate_;
  std::uint64_t samples_at_last_rate_ = 0;
  std::uint64_t samples_at_last_log_ = 0;
  std::uint64_t step_at_last_log_ = 0;

  // Last, so that it stops first: its thread calls RecordBenchmark, which uses the rest.
  std::unique_ptr<SolverBenchmark> benchmark_;
};

}  // namespace az::learner
