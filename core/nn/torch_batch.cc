#include "core/nn/torch_batch.h"

#include <cmath>
#include <string>

namespace az::nn {
namespace {

std::string SampleError(std::size_t i, const std::string& what) {
  return "training sample " + std::to_string(i) + ": " + what;
}

torch::MemoryFormat FormatOf(InputLayout layout) {
  return layout == InputLayout::kNhwc ? torch::MemoryFormat::ChannelsLast
                                      : torch::MemoryFormat::Contiguous;
}

}  // namespace

torch::Tensor NewInputTensor(const NetConfig& net, std::int64_t n, InputLayout layout,
                             bool pinned) {
  AZ_CHECK(n > 0, "a batch needs at least one position");
  return torch::empty({n, net.input_planes, net.board_height, net.board_width},
                      torch::TensorOptions()
                          .dtype(torch::kFloat)
                          .pinned_memory(pinned)
                          .memory_format(FormatOf(layout)));
}

void CheckFillableInput(const torch::Tensor& input, std::int64_t n) {
  AZ_CHECK(n > 0 && input.dim() == 4 && input.size(0) == n,
           "input tensor does not hold n positions");
  AZ_CHECK(input.device().is_cpu() && input.scalar_type() == torch::kFloat,
           "input tensor must be float32 on the CPU");
  AZ_CHECK(input.is_contiguous(torch::MemoryFormat::ChannelsLast) ||
               input.is_contiguous(torch::MemoryFormat::Contiguous),
           "input tensor must be dense NHWC or NCHW (made by NewInputTensor)");
}

torch::Tensor WrapInput(const float* data, std::int64_t n, const NetConfig& net,
                        InputLayout layout) {
  AZ_CHECK(data != nullptr && n > 0, "WrapInput needs a buffer and n > 0");
  const std::int64_t c = net.input_planes, h = net.board_height, w = net.board_width;
  std::vector<std::int64_t> strides;
  if (layout == InputLayout::kNhwc) {
    strides = {h * w * c, 1, w * c, c};
  } else {
    strides = {c * h * w, h * w, w, 1};
  }
  // from_blob wants a mutable pointer; the tensor is only ever read.
  return torch::from_blob(const_cast<float*>(data), {n, c, h, w}, strides,
                          torch::TensorOptions().dtype(torch::kFloat));
}

Result<torch::Tensor> DensePolicyTargets(std::span<const TrainSample> samples,
                                         std::int32_t policy_size) {
  const auto n = static_cast<std::int64_t>(samples.size());
  torch::Tensor target = torch::zeros({n, policy_size}, torch::kFloat);
  float* data = target.data_ptr<float>();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    float* row = data + static_cast<std::int64_t>(i) * policy_size;
    double sum = 0.0;
    for (const PolicyEntry& e : samples[i].policy) {
      if (e.action < 0 || e.action >= policy_size) {
        return InvalidArgument(SampleError(i, "policy action " + std::to_string(e.action) +
                                                  " is outside [0, " + std::to_string(policy_size) +
                                                  ")"));
      }
      if (!std::isfinite(e.weight) || e.weight < 0.0f) {
        return InvalidArgument(SampleError(i, "policy weight " + std::to_string(e.weight) +
                                                  " for action " + std::to_string(e.action) +
                                                  " is negative or not finite"));
      }
      row[e.action] += e.weight;
      sum += e.weight;
    }
    if (!(sum > 0.0)) {
      return InvalidArgument(SampleError(i, "policy target is empty or sums to zero"));
    }
    const auto inv = static_cast<float>(1.0 / sum);
    for (const PolicyEntry& e : samples[i].policy) row[e.action] = 0.0f;
    // Second pass over the sparse entries only: normalise without touching the dense row.
    for (const PolicyEntry& e : samples[i].policy) row[e.action] += e.weight * inv;
  }
  return target;
}

Result<torch::Tensor> WdlTargets(std::span<const TrainSample> samples) {
  const auto n = static_cast<std::int64_t>(samples.size());
  torch::Tensor target = torch::empty({n, 3}, torch::kFloat);
  float* data = target.data_ptr<float>();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Wdl& wdl = samples[i].wdl;
    double sum = 0.0;
    for (float p : wdl) {
      if (!std::isfinite(p) || p < 0.0f) {
        return InvalidArgument(SampleError(i, "WDL target has a negative or non-finite entry"));
      }
      sum += p;
    }
    if (std::fabs(sum - 1.0) > 1e-3) {
      return InvalidArgument(
          SampleError(i, "WDL target sums to " + std::to_string(sum) + ", not 1"));
    }
    for (int k = 0; k < 3; ++k) data[i * 3 + k] = wdl[k];
  }
  return target;
}

Result<torch::Tensor> ImportanceWeights(std::span<const TrainSample> samples) {
  const auto n = static_cast<std::int64_t>(samples.size());
  torch::Tensor weight = torch::empty({n}, torch::kFloat);
  float* data = weight.data_ptr<float>();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const float w = samples[i].importance_weight;
    if (!std::isfinite(w) || w <= 0.0f) {
      return InvalidArgument(SampleError(
          i, "importance weight " + std::to_string(w) + " is not a positive finite number"));
    }
    data[i] = w;
  }
  return weight;
}

Result<torch::Tensor> LegalMask(const LegalMovesView& legal, std::int64_t n,
                                std::int32_t policy_size) {
  if (static_cast<std::int64_t>(legal.offsets.size()) != n + 1 || legal.offsets[0] != 0 ||
      legal.offsets[n] != static_cast<std::int64_t>(legal.actions.size())) {
    return InvalidArgument("legal moves: offsets must hold n + 1 = " + std::to_string(n + 1) +
                           " entries from 0 to the number of actions");
  }
  torch::Tensor mask = torch::zeros({n, policy_size}, torch::kBool);
  bool* data = mask.data_ptr<bool>();
  for (std::int64_t i = 0; i < n; ++i) {
    if (legal.offsets[i + 1] < legal.offsets[i]) {
      return InvalidArgument("legal moves: offsets decrease at position " + std::to_string(i));
    }
    for (std::int32_t k = legal.offsets[i]; k < legal.offsets[i + 1]; ++k) {
      const std::int32_t a = legal.actions[k];
      if (a < 0 || a >= policy_size) {
        return InvalidArgument("legal moves: position " + std::to_string(i) + " lists action " +
                               std::to_string(a) + ", outside [0, " + std::to_string(policy_size) +
                               ")");
      }
      data[i * policy_size + a] = true;
    }
  }
  return mask;
}

Result<TrainBatch> BuildTrainBatch(std::span<const TrainSample> samples, const EncodeFn& encode,
                                   const NetConfig& net, InputLayout layout, bool pinned) {
  if (samples.empty()) return InvalidArgument("a training batch needs at least one sample");
  if (!encode) return InvalidArgument("a training batch needs an encoder callback");
  TrainBatch batch;
  AZ_ASSIGN_OR_RETURN(batch.policy_target, DensePolicyTargets(samples, net.policy_size));
  AZ_ASSIGN_OR_RETURN(batch.wdl_target, WdlTargets(samples));
  AZ_ASSIGN_OR_RETURN(batch.weight, ImportanceWeights(samples));
  const auto n = static_cast<std::int64_t>(samples.size());
  batch.input = NewInputTensor(net, n, layout, pinned);
  FillInput(batch.input, n, encode);
  if (pinned) {
    batch.policy_target = batch.policy_target.pin_memory();
    batch.wdl_target = batch.wdl_target.pin_memory();
    batch.weight = batch.weight.pin_memory();
  }
  return batch;
}

}  // namespace az::nn
