// Mirror equivariance by weight tying (core/nn/torch_mirror.h): a projected network gives the
// mirrored position the reversed policy and the same WDL in eval mode (and an untied one does
// not, so the check has teeth); projecting a tied network changes nothing; a trainer asked for it
// keeps its published weights tied through SGD steps, the moving average and BatchNorm's running
// statistics included; networks that cannot be tied are refused by name.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "core/nn/network.h"
#include "core/nn/torch_mirror.h"
#include "core/nn/trainer.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ::testing::HasSubstr;

// Random weights everywhere, BatchNorm's scales, shifts and running statistics included, so that
// nothing is tied by accident of initialisation.
void Randomise(AzNetImpl& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.named_parameters()) p.value().copy_(torch::randn_like(p.value()) * 0.3);
  for (auto& b : model.named_buffers()) {
    if (!b.value().is_floating_point()) continue;
    const bool variance = b.key().find("running_var") != std::string::npos;
    b.value().copy_(variance ? torch::rand_like(b.value()) + 0.5 : torch::randn_like(b.value()));
  }
}

torch::Tensor RandomBoards(const NetConfig& net, int n) {
  return torch::randint(0, 2, {n, net.input_planes, net.board_height, net.board_width})
      .to(torch::kFloat);
}

// The largest difference between the model's outputs on the boards and the mirrored outputs on
// the mirrored boards (policy columns reversed; WDL as it is).
double MirrorError(AzNetImpl& model, const torch::Tensor& boards) {
  torch::NoGradGuard no_grad;
  model.eval();
  const auto [policy, wdl] = model.Logits(boards);
  const auto [mirror_policy, mirror_wdl] = model.Logits(boards.flip({3}));  // columns reversed
  return std::max((policy - mirror_policy.flip({1})).abs().max().item<double>(),
                  (wdl - mirror_wdl).abs().max().item<double>());
}

TEST(MirrorTest, ProjectedNetworkIsEquivariantAndAnUntiedOneIsNot) {
  torch::manual_seed(11);
  NetConfig net = testing::TinyConfig();
  net.blocks = 2;
  AzNet model(net);
  Randomise(*model);
  const torch::Tensor boards = RandomBoards(net, 16);
  const double untied = MirrorError(*model, boards);
  ProjectMirrorEquivariant(*model);
  const double tied = MirrorError(*model, boards);
  EXPECT_GT(untied, 1e-3);
  EXPECT_LT(tied, 1e-6);
}

TEST(MirrorTest, ProjectingATiedNetworkChangesNothing) {
  torch::manual_seed(12);
  AzNet model(testing::TinyConfig());
  Randomise(*model);
  ProjectMirrorEquivariant(*model);
  std::vector<torch::Tensor> before;
  for (const torch::Tensor& p : model->parameters()) before.push_back(p.clone());
  ProjectMirrorEquivariant(*model);
  std::size_t i = 0;
  for (const torch::Tensor& p : model->parameters()) {
    EXPECT_TRUE(torch::allclose(p, before[i++], 0.0, 1e-6));
  }
}

TEST(MirrorTest, TrainerPublishesTiedWeightsAfterSgdSteps) {
  TrainerOptions o;
  o.net = testing::TinyConfig();
  o.runtime.device = DeviceChoice::kCpu;
  o.runtime.seed = 5;
  o.optimizer = OptimizerKind::kSgd;
  o.learning_rate = 0.1;
  o.ema_decay = 0.9;
  o.mirror_equivariant = true;
  auto trainer = Trainer::Create(o);
  ASSERT_TRUE(trainer.ok()) << trainer.status().ToString();
  const testing::SampleSet set = testing::MakeSamples(o.net, 32, 9, 3);
  for (int step = 0; step < 20; ++step) {
    const Result<TrainStepResult> r = (*trainer)->TrainStep(set.samples, set.Encoder());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->stats.skipped, SkipReason::kNone);
  }
  testing::ScratchDir dir;
  ASSERT_TRUE((*trainer)->SaveWeights(dir.File("tied.azw"), 1).ok());

  // Through the evaluator's facade: the set's positions (NHWC) and their mirror images.
  RuntimeOptions runtime;
  runtime.device = DeviceChoice::kCpu;
  auto network = Network::FromFile(dir.File("tied.azw"), runtime);
  ASSERT_TRUE(network.ok()) << network.status().ToString();
  const NetConfig& net = o.net;
  const int n = set.size();
  // NHWC: the width is dimension 2.
  std::vector<float> inputs = set.inputs;
  const torch::Tensor boards =
      torch::from_blob(inputs.data(), {n, net.board_height, net.board_width, net.input_planes});
  const torch::Tensor mirror_boards = boards.flip({2}).contiguous();
  const float* mirrored = mirror_boards.data_ptr<float>();
  std::vector<float> logits(n * net.policy_size), mirror_logits(n * net.policy_size);
  std::vector<float> wdl(n * 3), mirror_wdl(n * 3);
  ASSERT_TRUE((*network)
                  ->Forward({.n = n, .data = set.inputs.data()},
                            {.policy_logits = logits.data(), .wdl = wdl.data()})
                  .ok());
  ASSERT_TRUE((*network)
                  ->Forward({.n = n, .data = mirrored},
                            {.policy_logits = mirror_logits.data(), .wdl = mirror_wdl.data()})
                  .ok());
  for (int i = 0; i < n; ++i) {
    for (int a = 0; a < net.policy_size; ++a) {
      ASSERT_NEAR(logits[i * net.policy_size + a],
                  mirror_logits[i * net.policy_size + net.policy_size - 1 - a], 1e-4)
          << "position " << i << " column " << a;
    }
    for (int k = 0; k < 3; ++k) ASSERT_NEAR(wdl[i * 3 + k], mirror_wdl[i * 3 + k], 1e-5);
  }
}

TEST(MirrorTest, NetworksThatCannotBeTiedAreRefusedByName) {
  TrainerOptions o;
  o.net = testing::TinyConfig();
  o.runtime.device = DeviceChoice::kCpu;
  o.mirror_equivariant = true;
  EXPECT_TRUE(o.Validate().ok());
  TrainerOptions dense = o;
  dense.net.policy_cell_plane = -1;
  EXPECT_THAT(dense.Validate().ToString(), HasSubstr("actions are columns"));
  TrainerOptions odd = o;
  odd.net.filters = 9;
  EXPECT_THAT(odd.Validate().ToString(), HasSubstr("filters (9)"));
  odd.mirror_equivariant = false;
  EXPECT_TRUE(odd.Validate().ok());
}

}  // namespace
}  // namespace az::nn
