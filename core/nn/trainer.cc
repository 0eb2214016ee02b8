#include "core/nn/trainer.h"

#include <torch/optim/optimizer.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <optional>
#include <sstream>

#include "core/nn/distributed.h"
#include "core/nn/torch_batch.h"
#include "core/nn/torch_distributed.h"
#include "core/nn/torch_loss.h"
#include "core/nn/torch_mirror.h"
#include "core/nn/torch_model.h"
#include "core/nn/torch_optim.h"
#include "core/nn/torch_runtime.h"
#include "core/nn/torch_weights.h"

namespace az::nn {

struct TrainerImpl {
  TrainerOptions options;
  torch::Device device{torch::kCPU};
  Autocast autocast = Autocast::kNone;
  AzNet model{nullptr};
  AzNet ema{nullptr};  // the weights' moving average, when options.ema_decay > 0
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::optional<DynamicLossScaler> scaler;
  double base_learning_rate = 0.0;
  TrainerCounters counters;
  // When the last step ended; none before this trainer's first step (or its first after a
  // restore), so a restart's downtime is not training time.
  std::optional<std::chrono::steady_clock::time_point> last_step_end;
};

namespace {

Status CheckPositive(std::string_view name, double value) {
  if (std::isfinite(value) && value > 0.0) return Status::Ok();
  return InvalidArgument("trainer: " + std::string(name) + " = " + std::to_string(value) +
                         " must be positive and finite");
}

Status CheckNonNegative(std::string_view name, double value) {
  if (std::isfinite(value) && value >= 0.0) return Status::Ok();
  return InvalidArgument("trainer: " + std::string(name) + " = " + std::to_string(value) +
                         " must be >= 0 and finite");
}

Result<std::unique_ptr<TrainerImpl>> BuildImpl(const TrainerOptions& options) {
  AZ_RETURN_IF_ERROR(options.Validate());
  auto impl = std::make_unique<TrainerImpl>();
  impl->options = options;
  impl->base_learning_rate = options.learning_rate;
  AZ_ASSIGN_OR_RETURN(impl->device, SelectDevice(options.runtime.device));
  impl->autocast = AutocastFor(impl->device, options.runtime);
  const bool scaling =
      options.loss_scaling == LossScalingMode::kOn ||
      (options.loss_scaling == LossScalingMode::kAuto && impl->autocast == Autocast::kCudaFp16);
  if (scaling) impl->scaler.emplace(options.loss_scaler);
  try {
    SetUpTensorProcess(options.runtime);
    impl->model = MakeModel(options.net, impl->device, options.runtime.channels_last);
    impl->model->train();
    if (options.mirror_equivariant) ProjectMirrorEquivariant(*impl->model);
    impl->optimizer = MakeOptimizer(options, *impl->model);
    if (options.ema_decay > 0.0) {
      impl->ema = MakeModel(options.net, impl->device, options.runtime.channels_last);
      CopyWeights(*impl->ema, *impl->model);
    }
  } catch (const std::exception& e) {
    return TorchErrorStatus("creating the trainer", e);
  }
  impl->counters.loss_scale = impl->scaler ? impl->scaler->scale() : 1.0;
  return impl;
}

std::vector<float> ToVector(const torch::Tensor& t) {
  const torch::Tensor cpu = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
  const float* p = cpu.data_ptr<float>();
  return std::vector<float>(p, p + cpu.numel());
}

// BatchNorm running statistics are updated by the forward pass itself; a skipped batch must not
// leave its (possibly NaN) statistics behind, so they are saved before and restored on a skip.
std::vector<torch::Tensor> SnapshotBuffers(torch::nn::Module& model) {
  std::vector<torch::Tensor> copies;
  for (const torch::Tensor& b : model.buffers()) copies.push_back(b.detach().clone());
  return copies;
}

void RestoreBuffers(torch::nn::Module& model, const std::vector<torch::Tensor>& copies) {
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (torch::Tensor& b : model.buffers()) b.copy_(copies[i++]);
}

// ema = d * ema + (1 - d) * model over parameters and floating-point buffers (BatchNorm's running
// statistics); integer buffers (the batch counter) are copied. The decay is smaller for the first
// steps (the window is ema_warmup_share of the steps so far) so that the initial weights fade.
void UpdateMovingAverage(TrainerImpl& impl) {
  torch::NoGradGuard no_grad;
  const double step = static_cast<double>(impl.counters.steps);
  const double d = std::min(impl.options.ema_decay,
                            1.0 - 1.0 / (1.0 + impl.options.ema_warmup_share * (1.0 + step)));
  const std::vector<torch::Tensor> params = impl.model->parameters();
  std::vector<torch::Tensor> averages = impl.ema->parameters();
  for (std::size_t i = 0; i < averages.size(); ++i) averages[i].mul_(d).add_(params[i], 1.0 - d);
  const std::vector<torch::Tensor> buffers = impl.model->buffers();
  std::vector<torch::Tensor> average_buffers = impl.ema->buffers();
  for (std::size_t i = 0; i < average_buffers.size(); ++i) {
    if (average_buffers[i].is_floating_point()) {
      average_buffers[i].mul_(d).add_(buffers[i], 1.0 - d);
    } else {
      average_buffers[i].copy_(buffers[i]);
    }
  }
}

// Ties the model and its moving average (weights loaded or grown from an untied network).
void TieMirror(TrainerImpl& impl) {
  ProjectMirrorEquivariant(*impl.model);
  if (impl.ema) ProjectMirrorEquivariant(*impl.ema);
}

// Data-parallel steps: one all-reduce per step of one float32 host tensor laid out as
// [failed ranks, loss, policy loss, value loss, policy accuracy, the gradients in parameters()
// order, the floating-point buffers (BatchNorm statistics) in buffers() order]. Every rank sends
// the same layout; summing, then dividing all but the count by the world size, averages them.
constexpr std::int64_t kGroupHeader = 5;

std::int64_t GroupTensorSize(AzNetImpl& model) {
  std::int64_t n = kGroupHeader;
  for (const torch::Tensor& p : model.parameters()) n += p.numel();
  for (const torch::Tensor& b : model.buffers()) {
    if (b.is_floating_point()) n += b.numel();
  }
  return n;
}

// A rank whose step failed before its all-reduce still takes part, counted as failed, so that the
// others skip the step rather than wait for it until the group's timeout.
Status JoinStepAsFailed(TrainerImpl& impl) {
  try {
    torch::Tensor flat = torch::zeros({GroupTensorSize(*impl.model)}, torch::kFloat);
    flat[0] = 1.0f;
    return AllReduceSum(*impl.options.group, flat);
  } catch (const std::exception& e) {
    return TorchErrorStatus("joining the group's step", e);
  }
}

struct GroupStep {
  double failed_ranks = 0;
  double loss = 0, policy_loss = 0, value_loss = 0, policy_accuracy = 0;  // the group's means
};

// Sums this rank's part of the step over the group and writes the averages back: gradients into
// `grads` (every parameter's, zeros where this rank has none), BatchNorm statistics into the model.
Result<GroupStep> ReduceStep(TrainerImpl& impl, const std::vector<torch::Tensor>& grads,
                             const torch::Tensor& local_means) {
  ProcessGroup& group = *impl.options.group;
  std::vector<torch::Tensor> buffers;
  for (const torch::Tensor& b : impl.model->buffers()) {
    if (b.is_floating_point()) buffers.push_back(b);
  }
  std::vector<torch::Tensor> parts;
  parts.reserve(grads.size() + buffers.size());
  for (const torch::Tensor& g : grads) parts.push_back(g.detach().reshape({-1}).to(torch::kFloat));
  for (const torch::Tensor& b : buffers)
    parts.push_back(b.detach().reshape({-1}).to(torch::kFloat));
  torch::Tensor header = torch::zeros({kGroupHeader}, torch::kFloat);
  header.narrow(0, 1, kGroupHeader - 1).copy_(local_means);
  torch::Tensor flat = torch::cat({header, torch::cat(parts).to(torch::kCPU)});
  AZ_RETURN_IF_ERROR(AllReduceSum(group, flat));
  const double world = static_cast<double>(group.world_size());
  const torch::Tensor sums = flat.narrow(0, 0, kGroupHeader).to(torch::kDouble);
  GroupStep step;
  step.failed_ranks = sums[0].item<double>();
  step.loss = sums[1].item<double>() / world;
  step.policy_loss = sums[2].item<double>() / world;
  step.value_loss = sums[3].item<double>() / world;
  step.policy_accuracy = sums[4].item<double>() / world;
  flat.narrow(0, kGroupHeader, flat.numel() - kGroupHeader).div_(world);
  std::int64_t offset = kGroupHeader;
  auto write_back = [&](const torch::Tensor& dst) {
    dst.copy_(flat.narrow(0, offset, dst.numel()).view(dst.sizes()));
    offset += dst.numel();
  };
  for (const torch::Tensor& g : grads) write_back(g);
  for (const torch::Tensor& b : buffers) write_back(b);
  return step;
}

CheckpointState StateOf(const TrainerImpl& impl, std::uint64_t model_version) {
  CheckpointState s;
  s.step = impl.counters.steps;
  s.model_version = model_version;
  s.train_seconds = impl.counters.train_seconds;
  s.skipped_nonfinite_loss = impl.counters.skipped_nonfinite_loss;
  s.skipped_nonfinite_gradient = impl.counters.skipped_nonfinite_gradient;
  if (impl.scaler) {
    s.loss_scale = impl.scaler->scale();
    s.scaler_good_steps = impl.scaler->good_steps();
    s.scaler_overflows = impl.scaler->overflows();
  }
  return s;
}

}  // namespace

Status TrainerOptions::Validate() const {
  AZ_RETURN_IF_ERROR(net.Validate());
  AZ_RETURN_IF_ERROR(runtime.Validate());
  AZ_RETURN_IF_ERROR(CheckNonNegative("learning_rate", learning_rate));
  if (warmup_steps < 0) return InvalidArgument("trainer: warmup_steps must be >= 0");
  if (decay_steps < 0) return InvalidArgument("trainer: decay_steps must be >= 0");
  AZ_RETURN_IF_ERROR(CheckNonNegative("decay_seconds", decay_seconds));
  if (decay_steps > 0 && decay_seconds > 0.0) {
    return InvalidArgument("trainer: decay the learning rate over steps or over seconds, not both");
  }
  AZ_RETURN_IF_ERROR(CheckNonNegative("min_learning_rate", min_learning_rate));
  AZ_RETURN_IF_ERROR(CheckNonNegative("weight_decay", weight_decay));
  if (!(adam_beta1 >= 0.0 && adam_beta1 < 1.0 && adam_beta2 >= 0.0 && adam_beta2 < 1.0)) {
    return InvalidArgument("trainer: Adam betas must lie in [0, 1)");
  }
  AZ_RETURN_IF_ERROR(CheckPositive("adam_eps", adam_eps));
  if (!(momentum >= 0.0 && momentum < 1.0)) {
    return InvalidArgument("trainer: momentum = " + std::to_string(momentum) +
                           " must lie in [0, 1)");
  }
  if (optimizer == OptimizerKind::kSgd && decoupled_weight_decay) {
    return InvalidArgument(
        "trainer: decoupled_weight_decay is AdamW's; SGD adds the decay to the gradient");
  }
  AZ_RETURN_IF_ERROR(CheckNonNegative("value_loss_weight", value_loss_weight));
  AZ_RETURN_IF_ERROR(CheckNonNegative("max_grad_norm", max_grad_norm));
  if (!(ema_decay >= 0.0 && ema_decay < 1.0)) {
    return InvalidArgument("trainer: ema_decay = " + std::to_string(ema_decay) +
                           " must lie in [0, 1)");
  }
  if (!(ema_warmup_share > 0.0 && ema_warmup_share <= 1.0)) {
    return InvalidArgument("trainer: ema_warmup_share = " + std::to_string(ema_warmup_share) +
                           " must lie in (0, 1]");
  }
  if (mirror_equivariant) AZ_RETURN_IF_ERROR(CheckMirrorable(net));
  return loss_scaler.Validate();
}

Status CheckMirrorable(const NetConfig& net) {
  if (net.policy_cell_plane < 0) {
    return InvalidArgument("mirror equivariance needs a network whose actions are columns (a " +
                           std::string("cell-read policy head, as Connect Four's); ") +
                           net.ToString() + " has a dense one");
  }
  if (net.filters % 2 != 0 || net.value_hidden % 2 != 0) {
    return InvalidArgument("mirror equivariance pairs channels: filters (" +
                           std::to_string(net.filters) + ") and value_hidden (" +
                           std::to_string(net.value_hidden) + ") must be even");
  }
  return Status::Ok();
}

std::string_view OptimizerKindName(OptimizerKind kind) {
  return kind == OptimizerKind::kSgd ? "sgd" : "adam";
}

std::string_view SkipReasonName(SkipReason reason) {
  switch (reason) {
    case SkipReason::kNone: return "none";
    case SkipReason::kNonFiniteLoss: return "non-finite loss";
    case SkipReason::kNonFiniteGradient: return "non-finite gradient";
    case SkipReason::kPeerFailed: return "another rank's step failed";
  }
  return "unknown";
}

Trainer::Trainer(std::unique_ptr<TrainerImpl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;

Result<std::unique_ptr<Trainer>> Trainer::Create(const TrainerOptions& options) {
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<TrainerImpl> impl, BuildImpl(options));
  return std::unique_ptr<Trainer>(new Trainer(std::move(impl)));
}

Result<TrainStepResult> Trainer::TrainStep(std::span<const TrainSample> samples,
                                           const EncodeFn& encode) {
  TrainerImpl& s = *impl_;
  const TrainerOptions& o = s.options;
  const bool cuda = s.device.is_cuda();
  Result<TrainBatch> built = BuildTrainBatch(samples, encode, o.net, o.runtime.input_layout, cuda);
  if (!built.ok()) {
    if (o.group != nullptr) AZ_RETURN_IF_ERROR(JoinStepAsFailed(s));
    return built.status();
  }
  TrainBatch& batch = *built;
  TrainStepResult result;
  TrainStepStats& stats = result.stats;
  std::vector<torch::Tensor> saved_buffers;
  bool joined_group = false;  // this rank's all-reduce for the step happened (or failed)
  try {
    const torch::Tensor x =
        batch.input.to(s.device, cuda)
            .contiguous(o.runtime.channels_last ? torch::MemoryFormat::ChannelsLast
                                                : torch::MemoryFormat::Contiguous);
    const torch::Tensor policy_target = batch.policy_target.to(s.device, cuda);
    const torch::Tensor wdl_target = batch.wdl_target.to(s.device, cuda);
    const torch::Tensor weight = batch.weight.to(s.device, cuda);

    saved_buffers = SnapshotBuffers(*s.model);
    s.model->train();
    s.optimizer->zero_grad();
    LossTerms terms;
    torch::Tensor top1_agrees;  // [n] bool
    {
      AutocastScope autocast(s.autocast);
      auto [policy_logits, wdl_logits] = s.model->Logits(x);
      terms =
          PerSampleLoss(policy_logits, wdl_logits, policy_target, wdl_target, o.value_loss_weight);
      top1_agrees = policy_logits.detach().argmax(1) == policy_target.argmax(1);
    }
    const torch::Tensor loss = WeightedMean(terms.total, weight);
    // One device-to-host transfer for the four means.
    const torch::Tensor means =
        torch::stack({loss.detach(), WeightedMean(terms.policy.detach(), weight),
                      WeightedMean(terms.value.detach(), weight),
                      top1_agrees.to(loss.scalar_type()).mean()})
            .to(torch::kCPU, torch::kDouble);
    stats.loss = means[0].item<double>();
    stats.policy_loss = means[1].item<double>();
    stats.value_loss = means[2].item<double>();
    stats.policy_accuracy = means[3].item<double>();
    result.loss = ToVector(terms.total);
    result.policy_loss = ToVector(terms.policy);
    result.value_loss = ToVector(terms.value);
    {
      // The time since the previous step counts as training unless the learner stood still.
      const auto now = std::chrono::steady_clock::now();
      if (s.last_step_end) {
        const double gap = std::chrono::duration<double>(now - *s.last_step_end).count();
        if (gap <= kMaxTrainSecondsGap) s.counters.train_seconds += gap;
      }
      s.last_step_end = now;
    }
    stats.learning_rate =
        ScheduledLearningRate(o, s.base_learning_rate, s.counters.steps, s.counters.train_seconds);
    stats.loss_scale = s.scaler ? s.scaler->scale() : 1.0;

    auto skip = [&](SkipReason reason) {
      stats.skipped = reason;
      s.optimizer->zero_grad();
      RestoreBuffers(*s.model, saved_buffers);
      if (reason == SkipReason::kNonFiniteLoss) ++s.counters.skipped_nonfinite_loss;
      if (reason == SkipReason::kNonFiniteGradient) ++s.counters.skipped_nonfinite_gradient;
      stats.step = s.counters.steps;
      s.counters.loss_scale = s.scaler ? s.scaler->scale() : 1.0;
      s.counters.scaler_overflows = s.scaler ? s.scaler->overflows() : 0;
    };
    const bool loss_finite = std::isfinite(stats.loss);
    if (!loss_finite && o.group == nullptr) {
      skip(SkipReason::kNonFiniteLoss);
      return result;
    }

    // In a group a rank with a non-finite loss has no gradient to give; it still takes part in
    // the all-reduce (its loss makes the group's loss non-finite, so every rank skips).
    if (loss_finite) (s.scaler ? loss * stats.loss_scale : loss).backward();
    std::vector<torch::Tensor> grads;
    for (const torch::Tensor& p : s.model->parameters()) {
      if (p.grad().defined()) {
        grads.push_back(p.grad());
      } else if (o.group != nullptr) {
        grads.push_back(torch::zeros_like(p));  // same layout on every rank
      }
    }
    torch::NoGradGuard no_grad;
    if (s.scaler) {
      for (torch::Tensor& g : grads) g.mul_(1.0 / stats.loss_scale);
    }
    if (o.group != nullptr) {
      joined_group = true;
      Result<GroupStep> group = ReduceStep(s, grads, means.to(torch::kFloat));
      if (!group.ok()) {
        s.optimizer->zero_grad();
        RestoreBuffers(*s.model, saved_buffers);
        return group.status();
      }
      stats.loss = group->loss;
      stats.policy_loss = group->policy_loss;
      stats.value_loss = group->value_loss;
      stats.policy_accuracy = group->policy_accuracy;
      if (group->failed_ranks > 0) {
        skip(SkipReason::kPeerFailed);
        return result;
      }
      if (!std::isfinite(stats.loss)) {
        skip(SkipReason::kNonFiniteLoss);
        return result;
      }
    }
    std::vector<torch::Tensor> norms;
    norms.reserve(grads.size());
    for (const torch::Tensor& g : grads) norms.push_back(g.norm(2).to(torch::kFloat));
    stats.grad_norm = torch::stack(norms).norm(2).item<double>();
    // In a group the averaged gradient is non-finite when any rank's was: all ranks agree.
    const bool finite = std::isfinite(stats.grad_norm);
    if (s.scaler) s.scaler->Update(!finite);
    if (!finite) {
      skip(SkipReason::kNonFiniteGradient);
      return result;
    }
    if (o.max_grad_norm > 0.0 && stats.grad_norm > o.max_grad_norm) {
      const double factor = o.max_grad_norm / (stats.grad_norm + 1e-6);
      for (torch::Tensor& g : grads) g.mul_(factor);
    }
    for (auto& group : s.optimizer->param_groups()) group.options().set_lr(stats.learning_rate);
    s.optimizer->step();
    if (o.mirror_equivariant) ProjectMirrorEquivariant(*s.model);
    if (s.ema) UpdateMovingAverage(s);
    ++s.counters.steps;
    stats.step = s.counters.steps;
    s.counters.loss_scale = s.scaler ? s.scaler->scale() : 1.0;
    s.counters.scaler_overflows = s.scaler ? s.scaler->overflows() : 0;
  } catch (const std::exception& e) {
    const Status error = TorchErrorStatus("training step", e);
    if (o.group != nullptr && !joined_group) {
      if (!saved_buffers.empty()) RestoreBuffers(*s.model, saved_buffers);
      s.optimizer->zero_grad();
      AZ_RETURN_IF_ERROR(JoinStepAsFailed(s));
    }
    return error;
  }
  return result;
}

Result<WeightsFileInfo> Trainer::SyncFromRoot(std::uint64_t model_version) {
  ProcessGroup* group = impl_->options.group;
  if (group == nullptr) return FailedPrecondition("trainer: SyncFromRoot needs a process group");
  // The checkpoint image is the one complete, tested serialisation of the trainer's state.
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("az-trainer-sync-" + std::to_string(::getpid()) + "-" + std::to_string(group->rank()) + "-" +
       std::string(group->generation()) + ".azc");
  struct Remove {
    std::filesystem::path path;
    ~Remove() {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  } remove{file};
  std::string image;
  if (group->rank() == 0) {
    AZ_RETURN_IF_ERROR(SaveCheckpoint(file.string(), model_version));
    std::ifstream in(file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in) return Internal("trainer: cannot read back " + file.string());
    image = std::move(bytes).str();
  }
  AZ_ASSIGN_OR_RETURN(image, group->BroadcastFromRoot(image));
  if (group->rank() == 0) {
    WeightsFileInfo info;
    info.kind = WeightsFileKind::kCheckpoint;
    info.net = impl_->options.net;
    info.model_version = model_version;
    info.train_step = impl_->counters.steps;
    return info;
  }
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(image.data(), static_cast<std::streamsize>(image.size()));
    if (!out.flush()) return FailedPrecondition("trainer: cannot write " + file.string());
  }
  return LoadCheckpoint(file.string());
}

Status Trainer::SaveWeights(const std::string& path, std::uint64_t model_version) const {
  AzNetImpl& published = impl_->ema ? *impl_->ema : *impl_->model;
  return SaveModelWeights(path, published, model_version, impl_->counters.steps);
}

Status Trainer::SaveCheckpoint(const std::string& path, std::uint64_t model_version) const {
  return az::nn::SaveCheckpoint(path, *impl_->model, *impl_->optimizer,
                                StateOf(*impl_, model_version),
                                impl_->ema ? impl_->ema.get() : nullptr);
}

Result<WeightsFileInfo> Trainer::LoadCheckpoint(const std::string& path) {
  // Into a fresh model and optimizer, swapped in only on success: a failure halfway through the
  // optimizer state cannot leave this trainer half-restored.
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<TrainerImpl> fresh, BuildImpl(impl_->options));
  AZ_ASSIGN_OR_RETURN(CheckpointState state,
                      az::nn::LoadCheckpoint(path, *fresh->model, *fresh->optimizer,
                                             fresh->ema ? fresh->ema.get() : nullptr));
  if (fresh->options.mirror_equivariant) TieMirror(*fresh);
  fresh->base_learning_rate = impl_->base_learning_rate;
  fresh->counters.steps = state.step;
  fresh->counters.train_seconds = state.train_seconds;
  fresh->counters.skipped_nonfinite_loss = state.skipped_nonfinite_loss;
  fresh->counters.skipped_nonfinite_gradient = state.skipped_nonfinite_gradient;
  if (fresh->scaler) {
    fresh->scaler->Restore(state.loss_scale, state.scaler_good_steps, state.scaler_overflows);
    fresh->counters.loss_scale = fresh->scaler->scale();
    fresh->counters.scaler_overflows = fresh->scaler->overflows();
  }
  impl_ = std::move(fresh);
  WeightsFileInfo info;
  info.kind = WeightsFileKind::kCheckpoint;
  info.net = impl_->options.net;
  info.model_version = state.model_version;
  info.train_step = state.step;
  return info;
}

Status Trainer::Deepen(std::int32_t blocks) {
  const TrainerOptions& o = impl_->options;
  if (o.group != nullptr) {
    return FailedPrecondition("trainer: a rank of a data-parallel group cannot grow its network");
  }
  if (blocks <= o.net.blocks) {
    return InvalidArgument("trainer: cannot deepen a " + o.net.ToString() + " network to " +
                           std::to_string(blocks) + " blocks");
  }
  TrainerOptions deeper = o;
  deeper.net.blocks = blocks;
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<TrainerImpl> fresh, BuildImpl(deeper));
  try {
    DeepenInto(*fresh->model, *impl_->model);
    if (fresh->ema) DeepenInto(*fresh->ema, *impl_->ema);
    if (deeper.mirror_equivariant) TieMirror(*fresh);
  } catch (const std::exception& e) {
    return TorchErrorStatus("deepening the network", e);
  }
  fresh->base_learning_rate = impl_->base_learning_rate;
  fresh->counters = impl_->counters;
  fresh->last_step_end = impl_->last_step_end;
  fresh->scaler = impl_->scaler;
  impl_ = std::move(fresh);
  return Status::Ok();
}

Status Trainer::LoadWeights(const std::string& path) {
  AZ_RETURN_IF_ERROR(LoadModelWeights(path, *impl_->model).status());
  if (impl_->options.mirror_equivariant) ProjectMirrorEquivariant(*impl_->model);
  if (impl_->ema) CopyWeights(*impl_->ema, *impl_->model);
  return Status::Ok();
}

double ScheduledLearningRate(const TrainerOptions& o, double base, std::uint64_t steps_taken,
                             double train_seconds) {
  const double step = static_cast<double>(steps_taken);
  double lr = base;
  if (o.decay_steps > 0 || o.decay_seconds > 0.0) {
    const double t =
        std::min(1.0, o.decay_steps > 0 ? step / static_cast<double>(o.decay_steps)
                                        : std::max(0.0, train_seconds) / o.decay_seconds);
    const double floor = std::min(o.min_learning_rate, base);
    lr = floor + (base - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * t));
  }
  if (o.warmup_steps > 0) lr *= std::min(1.0, (step + 1.0) / static_cast<double>(o.warmup_steps));
  return lr;
}

void Trainer::SetLearningRate(double learning_rate) {
  AZ_CHECK(std::isfinite(learning_rate) && learning_rate >= 0.0, "learning rate must be >= 0");
  impl_->base_learning_rate = learning_rate;
}

TrainerCounters Trainer::counters() const { return impl_->counters; }
const TrainerOptions& Trainer::options() const { return impl_->options; }
std::string Trainer::DeviceName() const { return impl_->device.str(); }
bool Trainer::UsesLossScaling() const { return impl_->scaler.has_value(); }
bool Trainer::UsesBf16() const { return impl_->autocast == Autocast::kCpuBf16; }

}  // namespace az::nn
