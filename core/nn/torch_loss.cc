#include "core/nn/torch_loss.h"

#include "core/base/check.h"

namespace az::nn {
namespace {

torch::ScalarType LossType(const torch::Tensor& logits) {
  return logits.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
}

// -sum(target * log_softmax(logits)) over dim 1, with 0 * log 0 = 0.
torch::Tensor CrossEntropy(const torch::Tensor& logits, const torch::Tensor& target) {
  const torch::ScalarType type = LossType(logits);
  const torch::Tensor log_p = torch::log_softmax(logits.to(type), 1);
  const torch::Tensor t = target.to(type);
  // where() rather than multiplying: 0 * -inf would be NaN, and its gradient too.
  const torch::Tensor terms = torch::where(t > 0, t * log_p, torch::zeros_like(log_p));
  return -terms.sum(1);
}

}  // namespace

LossTerms PerSampleLoss(const torch::Tensor& policy_logits, const torch::Tensor& wdl_logits,
                        const torch::Tensor& policy_target, const torch::Tensor& wdl_target,
                        double value_weight) {
  AZ_CHECK(policy_logits.dim() == 2 && policy_logits.sizes() == policy_target.sizes(),
           "policy logits and targets must both be [n, policy_size]");
  AZ_CHECK(
      wdl_logits.dim() == 2 && wdl_logits.size(1) == 3 && wdl_logits.sizes() == wdl_target.sizes(),
      "WDL logits and targets must both be [n, 3]");
  AZ_CHECK(policy_logits.size(0) == wdl_logits.size(0), "policy and value batch sizes differ");
  LossTerms terms;
  terms.policy = CrossEntropy(policy_logits, policy_target);
  terms.value = CrossEntropy(wdl_logits, wdl_target);
  terms.total = terms.policy + value_weight * terms.value;
  return terms;
}

torch::Tensor WeightedMean(const torch::Tensor& per_sample, const torch::Tensor& weight) {
  AZ_CHECK(per_sample.dim() == 1 && weight.sizes() == per_sample.sizes(),
           "per-sample losses and weights must both be [n]");
  return (per_sample * weight.to(per_sample.scalar_type())).mean();
}

}  // namespace az::nn
