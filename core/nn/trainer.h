#pragma once

// Training behind a torch-free facade, for the learner. One TrainStep: build the batch from compact
// samples (the encoder writes straight into the input tensor), forward in train mode, per-sample
// loss (core/nn/torch_loss.h), L = mean(w_i * L_i), backward, Adam (or SGD with Nesterov momentum)
// with weight decay on conv and linear weights only, optional gradient clipping. A batch whose loss
// or gradients are not finite is skipped (no update) and counted. On CUDA with fp16, dynamic loss
// scaling (core/nn/loss_scaler.h) guards the fp16 gradients; on CPU training is fp32. Not
// thread-safe.
//
// Data-parallel training (TrainerOptions::group, docs/scaling.md): every rank runs TrainStep on
// its own batch of the same size; after the backward, one all-reduce per step averages the
// gradients and BatchNorm's running statistics over the ranks (one flattened tensor) and carries
// each rank's loss and a "this rank failed" count, so every rank clips, skips or steps alike. A
// non-finite loss or gradient on any rank makes every rank skip the step. SyncFromRoot makes every
// rank's state (weights, optimizer, moving average, counters) rank 0's.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/nn/loss_scaler.h"
#include "core/nn/net_config.h"
#include "core/nn/sample.h"
#include "core/nn/weights_file.h"

namespace az::nn {

enum class LossScalingMode : std::uint8_t {
  kAuto,  // on exactly when training runs in fp16 (CUDA with cuda_fp16)
  kOn,    // always, fp32 included (how tests exercise it on CPU)
  kOff,
};

class ProcessGroup;  // core/nn/distributed.h

enum class OptimizerKind : std::uint8_t {
  kAdam,  // Adam, or AdamW with decoupled_weight_decay
  kSgd,   // SGD with Nesterov momentum, as AlphaZero, Leela and KataGo train
};
std::string_view OptimizerKindName(OptimizerKind kind);  // "adam", "sgd"

struct TrainerOptions {
  NetConfig net;
  RuntimeOptions runtime;
  double learning_rate = 1e-3;
  std::int64_t warmup_steps = 0;  // linear learning-rate warm-up from lr / warmup_steps
  // Cosine decay of the learning rate from lr to min_learning_rate over decay_steps optimizer
  // steps (counted from the first), then min_learning_rate for good; 0: constant lr.
  std::int64_t decay_steps = 0;
  // The same cosine over this many seconds of training instead (TrainerCounters::train_seconds),
  // for runs of a fixed length in time on machines of unknown speed; 0: off. At most one of
  // decay_steps and decay_seconds.
  double decay_seconds = 0.0;
  double min_learning_rate = 0.0;
  double weight_decay = 1e-4;  // conv and linear weights only
  OptimizerKind optimizer = OptimizerKind::kAdam;
  // Adam only. false: Adam with L2 weight decay added to the gradient (the issue's "Adam with
  // weight decay"); true: AdamW's decoupled decay.
  bool decoupled_weight_decay = false;
  double momentum = 0.9;  // SGD only: Nesterov momentum, [0, 1)
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_eps = 1e-8;
  double value_loss_weight = 1.0;
  double max_grad_norm = 0.0;  // > 0: clip the total gradient norm; 0: no clipping
  // > 0: keep an exponential moving average of the weights (BatchNorm statistics included),
  // updated after every step with decay min(ema_decay, 1 - 1 / (1 + ema_warmup_share * (1 +
  // step))), and publish it (SaveWeights) instead of the raw weights; training itself goes on with
  // the raw weights. The average is in checkpoints too. 0: off. Must be < 1.
  double ema_decay = 0.0;
  // Until ema_decay's window (1 / (1 - ema_decay) steps) is reached, the average spans about this
  // share of the steps taken so far, so that it forgets the initial weights. 1/9 is TensorFlow's
  // (1 + step) / (10 + step); larger shares smooth the first minutes more and lag more. (0, 1].
  double ema_warmup_share = 1.0 / 9.0;
  // Tie the weights so that the network is exactly equivariant under the board's left-right mirror
  // (core/nn/torch_mirror.h): projected onto the tied weights at creation, after every optimizer
  // step and after loading weights. Needs a cell-read policy head and even filters and value
  // hidden units (Connect Four's network).
  bool mirror_equivariant = false;
  LossScalingMode loss_scaling = LossScalingMode::kAuto;
  LossScalerOptions loss_scaler;
  // Borrowed, optional: the data-parallel group this trainer is a rank of (must outlive the
  // trainer). nullptr: a single trainer, nothing distributed.
  ProcessGroup* group = nullptr;

  // INVALID_ARGUMENT naming the first bad field.
  Status Validate() const;
};

enum class SkipReason : std::uint8_t {
  kNone,
  kNonFiniteLoss,      // the weighted loss was NaN or inf: no backward, no update
  kNonFiniteGradient,  // a gradient was NaN or inf (with loss scaling: the scale backs off)
  kPeerFailed,         // data-parallel: another rank's step failed (refused batch, LibTorch error)
};
std::string_view SkipReasonName(SkipReason reason);

// OK when `net` can be tied under the left-right mirror (TrainerOptions::mirror_equivariant): a
// cell-read policy head, even filters and value_hidden; else INVALID_ARGUMENT saying which.
Status CheckMirrorable(const NetConfig& net);

struct TrainStepStats {
  double loss = 0.0;         // mean(w_i * L_i): what the step minimised
  double policy_loss = 0.0;  // mean(w_i * L_policy,i)
  double value_loss = 0.0;   // mean(w_i * L_value,i)
  // The share of the batch's samples whose highest policy logit is the target's most likely move
  // (lc0's "policy accuracy"; unweighted, ties to the lower index): how well the policy fits the
  // search that trains it. In a group, the group's mean.
  double policy_accuracy = 0.0;
  double grad_norm = 0.0;  // total L2 norm of the (unscaled) gradients before clipping
  double learning_rate = 0.0;
  double loss_scale = 1.0;  // the scale used for this step
  SkipReason skipped = SkipReason::kNone;
  std::uint64_t step = 0;  // optimizer steps taken so far, this one included
};

struct TrainStepResult {
  // Unweighted per-sample losses, in sample order: L_i (the new priorities), and its parts. Filled
  // for skipped batches too (they may then hold NaN or inf: do not use them as priorities).
  std::vector<float> loss;
  std::vector<float> policy_loss;
  std::vector<float> value_loss;
  TrainStepStats stats;
};

// A gap between two steps longer than this (a paused learner, one starved of data, a restart)
// adds nothing to TrainerCounters::train_seconds.
inline constexpr double kMaxTrainSecondsGap = 60.0;

struct TrainerCounters {
  std::uint64_t steps = 0;
  // Wall-clock seconds of training: the time between consecutive steps, gaps over
  // kMaxTrainSecondsGap left out; carried in checkpoints, so a restarted learner goes on counting.
  double train_seconds = 0.0;
  std::uint64_t skipped_nonfinite_loss = 0;
  std::uint64_t skipped_nonfinite_gradient = 0;
  double loss_scale = 1.0;
  std::int64_t scaler_overflows = 0;
};

// The learning rate of the step after `steps_taken` optimizer steps and `train_seconds` of
// training: `base` (the lr, or what SetLearningRate set), decayed by the cosine schedule (over
// steps or seconds) and scaled by the warm-up.
double ScheduledLearningRate(const TrainerOptions& options, double base, std::uint64_t steps_taken,
                             double train_seconds = 0.0);

struct TrainerImpl;  // defined in trainer.cc

class Trainer {
 public:
  // INVALID_ARGUMENT for bad options, FAILED_PRECONDITION when CUDA is requested but missing. Sets
  // the intra-op thread count and seeds the initialisation with runtime.seed.
  static Result<std::unique_ptr<Trainer>> Create(const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One optimizer step on `samples`; encode(i, dst) writes sample i's input (see sample.h).
  // INVALID_ARGUMENT for a malformed sample (the message names it; nothing is changed);
  // RESOURCE_EXHAUSTED / INTERNAL if LibTorch fails. A skipped batch is not an error: see
  // stats.skipped. Blocks for the whole step (device work included).
  // With a group: every rank must call it once per step (a rank whose batch is refused or fails
  // still takes part, so the others skip with kPeerFailed instead of waiting); the stats' loss,
  // policy_loss, value_loss and grad_norm are then the group's (the per-sample losses stay this
  // rank's). UNAVAILABLE when the group failed (a rank died or timed out: nothing is changed, and
  // the group is of no further use); that code means nothing else here.
  Result<TrainStepResult> TrainStep(std::span<const TrainSample> samples, const EncodeFn& encode);

  // The model's weights, for the evaluator (atomic replace): the moving average when ema_decay > 0.
  // I/O errors as WriteWeightsFile.
  Status SaveWeights(const std::string& path, std::uint64_t model_version) const;
  // Model + optimizer + step + counters + loss-scaler state (+ the moving average), atomically.
  Status SaveCheckpoint(const std::string& path, std::uint64_t model_version) const;
  // Restores a checkpoint of the same shapes; returns its header info (model_version, train_step).
  // A checkpoint without a moving average (written with ema_decay 0, or before it existed) starts
  // the average from the restored weights. On any error the trainer is unchanged. Errors as
  // core/nn/torch_weights.h LoadCheckpoint.
  Result<WeightsFileInfo> LoadCheckpoint(const std::string& path);
  // Starts from published weights (optimizer state and counters are kept; the moving average
  // restarts from them). Errors as above.
  Status LoadWeights(const std::string& path);

  // Grows the network to `blocks` residual blocks (more than it has): the new blocks come after
  // the old ones and start as identities (DeepenInto, core/nn/torch_model.h), so the network and
  // its moving average compute what they did; the counters, the learning-rate schedule's position
  // and the loss scaler carry on; the optimizer starts afresh over the new parameters (its momentum
  // or moments rebuild within a few dozen steps). options().net has the new depth from then on, so
  // checkpoints and weights are written with it. INVALID_ARGUMENT when `blocks` is not deeper,
  // FAILED_PRECONDITION in a data-parallel group (its ranks would have to grow at the same step);
  // on any error the trainer is unchanged.
  Status Deepen(std::int32_t blocks);

  // Data-parallel: makes this rank's whole state (weights, BatchNorm statistics, optimizer, moving
  // average, step and counters) rank 0's, through a checkpoint image broadcast from rank 0.
  // Collective: every rank calls it at the same point. Returns rank 0's image header (its
  // model_version argument, its step). FAILED_PRECONDITION without a group; UNAVAILABLE when the
  // group fails; errors as SaveCheckpoint / LoadCheckpoint (rank 0's failing to write leaves the
  // others waiting until the group's timeout).
  Result<WeightsFileInfo> SyncFromRoot(std::uint64_t model_version);

  // The base learning rate (before warm-up) from the next step on; must be >= 0 and finite.
  void SetLearningRate(double learning_rate);

  TrainerCounters counters() const;
  const TrainerOptions& options() const;
  std::string DeviceName() const;
  bool UsesLossScaling() const;
  // True when training steps run under CPU bf16 autocast (RuntimeOptions::cpu_bf16 on the CPU).
  bool UsesBf16() const;

 private:
  explicit Trainer(std::unique_ptr<TrainerImpl> impl);
  std::unique_ptr<TrainerImpl> impl_;
};

}  // namespace az::nn
