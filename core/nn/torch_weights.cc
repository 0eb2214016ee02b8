#include "core/nn/torch_weights.h"

#include <torch/optim/sgd.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <sstream>
#include <vector>

#include "core/nn/torch_runtime.h"
#include "core/nn/trainer.h"

namespace az::nn {
namespace {

// The optimizer family a checkpoint records: Adam and AdamW keep the same state, SGD another.
std::string OptimizerFamily(const torch::optim::Optimizer& optimizer) {
  return std::string(OptimizerKindName(dynamic_cast<const torch::optim::SGD*>(&optimizer) != nullptr
                                           ? OptimizerKind::kSgd
                                           : OptimizerKind::kAdam));
}

// "p0", "p1", ... for parameters, "b0", ... for buffers.
std::string Key(char prefix, std::int64_t i) {
  std::string key(1, prefix);
  key += std::to_string(i);
  return key;
}

void WriteModel(torch::nn::Module& model, torch::serialize::OutputArchive& archive) {
  torch::NoGradGuard no_grad;
  std::int64_t i = 0;
  for (const torch::Tensor& p : model.parameters()) {
    archive.write(Key('p', i++), p.detach().cpu().contiguous());
  }
  i = 0;
  for (const torch::Tensor& b : model.buffers()) {
    archive.write(Key('b', i++), b.detach().cpu().contiguous(), /*is_buffer=*/true);
  }
}

// Reads every tensor first and checks its shape and dtype, then copies: a bad file leaves the model
// untouched.
Status ReadModel(torch::nn::Module& model, torch::serialize::InputArchive& archive,
                 const std::string& name) {
  const auto params = model.named_parameters();
  const auto buffers = model.named_buffers();
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (destination, source)
  auto read_all = [&](const auto& named, char prefix) -> Status {
    std::int64_t i = 0;
    for (const auto& item : named) {
      const std::string key = Key(prefix, i++);
      torch::Tensor t;
      if (!archive.try_read(key, t)) {
        return DataLoss(name + " lacks tensor " + key + " (" + item.key() + ")");
      }
      if (t.sizes() != item.value().sizes() || t.scalar_type() != item.value().scalar_type()) {
        std::ostringstream msg;
        msg << name << ": tensor " << item.key() << " is " << t.sizes() << " " << t.scalar_type()
            << " in the file, " << item.value().sizes() << " " << item.value().scalar_type()
            << " in this network";
        return FailedPrecondition(msg.str());
      }
      copies.emplace_back(item.value(), std::move(t));
    }
    return Status::Ok();
  };
  AZ_RETURN_IF_ERROR(read_all(params, 'p'));
  AZ_RETURN_IF_ERROR(read_all(buffers, 'b'));
  torch::NoGradGuard no_grad;
  // copy_ keeps the destination's device and memory format.
  for (auto& [dst, src] : copies) dst.copy_(src);
  return Status::Ok();
}

Result<std::string> ToBytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream out;
  archive.save_to(out);
  return std::move(out).str();
}

void WriteState(const CheckpointState& s, torch::serialize::OutputArchive& archive) {
  const std::vector<std::int64_t> ints = {static_cast<std::int64_t>(s.step),
                                          static_cast<std::int64_t>(s.model_version),
                                          static_cast<std::int64_t>(s.skipped_nonfinite_loss),
                                          static_cast<std::int64_t>(s.skipped_nonfinite_gradient),
                                          s.scaler_good_steps,
                                          s.scaler_overflows};
  archive.write("counters", torch::tensor(ints, torch::kLong));
  archive.write("loss_scale", torch::tensor({s.loss_scale}, torch::kDouble));
  archive.write("train_seconds", torch::tensor({s.train_seconds}, torch::kDouble));
}

Result<CheckpointState> ReadState(torch::serialize::InputArchive& archive,
                                  const std::string& name) {
  torch::Tensor counters, scale;
  if (!archive.try_read("counters", counters) || !archive.try_read("loss_scale", scale) ||
      counters.numel() != 6 || counters.scalar_type() != torch::kLong || scale.numel() != 1 ||
      scale.scalar_type() != torch::kDouble) {
    return DataLoss(name + " lacks the trainer state (counters, loss scale)");
  }
  counters = counters.cpu();
  const auto* c = counters.data_ptr<std::int64_t>();
  CheckpointState s;
  s.step = static_cast<std::uint64_t>(c[0]);
  s.model_version = static_cast<std::uint64_t>(c[1]);
  s.skipped_nonfinite_loss = static_cast<std::uint64_t>(c[2]);
  s.skipped_nonfinite_gradient = static_cast<std::uint64_t>(c[3]);
  s.scaler_good_steps = c[4];
  s.scaler_overflows = c[5];
  s.loss_scale = scale.cpu().item<double>();
  if (!(s.loss_scale > 0.0)) return DataLoss(name + " holds a non-positive loss scale");
  torch::Tensor seconds;  // absent before the time-based learning-rate schedule: 0
  if (archive.try_read("train_seconds", seconds)) {
    if (seconds.numel() != 1 || seconds.scalar_type() != torch::kDouble) {
      return DataLoss(name + " holds a malformed train_seconds");
    }
    s.train_seconds = seconds.cpu().item<double>();
    if (!(std::isfinite(s.train_seconds) && s.train_seconds >= 0.0)) {
      return DataLoss(name + " holds a negative or non-finite train_seconds");
    }
  }
  return s;
}

Result<WeightsFileContents> ReadVerified(const std::string& path, const NetConfig& expected) {
  AZ_ASSIGN_OR_RETURN(WeightsFileContents contents, ReadWeightsFile(path));
  AZ_RETURN_IF_ERROR(CheckSameShapes(contents.info.net, expected, path));
  return contents;
}

}  // namespace

Status SaveModelWeights(const std::string& path, AzNetImpl& model, std::uint64_t model_version,
                        std::uint64_t train_step) {
  std::string payload;
  try {
    torch::serialize::OutputArchive root, model_archive;
    WriteModel(model, model_archive);
    root.write("model", model_archive);
    AZ_ASSIGN_OR_RETURN(payload, ToBytes(root));
  } catch (const std::exception& e) {
    return TorchErrorStatus("serialising weights for " + path, e);
  }
  WeightsFileInfo info;
  info.kind = WeightsFileKind::kWeights;
  info.net = model.config();
  info.model_version = model_version;
  info.train_step = train_step;
  return WriteWeightsFile(path, info, payload);
}

Result<WeightsFileInfo> LoadModelWeights(const std::string& path, AzNetImpl& model) {
  AZ_ASSIGN_OR_RETURN(WeightsFileContents contents, ReadVerified(path, model.config()));
  try {
    torch::serialize::InputArchive root, model_archive;
    root.load_from(contents.payload.data(), contents.payload.size(), torch::Device(torch::kCPU));
    if (!root.try_read("model", model_archive)) return DataLoss(path + " holds no model weights");
    AZ_RETURN_IF_ERROR(ReadModel(model, model_archive, path));
  } catch (const std::exception& e) {
    return TorchErrorStatus("loading weights from " + path, e).WithContext("corrupt payload?");
  }
  return contents.info;
}

Status SaveCheckpoint(const std::string& path, AzNetImpl& model, torch::optim::Optimizer& optimizer,
                      const CheckpointState& state, AzNetImpl* ema) {
  std::string payload;
  try {
    torch::serialize::OutputArchive root, model_archive, optimizer_archive, trainer_archive;
    WriteModel(model, model_archive);
    if (ema != nullptr) {
      torch::serialize::OutputArchive ema_archive;
      WriteModel(*ema, ema_archive);
      root.write("ema", ema_archive);
    }
    optimizer.save(optimizer_archive);
    WriteState(state, trainer_archive);
    root.write("model", model_archive);
    root.write("optimizer", optimizer_archive);
    root.write("optimizer_kind", c10::IValue(OptimizerFamily(optimizer)));
    root.write("trainer", trainer_archive);
    AZ_ASSIGN_OR_RETURN(payload, ToBytes(root));
  } catch (const std::exception& e) {
    return TorchErrorStatus("serialising checkpoint for " + path, e);
  }
  WeightsFileInfo info;
  info.kind = WeightsFileKind::kCheckpoint;
  info.net = model.config();
  info.model_version = state.model_version;
  info.train_step = state.step;
  return WriteWeightsFile(path, info, payload);
}

Result<CheckpointState> LoadCheckpoint(const std::string& path, AzNetImpl& model,
                                       torch::optim::Optimizer& optimizer, AzNetImpl* ema) {
  AZ_ASSIGN_OR_RETURN(WeightsFileContents contents, ReadVerified(path, model.config()));
  if (contents.info.kind != WeightsFileKind::kCheckpoint) {
    return FailedPrecondition(path + " is a " +
                              std::string(WeightsFileKindName(contents.info.kind)) +
                              " file, not a checkpoint: it has no optimizer state");
  }
  try {
    // The optimizer state must live where the parameters do.
    const torch::Device device = model.parameters().front().device();
    torch::serialize::InputArchive root, model_archive, optimizer_archive, trainer_archive;
    root.load_from(contents.payload.data(), contents.payload.size(), device);
    if (!root.try_read("model", model_archive) || !root.try_read("optimizer", optimizer_archive) ||
        !root.try_read("trainer", trainer_archive)) {
      return DataLoss(path + " lacks the model, optimizer or trainer section");
    }
    c10::IValue kind_value;
    const std::string kind =
        root.try_read("optimizer_kind", kind_value) ? kind_value.toStringRef() : "adam";
    if (kind != OptimizerFamily(optimizer)) {
      return FailedPrecondition(path + " holds " + kind + " optimizer state; this trainer uses " +
                                OptimizerFamily(optimizer) +
                                " (train with the checkpoint's optimizer, or start a new run)");
    }
    AZ_ASSIGN_OR_RETURN(CheckpointState state, ReadState(trainer_archive, path));
    AZ_RETURN_IF_ERROR(ReadModel(model, model_archive, path));
    optimizer.load(optimizer_archive);
    if (ema != nullptr) {
      torch::serialize::InputArchive ema_archive;
      if (root.try_read("ema", ema_archive)) {
        AZ_RETURN_IF_ERROR(ReadModel(*ema, ema_archive, path + " (moving average)"));
      } else {
        CopyWeights(*ema, model);
      }
    }
    return state;
  } catch (const std::exception& e) {
    return TorchErrorStatus("loading checkpoint " + path, e);
  }
}

void CopyWeights(AzNetImpl& dst, AzNetImpl& src) {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> from = src.parameters();
  const std::vector<torch::Tensor> to = dst.parameters();
  for (std::size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
  const std::vector<torch::Tensor> from_buffers = src.buffers();
  const std::vector<torch::Tensor> to_buffers = dst.buffers();
  for (std::size_t i = 0; i < to_buffers.size(); ++i) to_buffers[i].copy_(from_buffers[i]);
}

}  // namespace az::nn
