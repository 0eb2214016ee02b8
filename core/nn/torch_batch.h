#pragma once

// Building batch tensors from compact records, for the evaluator and the learner.
//
// The input tensor is logical NCHW [n, planes, height, width]. With InputLayout::kNhwc it is
// allocated channels-last, so its memory *is* NHWC: the encoder writes each position straight into
// the tensor, with no intermediate NHWC buffer and no per-element copy. With kNchw it is
// contiguous. Either way position i's floats are one contiguous block at data + i *
// InputFloatsPerPosition().

#include <torch/types.h>

#include <span>

#include "core/base/status.h"
#include "core/nn/net_config.h"
#include "core/nn/sample.h"

namespace az::nn {

// An uninitialised float32 input tensor for n positions; pinned host memory when `pinned` (for fast
// asynchronous copies to a GPU; only meaningful when CUDA is available).
torch::Tensor NewInputTensor(const NetConfig& net, std::int64_t n, InputLayout layout,
                             bool pinned = false);

// Calls encode(i, dst) for i in [0, n), dst pointing at position i's block inside `input`, which
// must come from NewInputTensor (checked: CPU, float, n positions, dense). A template so that the
// per-position call is inlined when the caller passes a lambda; EncodeFn works too.
template <typename Encode>
void FillInput(torch::Tensor& input, std::int64_t n, Encode&& encode);

// Wraps a caller's buffer of n positions in `layout` as a logical-NCHW tensor without copying (the
// strides express the layout). The buffer must outlive the tensor.
torch::Tensor WrapInput(const float* data, std::int64_t n, const NetConfig& net,
                        InputLayout layout);

// Dense [n, policy_size] float32 policy targets from the sparse lists, each normalised to sum 1;
// duplicates of an action add up. INVALID_ARGUMENT naming the sample when an action is out of
// range, a weight is negative or not finite, or a list sums to zero.
Result<torch::Tensor> DensePolicyTargets(std::span<const TrainSample> samples,
                                         std::int32_t policy_size);

// [n, 3] float32 WDL targets. INVALID_ARGUMENT when an entry is negative or not finite, or a target
// does not sum to 1 within 1e-3.
Result<torch::Tensor> WdlTargets(std::span<const TrainSample> samples);

// [n] float32 importance weights. INVALID_ARGUMENT when one is not finite or not positive.
Result<torch::Tensor> ImportanceWeights(std::span<const TrainSample> samples);

// Bool [n, policy_size] mask, true for the legal actions listed in `legal` (CSR, see sample.h).
// INVALID_ARGUMENT when offsets are not n + 1 non-decreasing values from 0 to actions.size(), or an
// action is out of range.
Result<torch::Tensor> LegalMask(const LegalMovesView& legal, std::int64_t n,
                                std::int32_t policy_size);

// Everything a training step needs, on the CPU (pinned when asked).
struct TrainBatch {
  torch::Tensor input;          // [n, planes, h, w] float32
  torch::Tensor policy_target;  // [n, policy_size] float32, rows sum to 1
  torch::Tensor wdl_target;     // [n, 3] float32
  torch::Tensor weight;         // [n] float32 importance weights
};

// Validates the samples (errors as above; an empty batch or an empty `encode` is INVALID_ARGUMENT),
// then fills the input through `encode`.
Result<TrainBatch> BuildTrainBatch(std::span<const TrainSample> samples, const EncodeFn& encode,
                                   const NetConfig& net, InputLayout layout, bool pinned = false);

// ---- implementation ----

void CheckFillableInput(const torch::Tensor& input, std::int64_t n);

template <typename Encode>
void FillInput(torch::Tensor& input, std::int64_t n, Encode&& encode) {
  CheckFillableInput(input, n);
  float* base = input.data_ptr<float>();
  const std::int64_t per_position = input.numel() / n;
  for (std::int64_t i = 0; i < n; ++i) encode(static_cast<int>(i), base + i * per_position);
}

}  // namespace az::nn
