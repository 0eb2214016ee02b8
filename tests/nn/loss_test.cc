// The per-sample loss on hand-computed cases, its NaN safety, the importance-weighted mean, and a
// finite-difference check of its gradient through a tiny network in double precision.

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>

#include "core/nn/torch_loss.h"
#include "core/nn/torch_model.h"

namespace az::nn {
namespace {

torch::Tensor Row(std::initializer_list<double> values) {
  return torch::tensor(std::vector<double>(values), torch::kDouble).unsqueeze(0);
}

TEST(LossTest, PolicyCrossEntropyOfKnownDistribution) {
  // logits log(1..4) -> softmax (0.1, 0.2, 0.3, 0.4); a one-hot target on action 2 costs -log 0.3.
  const torch::Tensor logits = Row({std::log(1.0), std::log(2.0), std::log(3.0), std::log(4.0)});
  const torch::Tensor target = Row({0, 0, 1, 0});
  const LossTerms t = PerSampleLoss(logits, Row({0, 0, 0}), target, Row({1, 0, 0}));
  EXPECT_NEAR(t.policy.item<double>(), -std::log(0.3), 1e-12);
  // A spread target (0.5, 0.5, 0, 0): -(0.5 log 0.1 + 0.5 log 0.2).
  const LossTerms spread =
      PerSampleLoss(logits, Row({0, 0, 0}), Row({0.5, 0.5, 0, 0}), Row({1, 0, 0}));
  EXPECT_NEAR(spread.policy.item<double>(), -(0.5 * std::log(0.1) + 0.5 * std::log(0.2)), 1e-12);
}

TEST(LossTest, ValueCrossEntropyAgainstOutcome) {
  // Uniform WDL logits: every outcome costs log 3.
  const LossTerms t = PerSampleLoss(Row({0, 0}), Row({0, 0, 0}), Row({1, 0}), Row({0, 0, 1}));
  EXPECT_NEAR(t.value.item<double>(), std::log(3.0), 1e-12);
  // WDL logits (log 6, log 3, log 1) -> (0.6, 0.3, 0.1); a draw costs -log 0.3, a loss -log 0.1.
  const torch::Tensor wdl = Row({std::log(6.0), std::log(3.0), 0.0});
  EXPECT_NEAR(PerSampleLoss(Row({0, 0}), wdl, Row({1, 0}), Row({0, 1, 0})).value.item<double>(),
              -std::log(0.3), 1e-12);
  EXPECT_NEAR(PerSampleLoss(Row({0, 0}), wdl, Row({1, 0}), Row({0, 0, 1})).value.item<double>(),
              -std::log(0.1), 1e-12);
}

TEST(LossTest, TotalIsPolicyPlusWeightedValue) {
  const LossTerms t = PerSampleLoss(Row({0, 0}), Row({0, 0, 0}), Row({1, 0}), Row({0, 1, 0}), 0.25);
  EXPECT_NEAR(t.policy.item<double>(), std::log(2.0), 1e-12);
  EXPECT_NEAR(t.total.item<double>(), std::log(2.0) + 0.25 * std::log(3.0), 1e-12);
}

TEST(LossTest, ZeroTargetOnMinusInfinityLogitIsNotNaN) {
  // 0 * log 0: the masked (or -inf) logit has zero target and must contribute 0, gradient included.
  const double inf = std::numeric_limits<double>::infinity();
  torch::Tensor logits = Row({0.0, -inf, 0.0}).requires_grad_(true);
  const LossTerms t = PerSampleLoss(logits, Row({0, 0, 0}), Row({0.5, 0, 0.5}), Row({1, 0, 0}));
  EXPECT_NEAR(t.policy.item<double>(), std::log(2.0), 1e-12);
  t.total.sum().backward();
  EXPECT_TRUE(torch::isfinite(logits.grad()).all().item<bool>()) << logits.grad();
}

TEST(LossTest, PolicyLossIsFiniteWithMaskLogitInHalfPrecision) {
  const torch::Tensor logits =
      torch::tensor({2.0f, kIllegalLogit, 1.0f}).to(torch::kHalf).unsqueeze(0);
  const torch::Tensor target = torch::tensor({1.0f, 0.0f, 0.0f}).unsqueeze(0);
  const LossTerms t = PerSampleLoss(logits, torch::zeros({1, 3}, torch::kHalf), target,
                                    torch::tensor({1.0f, 0.0f, 0.0f}).unsqueeze(0));
  EXPECT_EQ(t.policy.scalar_type(), torch::kFloat);  // promoted out of half
  EXPECT_NEAR(t.policy.item<float>(), std::log1p(std::exp(-1.0f)), 1e-3);
}

TEST(LossTest, ReturnsOneLossPerSample) {
  const torch::Tensor logits = torch::randn({5, 4}, torch::kDouble);
  const torch::Tensor target = torch::softmax(torch::randn({5, 4}, torch::kDouble), 1);
  const torch::Tensor wdl_logits = torch::randn({5, 3}, torch::kDouble);
  const torch::Tensor wdl_target =
      torch::eye(3, torch::kDouble).index({torch::tensor({0, 1, 2, 0, 1})});
  const LossTerms batch = PerSampleLoss(logits, wdl_logits, target, wdl_target);
  ASSERT_EQ(batch.total.sizes(), (std::vector<std::int64_t>{5}));
  for (int i = 0; i < 5; ++i) {
    const LossTerms one = PerSampleLoss(logits.slice(0, i, i + 1), wdl_logits.slice(0, i, i + 1),
                                        target.slice(0, i, i + 1), wdl_target.slice(0, i, i + 1));
    EXPECT_NEAR(batch.total[i].item<double>(), one.total.item<double>(), 1e-12);
  }
}

TEST(LossTest, ImportanceWeightsOfOneGiveThePlainMean) {
  const torch::Tensor per_sample = torch::rand({7}, torch::kDouble) * 5;
  EXPECT_NEAR(WeightedMean(per_sample, torch::ones({7})).item<double>(),
              per_sample.mean().item<double>(), 1e-12);
  // And weights scale each sample's share: mean(w * l).
  const torch::Tensor w = torch::tensor({1.0, 0.5, 0.25, 1.0, 1.0, 0.1, 0.9}, torch::kDouble);
  EXPECT_NEAR(WeightedMean(per_sample, w).item<double>(), (per_sample * w).sum().item<double>() / 7,
              1e-12);
}

// d loss / d parameters by autograd against central finite differences, for every parameter of a
// tiny network, in double precision, in train mode (BatchNorm on batch statistics).
TEST(LossGradientTest, MatchesFiniteDifferencesThroughTinyNetwork) {
  NetConfig c;
  c.blocks = 1;
  c.filters = 3;
  c.input_planes = 2;
  c.board_height = 3;
  c.board_width = 3;
  c.policy_size = 5;
  c.value_hidden = 4;
  torch::manual_seed(7);
  AzNet net(c);
  net->to(torch::kDouble);
  net->train();
  const int n = 4;
  const torch::Tensor x = torch::randn({n, 2, 3, 3}, torch::kDouble);
  const torch::Tensor policy_target = torch::softmax(torch::randn({n, 5}, torch::kDouble), 1)
                                          .index_put_({0, 2}, 0.0);  // one zero entry
  const torch::Tensor wdl_target = torch::tensor(
      {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}, {0.5, 0.5, 0.0}}, torch::kDouble);
  const torch::Tensor weight = torch::tensor({1.0, 0.4, 0.7, 0.9}, torch::kDouble);
  auto loss_fn = [&]() {
    auto [p, v] = net->Logits(x);
    return WeightedMean(PerSampleLoss(p, v, policy_target, wdl_target, 0.7).total, weight);
  };
  net->zero_grad();
  loss_fn().backward();

  const double eps = 1e-6;
  int checked = 0;
  torch::NoGradGuard no_grad;
  for (const auto& named : net->named_parameters()) {
    torch::Tensor p = named.value();
    const torch::Tensor analytic = p.grad().clone();
    torch::Tensor flat = p.view({-1});  // parameters are contiguous here (no channels-last)
    for (std::int64_t k = 0; k < flat.numel(); ++k) {
      const double original = flat[k].item<double>();
      flat[k] = original + eps;
      const double up = loss_fn().item<double>();
      flat[k] = original - eps;
      const double down = loss_fn().item<double>();
      flat[k] = original;
      const double numeric = (up - down) / (2 * eps);
      const double a = analytic.view({-1})[k].item<double>();
      EXPECT_NEAR(a, numeric, 1e-6 + 1e-4 * std::abs(numeric)) << named.key() << "[" << k << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace az::nn
