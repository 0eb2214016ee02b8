#pragma once

// The tensor-level collectives of a ProcessGroup (core/nn/distributed.h), for the trainer. Each
// takes one contiguous tensor (CPU or CUDA; CUDA tensors go through host memory) and blocks up to
// the group's timeout; UNAVAILABLE when a rank died or timed out, after which the group is
// unusable.

#include <torch/types.h>

#include "core/base/status.h"
#include "core/nn/distributed.h"

namespace az::nn {

// Element-wise sum over the ranks, in place.
Status AllReduceSum(ProcessGroup& group, torch::Tensor& tensor);
// Rank 0's values into `tensor` on every rank (same shape and type everywhere).
Status BroadcastFromRoot(ProcessGroup& group, torch::Tensor& tensor);

}  // namespace az::nn
