#pragma once

// The AlphaZero loss, per sample, so that the learner can weight it by importance weights and send
// it back to the replay buffer as new priorities.
//
//   L_policy,i = -sum_a pi_ia * log softmax(p_i)_a      (terms with pi_ia = 0 count as 0, even when
//                                                         log softmax is -inf: NaN-safe 0 * log 0)
//   L_value,i  = -sum_k z_ik * log softmax(v_i)_k       (WDL cross-entropy against the outcome)
//   L_i        = L_policy,i + value_weight * L_value,i
//   L          = mean_i(w_i * L_i)                       (WeightedMean)

#include <torch/types.h>

namespace az::nn {

struct LossTerms {
  torch::Tensor policy;  // [n]
  torch::Tensor value;   // [n]
  torch::Tensor total;   // [n] policy + value_weight * value
};

// policy_logits [n, P], wdl_logits [n, 3], policy_target [n, P] (rows summing to 1), wdl_target
// [n, 3]. Computes in float32, or float64 when the logits are float64 (half logits from autocast
// are promoted), and returns tensors of that dtype. Differentiable in the logits.
LossTerms PerSampleLoss(const torch::Tensor& policy_logits, const torch::Tensor& wdl_logits,
                        const torch::Tensor& policy_target, const torch::Tensor& wdl_target,
                        double value_weight = 1.0);

// mean_i(weight_i * per_sample_i); weights of 1 give the plain mean. weight: [n].
torch::Tensor WeightedMean(const torch::Tensor& per_sample, const torch::Tensor& weight);

}  // namespace az::nn
