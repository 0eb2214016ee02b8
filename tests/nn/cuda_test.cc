// The CUDA paths, where a CUDA device is usable (skipped elsewhere, as on CI's CPU-only LibTorch):
// weights made on the CPU give the same outputs on the GPU in fp32 and, within fp16's precision,
// under fp16 autocast, through the pinned-memory input path and the legal-move masks; training on
// the GPU in fp16 with dynamic loss scaling drives the loss down, and its weights load on the CPU
// and agree with the GPU's fp32 outputs. Run on an H100 with pip's LibTorch 2.11 (docs/nn.md).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/nn/network.h"
#include "core/nn/trainer.h"
#include "tests/ipc/test_util.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ipc::testing::TempDir;

RuntimeOptions OnCuda(bool fp16) {
  RuntimeOptions runtime;
  runtime.device = DeviceChoice::kCuda;
  runtime.cuda_fp16 = fp16;
  return runtime;
}

// The GPU's network, or a skip where there is none (FAILED_PRECONDITION is the documented answer).
#define AZ_NETWORK_ON_CUDA_OR_SKIP(var, path, fp16)                               \
  auto var = Network::FromFile(path, OnCuda(fp16));                               \
  if (!var.ok() && var.status().code() == StatusCode::kFailedPrecondition) {      \
    GTEST_SKIP() << "no usable CUDA device: " << var.status().ToString();         \
  }                                                                               \
  ASSERT_TRUE(var.ok()) << var.status().ToString()

struct Outputs {
  std::vector<float> logits, priors, wdl, value;
};

Outputs Evaluate(Network& network, const testing::SampleSet& set, const LegalMovesView& legal) {
  const int n = set.size();
  Outputs o;
  o.logits.resize(static_cast<std::size_t>(n) * set.net.policy_size);
  o.priors.resize(legal.actions.size());
  o.wdl.resize(static_cast<std::size_t>(n) * 3);
  o.value.resize(n);
  const Status s = network.Forward(
      {.n = n, .data = set.inputs.data()},
      {.policy_logits = o.logits.data(), .priors = o.priors.data(), .wdl = o.wdl.data(),
       .value = o.value.data()},
      &legal);
  AZ_CHECK(s.ok(), s.ToString());
  return o;
}

// The largest difference, relative to the first output's size where that is above 1 (trained
// logits reach tens), absolute below.
float MaxDiff(const std::vector<float>& a, const std::vector<float>& b, bool skip_masked) {
  float worst = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (skip_masked && (a[i] <= kIllegalLogit / 2 || b[i] <= kIllegalLogit / 2)) {
      EXPECT_EQ(a[i], b[i]) << "a legal move's logit on one device, masked on the other";
      continue;
    }
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1.0f, std::abs(a[i])));
  }
  return worst;
}

// Every action legal in even positions, three in odd ones: both the masked and the open rows.
struct Legal {
  std::vector<std::int32_t> offsets{0}, actions;
  explicit Legal(const NetConfig& net, int n) {
    for (int i = 0; i < n; ++i) {
      if (i % 2 == 0) {
        for (int a = 0; a < net.policy_size; ++a) actions.push_back(a);
      } else {
        actions.insert(actions.end(), {0, 3, net.policy_size - 1});
      }
      offsets.push_back(static_cast<std::int32_t>(actions.size()));
    }
  }
  LegalMovesView view() const { return {offsets, actions}; }
};

TEST(CudaTest, CpuWeightsGiveTheSameOutputsOnTheGpuInFp32AndFp16) {
  const NetConfig net = NetConfig::ConnectFour();
  const testing::SampleSet set = testing::MakeSamples(net, 64, 7);
  const Legal legal(net, set.size());
  TempDir dir;
  const std::string weights = dir.path() + "/model-1.azw";
  NetworkOptions options{.net = net};
  options.runtime.device = DeviceChoice::kCpu;
  options.runtime.seed = 9;
  auto cpu = Network::Create(options);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  ASSERT_TRUE((*cpu)->SaveWeights(weights, 1).ok());
  const Outputs want = Evaluate(**cpu, set, legal.view());

  AZ_NETWORK_ON_CUDA_OR_SKIP(fp32, weights, /*fp16=*/false);
  EXPECT_EQ((*fp32)->DeviceName(), "cuda:0");
  EXPECT_FALSE((*fp32)->UsesFp16());
  EXPECT_EQ((*fp32)->model_version(), 1u);
  const Outputs got32 = Evaluate(**fp32, set, legal.view());
  // cuDNN's convolutions run in TF32 by default (LibTorch's cudnn allow_tf32): about three
  // decimal digits against oneDNN's fp32.
  EXPECT_LT(MaxDiff(want.logits, got32.logits, /*skip_masked=*/true), 5e-3f);
  EXPECT_LT(MaxDiff(want.priors, got32.priors, false), 1e-3f);
  EXPECT_LT(MaxDiff(want.wdl, got32.wdl, false), 1e-3f);
  EXPECT_LT(MaxDiff(want.value, got32.value, false), 1e-3f);

  AZ_NETWORK_ON_CUDA_OR_SKIP(fp16, weights, /*fp16=*/true);
  EXPECT_TRUE((*fp16)->UsesFp16());
  const Outputs got16 = Evaluate(**fp16, set, legal.view());
  // fp16 keeps about three significant digits; the outputs stay fp32 and normalised.
  EXPECT_LT(MaxDiff(want.logits, got16.logits, /*skip_masked=*/true), 0.05f);
  EXPECT_LT(MaxDiff(want.priors, got16.priors, false), 0.01f);
  EXPECT_LT(MaxDiff(want.value, got16.value, false), 0.01f);
  for (int i = 0; i < set.size(); ++i) {
    float sum = 0.0f;
    for (int k = legal.offsets[i]; k < legal.offsets[i + 1]; ++k) sum += got16.priors[k];
    EXPECT_NEAR(sum, 1.0f, 1e-4f) << "position " << i;
  }
}

TEST(CudaTest, Fp16TrainingWithLossScalingLearnsAndItsWeightsLoadOnTheCpu) {
  const NetConfig net = testing::TinyConfig();
  const testing::SampleSet set = testing::MakeSamples(net, 16, 3);
  TrainerOptions o;
  o.net = net;
  o.runtime = OnCuda(/*fp16=*/true);
  o.runtime.seed = 123;
  o.learning_rate = 1e-2;
  auto created = Trainer::Create(o);
  if (!created.ok() && created.status().code() == StatusCode::kFailedPrecondition) {
    GTEST_SKIP() << "no usable CUDA device: " << created.status().ToString();
  }
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Trainer& trainer = **created;
  EXPECT_TRUE(trainer.UsesLossScaling());

  double first = 0.0, last = 0.0;
  int updates = 0;
  for (int step = 0; step < 100; ++step) {
    const Result<TrainStepResult> r = trainer.TrainStep(set.samples, set.Encoder());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    // The scaler starts at 2^16 and may back off on an overflow; the loss itself stays finite.
    ASSERT_NE(r->stats.skipped, SkipReason::kNonFiniteLoss);
    if (r->stats.skipped == SkipReason::kNone) ++updates;
    if (step == 0) first = r->stats.loss;
    last = r->stats.loss;
  }
  EXPECT_GE(updates, 90);
  EXPECT_GT(first, 2.0);
  EXPECT_LT(last, 0.5 * first);

  TempDir dir;
  const std::string weights = dir.path() + "/model-2.azw";
  ASSERT_TRUE(trainer.SaveWeights(weights, 2).ok());
  RuntimeOptions cpu_runtime;
  cpu_runtime.device = DeviceChoice::kCpu;
  auto cpu = Network::FromFile(weights, cpu_runtime);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  AZ_NETWORK_ON_CUDA_OR_SKIP(gpu, weights, /*fp16=*/false);
  const Legal legal(net, set.size());
  const Outputs on_cpu = Evaluate(**cpu, set, legal.view());
  const Outputs on_gpu = Evaluate(**gpu, set, legal.view());
  EXPECT_LT(MaxDiff(on_cpu.logits, on_gpu.logits, /*skip_masked=*/true), 5e-3f);  // TF32, above
  EXPECT_LT(MaxDiff(on_cpu.value, on_gpu.value, false), 1e-3f);
}

}  // namespace
}  // namespace az::nn
