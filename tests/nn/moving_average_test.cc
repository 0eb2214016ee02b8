// The weights' moving average (TrainerOptions::ema_decay), as the learner publishes it: the
// published file is exactly d * previous + (1 - d) * newest after each step (BatchNorm statistics
// included), training itself is unchanged by it, and checkpoints carry it across a restart.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "core/nn/torch_model.h"
#include "core/nn/torch_weights.h"
#include "core/nn/trainer.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ::testing::HasSubstr;

TrainerOptions Options(double ema_decay) {
  TrainerOptions o;
  o.net = testing::TinyConfig();
  o.runtime.device = DeviceChoice::kCpu;
  o.runtime.seed = 123;
  o.learning_rate = 1e-2;
  o.ema_decay = ema_decay;
  return o;
}

std::unique_ptr<Trainer> MakeTrainer(const TrainerOptions& o) {
  auto trainer = Trainer::Create(o);
  AZ_CHECK(trainer.ok(), trainer.status().ToString());
  return std::move(trainer).value();
}

// Every parameter and floating-point buffer of a weights file, flattened in file order.
std::vector<torch::Tensor> Tensors(const std::string& path) {
  AzNet net(testing::TinyConfig());
  const Result<WeightsFileInfo> info = LoadModelWeights(path, *net);
  AZ_CHECK(info.ok(), info.status().ToString());
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : net->parameters()) out.push_back(p.detach().clone());
  for (const torch::Tensor& b : net->buffers()) {
    if (b.is_floating_point()) out.push_back(b.detach().clone());
  }
  return out;
}

void ExpectSame(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], /*rtol=*/0.0, tolerance)) << "tensor " << i;
  }
}

// Trains a plain and an averaging trainer side by side for 30 steps and checks that the published
// average is d * previous + (1 - d) * newest with the warm-up decay of ema_warmup_share.
void ExpectPublishedAverage(double ema_decay, double warmup_share) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 16, 5);
  auto plain = MakeTrainer(Options(0.0));
  TrainerOptions averaging = Options(ema_decay);
  averaging.ema_warmup_share = warmup_share;
  auto averaged = MakeTrainer(averaging);

  // Before any step both publish the initial weights.
  ASSERT_TRUE(plain->SaveWeights(dir.File("w0"), 0).ok());
  ASSERT_TRUE(averaged->SaveWeights(dir.File("e0"), 0).ok());
  const std::vector<torch::Tensor> w0 = Tensors(dir.File("w0"));
  ExpectSame(Tensors(dir.File("e0")), w0, 0.0);

  std::vector<torch::Tensor> expected = w0;
  for (int step = 0; step < 30; ++step) {
    const Result<TrainStepResult> a = plain->TrainStep(set.samples, set.Encoder());
    const Result<TrainStepResult> b = averaged->TrainStep(set.samples, set.Encoder());
    ASSERT_TRUE(a.ok() && b.ok());
    // Training follows the newest weights, whatever is published.
    EXPECT_DOUBLE_EQ(a->stats.loss, b->stats.loss) << "step " << step;
    ASSERT_TRUE(plain->SaveWeights(dir.File("w"), 0).ok());
    const std::vector<torch::Tensor> w = Tensors(dir.File("w"));
    const double d = std::min(ema_decay, 1.0 - 1.0 / (1.0 + warmup_share * (1.0 + step)));
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = d * expected[i] + (1 - d) * w[i];
  }
  ASSERT_TRUE(averaged->SaveWeights(dir.File("e"), 0).ok());
  ExpectSame(Tensors(dir.File("e")), expected, 1e-5);
  // And it is not the newest weights: 30 steps at lr 1e-2 move them well away.
  ASSERT_TRUE(plain->SaveWeights(dir.File("w"), 0).ok());
  EXPECT_FALSE(torch::allclose(Tensors(dir.File("e"))[0], Tensors(dir.File("w"))[0], 0.0, 1e-4));
}

TEST(MovingAverageTest, PublishedWeightsAreTheAverageWithTheWarmUpDecay) {
  // The default share, 1/9, is TensorFlow's (1 + step) / (10 + step).
  EXPECT_DOUBLE_EQ(TrainerOptions{}.ema_warmup_share, 1.0 / 9.0);
  ExpectPublishedAverage(0.9, 1.0 / 9.0);
}

TEST(MovingAverageTest, AWiderWarmUpShareAveragesMoreOfTheFirstSteps) {
  ExpectPublishedAverage(0.99, 0.5);
}

TEST(MovingAverageTest, CheckpointsCarryTheAverageAcrossARestart) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 6);
  auto original = MakeTrainer(Options(0.95));
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(original->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(original->SaveCheckpoint(dir.File("ckpt"), 3).ok());

  TrainerOptions other_seed = Options(0.95);
  other_seed.runtime.seed = 77;
  auto resumed = MakeTrainer(other_seed);
  ASSERT_TRUE(resumed->LoadCheckpoint(dir.File("ckpt")).ok());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(original->TrainStep(set.samples, set.Encoder()).ok());
    ASSERT_TRUE(resumed->TrainStep(set.samples, set.Encoder()).ok());
  }
  ASSERT_TRUE(original->SaveWeights(dir.File("a"), 0).ok());
  ASSERT_TRUE(resumed->SaveWeights(dir.File("b"), 0).ok());
  ExpectSame(Tensors(dir.File("a")), Tensors(dir.File("b")), 1e-6);
}

TEST(MovingAverageTest, ACheckpointWithoutAnAverageStartsItFromItsWeights) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 7);
  auto plain = MakeTrainer(Options(0.0));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(plain->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(plain->SaveCheckpoint(dir.File("ckpt"), 1).ok());
  ASSERT_TRUE(plain->SaveWeights(dir.File("w"), 1).ok());

  auto averaged = MakeTrainer(Options(0.99));
  ASSERT_TRUE(averaged->LoadCheckpoint(dir.File("ckpt")).ok());
  ASSERT_TRUE(averaged->SaveWeights(dir.File("e"), 1).ok());
  ExpectSame(Tensors(dir.File("e")), Tensors(dir.File("w")), 0.0);
  // Published weights loaded into an averaging trainer restart the average from them too.
  auto loaded = MakeTrainer(Options(0.99));
  ASSERT_TRUE(loaded->LoadWeights(dir.File("w")).ok());
  ASSERT_TRUE(loaded->SaveWeights(dir.File("l"), 1).ok());
  ExpectSame(Tensors(dir.File("l")), Tensors(dir.File("w")), 0.0);
}

TEST(MovingAverageTest, DecayOfOneOrMoreIsRefused) {
  TrainerOptions o = Options(1.0);
  EXPECT_THAT(o.Validate().message(), HasSubstr("ema_decay"));
  o.ema_decay = -0.1;
  EXPECT_THAT(o.Validate().message(), HasSubstr("ema_decay"));
}

TEST(MovingAverageTest, AWarmUpShareOutsideZeroToOneIsRefused) {
  TrainerOptions o = Options(0.99);
  o.ema_warmup_share = 0.0;
  EXPECT_THAT(o.Validate().message(), HasSubstr("ema_warmup_share"));
  o.ema_warmup_share = 1.5;
  EXPECT_THAT(o.Validate().message(), HasSubstr("ema_warmup_share"));
}

}  // namespace
}  // namespace az::nn
