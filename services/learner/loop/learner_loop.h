#pragma once

// The learner's training loop (docs/learner.md, "One step") over a BatchSource (batch_source.h):
//
//   beta   = schedule(step)                       linear, by learner steps or samples drawn
//   batch  = source.Sample(B, beta, model)        records, (slot, generation), P(i), w_i
//   valid  = decode and validate each record      malformed ones dropped and counted
//   L      = trainer.TrainStep(valid, w)          L = mean(w_i (L_policy,i + L_value,i))
//   source.Withdraw((slot, generation)) for the malformed      never drawn again until overwritten
//   source.UpdatePriorities((slot, generation, L_i))          unless the source samples uniformly
//   every publish_every steps: hooks.WriteCheckpoint(kPublish), then hooks.PublishModel(); every
//   checkpoint_every steps (when not a publish step): hooks.WriteCheckpoint(kPeriodic)
//
// A published model is always one the learner can resume from (its checkpoint is written first),
// so a learner killed at any moment loses at most the steps since its last publish.
//
// While the source cannot serve, a step waits (the source's own timeout), logs once and then every
// 10 s, and reports kWaiting; an error that comes back at once is followed by a pause
// (retry_pause). A batch whose loss or gradients are not finite is skipped with no priorities sent
// (its malformed records are still withdrawn); after rollback_after_skips of them in a row the loop
// asks its owner to restore the newest checkpoint (hooks.Rollback()). A batch the trainer refuses
// or fails on is skipped too; max_train_errors_in_a_row failures in a row end the loop.
//
// Data-parallel (parts.group, docs/scaling.md): every rank runs this loop on its own source. After
// sampling, the ranks agree (one small all-reduce) whether every rank has a batch and whether any
// was asked to stop or pause; only then do they train, together (the trainer's own all-reduce), so
// a rank waiting for its batch never leaves another stuck in a collective. A batch drawn while a
// peer has none is dropped (no priorities; it is drawn again later). A stop on any rank stops all
// (kStopped); a pause on any rank pauses all (kPaused). The publish and checkpoint cadence follows
// the trainer's step, which is the same on every rank: the hooks decide what each rank writes.
// A failed collective (a rank died or timed out: UNAVAILABLE) ends the loop.
//
// The service (services/learner/learner_app.h) owns the trainer, the source and the files; it
// drives Step, turns each StepOutcome into metrics and `status`, and serves control commands
// between steps. Not thread-safe: one thread calls Step.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/nn/distributed.h"
#include "core/nn/trainer.h"
#include "core/replay/beta_schedule.h"
#include "services/learner/loop/batch_source.h"
#include "services/learner/loop/training_batch.h"

namespace az::learner {

// Why a sampled batch was not trained on (the label of az_learner_skipped_batches_total).
enum class SkipKind {
  kNonFiniteLoss,      // the weighted loss was NaN or inf
  kNonFiniteGradient,  // a gradient was
  kNoValidSamples,     // every record of the batch was malformed
  kTrainError,         // the trainer refused the batch or LibTorch failed
  kPeerFailed,         // data-parallel: another rank's step failed, so the group skipped it
};
std::string_view SkipKindName(SkipKind kind);

// One optimizer step that was taken.
struct StepReport {
  std::uint64_t step = 0;  // the trainer's optimizer steps after this one
  double loss = 0;
  double policy_loss = 0;
  double value_loss = 0;
  double policy_accuracy = 0;  // TrainStepStats::policy_accuracy
  double grad_norm = 0;
  double learning_rate = 0;
  double beta = 0;
  std::uint64_t samples = 0;          // trained on in this step
  double sample_seconds = 0;          // waiting for and receiving the batch
  double train_seconds = 0;           // decode, TrainStep
  std::span<const double> staleness;  // per sample: model versions behind the learner's (valid
                                      // until the next Step)
};

struct LearnerLoopOptions {
  std::uint32_t batch = 256;                       // records per batch, >= 1
  std::chrono::milliseconds sample_timeout{1000};  // BatchRequest::timeout
  std::uint64_t max_steps = 0;                     // Done() from this optimizer step on; 0: never
  std::uint64_t publish_every = 100;               // steps between models, >= 1
  std::uint64_t checkpoint_every = 1000;           // steps between periodic checkpoints; 0: none
  int rollback_after_skips = 20;       // non-finite batches in a row before a rollback; 0: never
  int max_train_errors_in_a_row = 10;  // trainer failures in a row that end the loop, >= 1
  std::chrono::milliseconds retry_pause{1000};  // after a sample error that came back at once

  // INVALID_ARGUMENT naming the first field out of range.
  Status Validate() const;
};

// A checkpoint restored by a rollback.
struct RestoredCheckpoint {
  std::uint64_t step = 0;  // the trainer's optimizer steps after loading
  std::string path;
};

enum class CheckpointReason : std::uint8_t { kPeriodic, kPublish };
std::string_view CheckpointReasonName(CheckpointReason why);  // "periodic", "publish"

// What the loop asks of its owner, on the loop's thread: the model version it trains against, and
// the files it writes at the points the options set.
class LearnerLoopHooks {
 public:
  virtual ~LearnerLoopHooks() = default;
  // The newest published model version; nullopt before the first.
  virtual std::optional<std::uint64_t> model_version() const = 0;
  // Publishes the trainer's weights as the next model. An error ends the loop (Step returns it).
  virtual Status PublishModel() = 0;
  // Writes a checkpoint of the trainer: kPublish just before PublishModel (the checkpoint holds
  // the model about to be published), kPeriodic between publishes. An error ends the loop.
  virtual Status WriteCheckpoint(CheckpointReason why) = 0;
  // Restores the newest checkpoint into the trainer; nullopt when there is none. An error ends the
  // loop.
  virtual Result<std::optional<RestoredCheckpoint>> Rollback() = 0;
};

// What the loop works with; borrowed: each must outlive the loop.
struct LearnerLoopParts {
  nn::Trainer* trainer = nullptr;
  BatchDecoder* decoder = nullptr;  // the game's; must fit the trainer's network
  BatchSource* source = nullptr;
  LearnerLoopHooks* hooks = nullptr;
  // Polled while the loop pauses after a failed sample: true ends the pause at once (a shutdown).
  // Optional. In a group it is this rank's vote to stop the group.
  std::function<bool()> interrupted;
  // Data-parallel: the group this loop's trainer is a rank of (the trainer's options.group);
  // nullptr for a single learner. Borrowed.
  nn::ProcessGroup* group = nullptr;
  // In a group: this rank's vote to pause the group (the `pause` command). Optional.
  std::function<bool()> paused;
};

// What one Step did, for the owner's metrics and status.
struct StepOutcome {
  enum class Kind {
    kTrained,  // an optimizer step was taken (report)
    kWaiting,  // no batch came (waiting_for says why)
    kSkipped,  // a batch came but was not trained on (skipped says why)
    kStopped,  // group only: a rank was asked to stop, so every rank stops (the owner returns)
    kPaused,   // group only: a rank is paused, so none trains (the owner waits a little)
  };
  Kind kind = Kind::kWaiting;
  Status waiting_for;  // kWaiting: the source's error, or the decoder's for another game's records
  SkipKind skipped = SkipKind::kNoValidSamples;  // kSkipped
  Status train_error;                            // kSkipped with kTrainError: the trainer's error
  std::size_t drawn = 0;                         // records sampled
  std::size_t malformed = 0;                     // of them, dropped by validation
  bool priorities_sent = false;                  // an update went to the source
  replay::UpdateCounts priority_counts;          // its answer
  Status priority_error;                         // or why it got none
  std::size_t withdrawn = 0;                     // malformed records the source withdrew
  std::optional<RestoredCheckpoint> rolled_back_to;
  bool published = false;     // hooks.PublishModel() was called after this step
  bool checkpointed = false;  // hooks.WriteCheckpoint() was (at every publish, and periodic ones)
  StepReport report;          // kTrained
  double next_beta = 0;       // the beta the next step samples with
};

// Totals since the loop was created.
struct LearnerLoopCounters {
  std::uint64_t steps = 0;  // optimizer steps taken by this loop
  std::uint64_t samples_drawn = 0;
  std::uint64_t samples_trained = 0;
  std::uint64_t malformed = 0;
  std::uint64_t waits = 0;  // steps without a batch
  std::uint64_t skipped_nonfinite = 0;
  std::uint64_t skipped_no_valid = 0;
  std::uint64_t skipped_train_error = 0;
  std::uint64_t rollbacks = 0;
  std::uint64_t skipped_peer_failed = 0;  // group: another rank's step failed
  std::uint64_t batches_dropped = 0;      // group: drawn while another rank had none
  std::uint64_t priority_updates_sent = 0;
  std::uint64_t priority_updates_failed = 0;  // sent, no answer
  std::uint64_t priorities_applied = 0;       // per record, as the source counted them
  std::uint64_t priorities_stale = 0;
  std::uint64_t priorities_rejected = 0;
  std::uint64_t withdrawn = 0;  // malformed records the source withdrew
  std::uint64_t models_published = 0;
  std::uint64_t checkpoints_written = 0;
};

class LearnerLoop {
 public:
  // INVALID_ARGUMENT for options out of range or a missing part; FAILED_PRECONDITION when the
  // decoder's game does not fit the trainer's network.
  static Result<std::unique_ptr<LearnerLoop>> Create(const LearnerLoopOptions& options,
                                                     const replay::BetaSchedule& beta,
                                                     LearnerLoopParts parts);

  LearnerLoop(const LearnerLoop&) = delete;
  LearnerLoop& operator=(const LearnerLoop&) = delete;

  // One iteration: sample, decode, train, send priorities, then publish and checkpoint when due.
  // Blocks for the sample (up to sample_timeout plus the source's transport deadline, plus
  // retry_pause after an error that came back at once) and the training step. Returns what
  // happened; an error only for what the loop cannot go on from: a hook's error,
  // max_train_errors_in_a_row trainer failures in a row, or (in a group) UNAVAILABLE when a
  // collective failed. In a group, also blocks up to the group's timeout for the other ranks.
  Result<StepOutcome> Step();

  // True once the trainer has taken max_steps optimizer steps (never when max_steps is 0).
  bool Done() const;
  // The beta the next step samples with.
  double NextBeta() const;
  const LearnerLoopCounters& counters() const { return counters_; }

 private:
  LearnerLoop(const LearnerLoopOptions& options, const replay::BetaSchedule& beta,
              LearnerLoopParts parts)
      : options_(options), beta_(beta), parts_(std::move(parts)) {}
  StepOutcome Waiting(const Status& why);
  void PauseAfterError();
  // Withdraws the batch's malformed records, then sends `losses` (none when empty) as the valid
  // records' priorities.
  void SendPriorities(std::span<const replay::SampledSlot> draws, std::span<const float> losses,
                      StepOutcome& out);
  Status MaybeRollback(StepOutcome& out);
  // Group only: sums (no batch, stop, pause) votes over the ranks.
  struct GroupVotes {
    bool everyone_has_a_batch = false;
    bool stop = false;
    bool pause = false;
  };
  Result<GroupVotes> Vote(bool have_batch);

  LearnerLoopOptions options_;
  replay::BetaSchedule beta_;
  LearnerLoopParts parts_;
  LearnerLoopCounters counters_;

  int skipped_in_a_row_ = 0;
  int train_errors_in_a_row_ = 0;
  bool waiting_ = false;
  bool group_paused_ = false;  // a rank voted to pause in the last step
  std::chrono::steady_clock::time_point wait_started_;
  std::chrono::steady_clock::time_point wait_logged_;
  DecodedBatch decoded_;
  std::vector<double> weights_;
  std::vector<double> staleness_;
  std::vector<replay::PriorityUpdate> updates_;
  std::vector<replay::RecordKey> withdrawals_;
};

}  // namespace az::learner
