// The training step through the torch-free facade, as the learner uses it: loss goes down, weights
// of 1 give the plain mean, NaN batches are skipped and leave the model untouched, loss scaling
// recovers from overflow and matches unscaled training, checkpoints resume exactly (with Adam and
// with SGD) and are refused by a trainer of the other optimizer, a grown network computes what it
// did.

#include "core/nn/trainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>

#include "core/nn/network.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ::testing::HasSubstr;

TrainerOptions TinyOptions() {
  TrainerOptions o;
  o.net = testing::TinyConfig();
  o.runtime.device = DeviceChoice::kCpu;
  o.runtime.seed = 123;
  o.learning_rate = 1e-2;
  return o;
}

std::unique_ptr<Trainer> MakeTrainer(const TrainerOptions& o) {
  auto trainer = Trainer::Create(o);
  AZ_CHECK(trainer.ok(), trainer.status().ToString());
  return std::move(trainer).value();
}

// Everything the saved weights determine, in eval mode (so BatchNorm's running statistics count):
// policy logits and values for the set's positions.
std::vector<float> EvalOutputs(const std::string& weights, const testing::SampleSet& set) {
  RuntimeOptions runtime;
  runtime.device = DeviceChoice::kCpu;
  auto network = Network::FromFile(weights, runtime);
  AZ_CHECK(network.ok(), network.status().ToString());
  const int n = set.size();
  std::vector<float> out(static_cast<std::size_t>(n) * (set.net.policy_size + 1));
  AZ_CHECK(
      (*network)
          ->Forward({.n = n, .data = set.inputs.data()},
                    {.policy_logits = out.data(), .value = out.data() + n * set.net.policy_size})
          .ok());
  return out;
}

void ExpectAllNear(const std::vector<float>& a, const std::vector<float>& b, float tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], tolerance) << "index " << i;
}

// The first and the last loss of `steps` steps on one fixed batch; every step must be taken.
void TrainOnAFixedBatch(Trainer& trainer, const testing::SampleSet& set, int steps, double& first,
                        double& last) {
  for (int step = 0; step < steps; ++step) {
    const Result<TrainStepResult> r = trainer.TrainStep(set.samples, set.Encoder());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->stats.skipped, SkipReason::kNone);
    if (step == 0) first = r->stats.loss;
    last = r->stats.loss;
  }
}

TEST(TrainerTest, HundredStepsOnAFixedBatchDriveTheLossDown) {
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 16, 3);
  auto trainer = MakeTrainer(TinyOptions());
  double first = 0.0, last = 0.0;
  TrainOnAFixedBatch(*trainer, set, 100, first, last);
  EXPECT_EQ(trainer->counters().steps, 100u);
  // Starts near log 7 + log 3 ~ 3.0 (uniform guesses); a fixed batch of 16 is memorised.
  EXPECT_GT(first, 2.0);
  EXPECT_LT(last, 0.5 * first);
}

// cpu-bf16: training under CPU bf16 autocast still learns (the loss and the weights stay fp32, so
// a fixed batch is memorised as in fp32), and the trainer says it runs in bf16.
TEST(TrainerTest, Bf16AutocastOnTheCpuStillDrivesTheLossDown) {
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 16, 3);
  TrainerOptions options = TinyOptions();
  options.runtime.cpu_bf16 = true;
  auto trainer = MakeTrainer(options);
  EXPECT_TRUE(trainer->UsesBf16());
  EXPECT_FALSE(MakeTrainer(TinyOptions())->UsesBf16());
  double first = 0.0, last = 0.0;
  TrainOnAFixedBatch(*trainer, set, 100, first, last);
  EXPECT_GT(first, 2.0);
  EXPECT_LT(last, 0.5 * first);
}

// The learner's policy_accuracy gauge: the share of a batch whose highest logit is the target's
// move, a multiple of 1/n, reaching 1 once a fixed batch of one-hot targets is memorised.
TEST(TrainerTest, PolicyAccuracyIsTheShareOfTopMovesThatMatchTheTargets) {
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 16, 7);
  auto trainer = MakeTrainer(TinyOptions());
  double first = -1.0, last = -1.0;
  for (int step = 0; step < 300; ++step) {
    const Result<TrainStepResult> r = trainer->TrainStep(set.samples, set.Encoder());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const double share = r->stats.policy_accuracy;
    ASSERT_GE(share, 0.0);
    ASSERT_LE(share, 1.0);
    ASSERT_NEAR(share * 16, std::round(share * 16), 1e-6) << "not a share of 16 samples";
    if (step == 0) first = share;
    last = share;
  }
  EXPECT_LT(first, 1.0);  // an untrained network does not already know 16 random targets
  EXPECT_EQ(last, 1.0);
}

TEST(TrainerTest, PerSampleLossesAverageToTheStepLossWithUnitWeights) {
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 4, 3);
  auto trainer = MakeTrainer(TinyOptions());
  const Result<TrainStepResult> r = trainer->TrainStep(set.samples, set.Encoder());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->loss.size(), 8u);
  const double mean = std::accumulate(r->loss.begin(), r->loss.end(), 0.0) / 8;
  EXPECT_NEAR(r->stats.loss, mean, 1e-5);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(r->loss[i], r->policy_loss[i] + r->value_loss[i], 1e-5);
  EXPECT_GT(r->stats.grad_norm, 0.0);
  EXPECT_EQ(r->stats.learning_rate, 1e-2);

  // With importance weights, the step loss is mean(w_i * L_i) of the same per-sample losses.
  testing::SampleSet weighted = set;
  for (int i = 0; i < 8; ++i) {
    weighted.samples[i].policy = weighted.policies[i];
    weighted.samples[i].importance_weight = 0.125f * (i + 1);
  }
  auto fresh = MakeTrainer(TinyOptions());
  const Result<TrainStepResult> w = fresh->TrainStep(weighted.samples, weighted.Encoder());
  ASSERT_TRUE(w.ok());
  double expected = 0.0;
  for (int i = 0; i < 8; ++i) expected += 0.125 * (i + 1) * w->loss[i];
  EXPECT_NEAR(w->stats.loss, expected / 8, 1e-5);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(w->loss[i], r->loss[i], 1e-5);  // same model, same data
}

TEST(TrainerTest, NanBatchIsSkippedCountedAndLeavesTheModelUntouched) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 5);
  auto trainer = MakeTrainer(TinyOptions());
  ASSERT_TRUE(trainer->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(trainer->SaveWeights(dir.File("before"), 1).ok());

  const EncodeFn poisoned = [&](int i, float* dst) {
    set.Encoder()(i, dst);
    if (i == 2) dst[0] = std::nanf("");
  };
  const Result<TrainStepResult> r = trainer->TrainStep(set.samples, poisoned);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->stats.skipped, SkipReason::kNonFiniteLoss);
  EXPECT_TRUE(std::isnan(r->stats.loss));
  EXPECT_EQ(r->stats.step, 1u);
  EXPECT_EQ(trainer->counters().steps, 1u);
  EXPECT_EQ(trainer->counters().skipped_nonfinite_loss, 1u);

  // Weights and BatchNorm running statistics are exactly as before the NaN batch.
  ASSERT_TRUE(trainer->SaveWeights(dir.File("after"), 1).ok());
  EXPECT_EQ(EvalOutputs(dir.File("before"), set), EvalOutputs(dir.File("after"), set));

  // And training carries on.
  const Result<TrainStepResult> next = trainer->TrainStep(set.samples, set.Encoder());
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->stats.skipped, SkipReason::kNone);
  EXPECT_EQ(trainer->counters().steps, 2u);
}

TEST(TrainerTest, MalformedSampleIsRefusedWithoutAStep) {
  testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 4, 6);
  const std::vector<PolicyEntry> bad = {{99, 1.0f}};
  set.samples[1].policy = bad;
  auto trainer = MakeTrainer(TinyOptions());
  const Status status = trainer->TrainStep(set.samples, set.Encoder()).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("training sample 1: policy action 99"));
  EXPECT_EQ(trainer->counters().steps, 0u);
}

// Loss scaling, exercised on CPU in fp32: a scale of 2^200 is inf as a float, so the scaled
// gradients are inf or NaN and the first steps are skipped while the scale backs off (by 2^-16
// here, to get below 2^128 quickly); once a step is taken, its update equals the update of an
// unscaled trainer (power-of-two scales cancel exactly).
TEST(TrainerTest, LossScalingBacksOffOnOverflowAndThenMatchesUnscaledTraining) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 7);
  TrainerOptions scaled_options = TinyOptions();
  scaled_options.loss_scaling = LossScalingMode::kOn;
  scaled_options.loss_scaler.init_scale = std::ldexp(1.0, 200);
  scaled_options.loss_scaler.max_scale = std::ldexp(1.0, 200);
  scaled_options.loss_scaler.backoff_factor = std::ldexp(1.0, -16);
  auto scaled = MakeTrainer(scaled_options);
  ASSERT_TRUE(scaled->UsesLossScaling());

  int skipped = 0;
  for (int attempt = 0; attempt < 40 && scaled->counters().steps == 0; ++attempt) {
    const Result<TrainStepResult> r = scaled->TrainStep(set.samples, set.Encoder());
    ASSERT_TRUE(r.ok());
    if (r->stats.skipped != SkipReason::kNone) {
      EXPECT_EQ(r->stats.skipped, SkipReason::kNonFiniteGradient);
      EXPECT_EQ(scaled->counters().loss_scale, std::ldexp(r->stats.loss_scale, -16));
      ++skipped;
    }
  }
  ASSERT_EQ(scaled->counters().steps, 1u);
  // Every scale from 2^200 down to 2^136 is inf as a float: at least those five steps overflow.
  EXPECT_GE(skipped, 5);
  EXPECT_EQ(scaled->counters().skipped_nonfinite_gradient, static_cast<std::uint64_t>(skipped));
  EXPECT_EQ(scaled->counters().scaler_overflows, skipped);

  TrainerOptions plain_options = TinyOptions();
  plain_options.loss_scaling = LossScalingMode::kOff;
  auto plain = MakeTrainer(plain_options);
  ASSERT_FALSE(plain->UsesLossScaling());
  ASSERT_TRUE(plain->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(scaled->SaveWeights(dir.File("scaled"), 1).ok());
  ASSERT_TRUE(plain->SaveWeights(dir.File("plain"), 1).ok());
  ExpectAllNear(EvalOutputs(dir.File("scaled"), set), EvalOutputs(dir.File("plain"), set), 1e-5f);
}

// Three steps, a checkpoint, a fresh trainer of another seed restored from it: the restored
// counters are the checkpoint's, and the same next steps from both give the same model (weights, BN
// statistics and the optimizer's state all came back).
void ExpectCheckpointResumesTrainingExactly(const TrainerOptions& options) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 8);
  const testing::SampleSet other = testing::MakeSamples(testing::TinyConfig(), 8, 9);
  auto original = MakeTrainer(options);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(original->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(original->SaveCheckpoint(dir.File("ckpt"), 7).ok());

  TrainerOptions different_seed = options;
  different_seed.runtime.seed = 999;
  auto resumed = MakeTrainer(different_seed);
  const Result<WeightsFileInfo> info = resumed->LoadCheckpoint(dir.File("ckpt"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->model_version, 7u);
  EXPECT_EQ(info->train_step, 3u);
  EXPECT_EQ(resumed->counters().steps, 3u);

  for (int i = 0; i < 2; ++i) {
    const Result<TrainStepResult> a = original->TrainStep(other.samples, other.Encoder());
    const Result<TrainStepResult> b = resumed->TrainStep(other.samples, other.Encoder());
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NEAR(a->stats.loss, b->stats.loss, 1e-6);
  }
  ASSERT_TRUE(original->SaveWeights(dir.File("a"), 0).ok());
  ASSERT_TRUE(resumed->SaveWeights(dir.File("b"), 0).ok());
  ExpectAllNear(EvalOutputs(dir.File("a"), set), EvalOutputs(dir.File("b"), set), 1e-6f);
}

// Adam's moments come back.
TEST(TrainerTest, CheckpointResumesTrainingExactly) {
  ExpectCheckpointResumesTrainingExactly(TinyOptions());
}

TrainerOptions TinySgdOptions() {
  TrainerOptions o = TinyOptions();
  o.optimizer = OptimizerKind::kSgd;
  o.learning_rate = 0.05;
  return o;
}

TEST(TrainerTest, SgdWithMomentumDrivesTheLossDown) {
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 16, 3);
  auto trainer = MakeTrainer(TinySgdOptions());
  double first = 0.0, last = 0.0;
  TrainOnAFixedBatch(*trainer, set, 100, first, last);
  EXPECT_GT(first, 2.0);
  EXPECT_LT(last, 0.5 * first);
}

// SGD's momentum buffers come back: without them the first step after a restart would be a plain
// gradient step, far from the original's.
TEST(TrainerTest, SgdCheckpointResumesTrainingExactly) {
  ExpectCheckpointResumesTrainingExactly(TinySgdOptions());
}

TEST(TrainerTest, ACheckpointOfTheOtherOptimizerIsRefusedAndStateKept) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 4, 10);
  auto adam = MakeTrainer(TinyOptions());
  auto sgd = MakeTrainer(TinySgdOptions());
  ASSERT_TRUE(adam->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(adam->SaveCheckpoint(dir.File("adam"), 1).ok());
  ASSERT_TRUE(sgd->SaveCheckpoint(dir.File("sgd"), 0).ok());

  Status status = sgd->LoadCheckpoint(dir.File("adam")).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("holds adam optimizer state; this trainer uses sgd"));
  EXPECT_EQ(sgd->counters().steps, 0u);
  status = adam->LoadCheckpoint(dir.File("sgd")).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("holds sgd optimizer state; this trainer uses adam"));
  EXPECT_EQ(adam->counters().steps, 1u);

  // AdamW keeps Adam's state: switching between the two resumes.
  TrainerOptions adamw = TinyOptions();
  adamw.decoupled_weight_decay = true;
  EXPECT_TRUE(MakeTrainer(adamw)->LoadCheckpoint(dir.File("adam")).ok());
  // The weights of either can start the other (a new run from an old run's weights).
  EXPECT_TRUE(sgd->LoadWeights(dir.File("adam")).ok());
}

TEST(TrainerTest, SgdRefusesAdamWsDecayAndABadMomentum) {
  TrainerOptions o = TinySgdOptions();
  o.decoupled_weight_decay = true;
  EXPECT_THAT(o.Validate().ToString(), HasSubstr("decoupled_weight_decay is AdamW's"));
  o = TinySgdOptions();
  o.momentum = 1.0;
  EXPECT_THAT(o.Validate().ToString(), HasSubstr("momentum"));
}

TEST(TrainerTest, LoadCheckpointRefusesWrongFilesAndKeepsState) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 4, 10);
  auto trainer = MakeTrainer(TinyOptions());
  ASSERT_TRUE(trainer->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(trainer->SaveWeights(dir.File("weights"), 1).ok());
  Status status = trainer->LoadCheckpoint(dir.File("weights")).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("is a weights file, not a checkpoint"));

  TrainerOptions wider = TinyOptions();
  wider.net.filters = 16;
  auto other = MakeTrainer(wider);
  ASSERT_TRUE(other->SaveCheckpoint(dir.File("wide"), 1).ok());
  status = trainer->LoadCheckpoint(dir.File("wide")).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("holds a network of 1x16"));
  EXPECT_EQ(trainer->counters().steps, 1u);
  // Weights can come from a checkpoint, though.
  EXPECT_TRUE(other->LoadWeights(dir.File("wide")).ok());
}

// Growing a trained network (learner --grow-blocks): the deeper one computes what the shallow one
// did (its model and its moving average), keeps the counters, writes checkpoints and weights of its
// new depth, which a trainer of that depth resumes, and trains on.
TEST(TrainerTest, DeepenKeepsWhatTheNetworkComputesAndTrainsOn) {
  testing::ScratchDir dir;
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 12);
  TrainerOptions options = TinySgdOptions();
  options.ema_decay = 0.9;
  auto trainer = MakeTrainer(options);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(trainer->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(trainer->SaveWeights(dir.File("shallow"), 1).ok());
  const TrainerCounters before = trainer->counters();

  ASSERT_TRUE(trainer->Deepen(3).ok());
  EXPECT_EQ(trainer->options().net.blocks, 3);
  EXPECT_EQ(trainer->counters().steps, before.steps);
  EXPECT_EQ(trainer->counters().train_seconds, before.train_seconds);
  ASSERT_TRUE(trainer->SaveWeights(dir.File("deep"), 1).ok());
  const Result<WeightsFileInfo> info = ReadWeightsFileInfo(dir.File("deep"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->net.blocks, 3);
  ExpectAllNear(EvalOutputs(dir.File("deep"), set), EvalOutputs(dir.File("shallow"), set), 1e-5f);

  // Not deeper, and not in a group: refused, nothing changed.
  EXPECT_EQ(trainer->Deepen(3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(trainer->Deepen(2).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(trainer->options().net.blocks, 3);

  double first = 0.0, last = 0.0;
  TrainOnAFixedBatch(*trainer, set, 60, first, last);
  EXPECT_EQ(trainer->counters().steps, before.steps + 60);
  EXPECT_LT(last, first);
  ASSERT_TRUE(trainer->SaveCheckpoint(dir.File("ckpt"), 2).ok());
  TrainerOptions deep = options;
  deep.net.blocks = 3;
  const Result<WeightsFileInfo> resumed = MakeTrainer(deep)->LoadCheckpoint(dir.File("ckpt"));
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->train_step, before.steps + 60);
}

TEST(TrainerTest, WarmupRampsTheLearningRate) {
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 4, 11);
  TrainerOptions o = TinyOptions();
  o.learning_rate = 0.004;
  o.warmup_steps = 4;
  auto trainer = MakeTrainer(o);
  for (int step = 1; step <= 5; ++step) {
    const Result<TrainStepResult> r = trainer->TrainStep(set.samples, set.Encoder());
    ASSERT_TRUE(r.ok());
    EXPECT_NEAR(r->stats.learning_rate, 0.001 * std::min(step, 4), 1e-12);
  }
  trainer->SetLearningRate(0.01);
  EXPECT_NEAR(trainer->TrainStep(set.samples, set.Encoder())->stats.learning_rate, 0.01, 1e-12);
}

TEST(TrainerTest, CosineDecayReachesTheFloorAndStaysThere) {
  TrainerOptions o;
  o.decay_steps = 100;
  o.min_learning_rate = 1e-4;
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 0), 1e-3, 1e-15);
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 50), (1e-3 + 1e-4) / 2, 1e-12);  // cos(pi/2) = 0
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 100), 1e-4, 1e-15);
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 5000), 1e-4, 1e-15);
  for (std::uint64_t step = 1; step <= 100; ++step) {
    EXPECT_LE(ScheduledLearningRate(o, 1e-3, step), ScheduledLearningRate(o, 1e-3, step - 1));
  }
  // Warm-up scales the decayed rate; no decay is the constant rate.
  o.warmup_steps = 10;
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 0), 1e-4 * 0 + 1e-3 / 10, 1e-12);
  o.decay_steps = 0;
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 5000), 1e-3, 1e-15);
  // The trainer reports and uses it.
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 4, 11);
  TrainerOptions t = TinyOptions();
  t.learning_rate = 0.002;
  t.decay_steps = 2;
  t.min_learning_rate = 0.001;
  auto trainer = MakeTrainer(t);
  EXPECT_NEAR(trainer->TrainStep(set.samples, set.Encoder())->stats.learning_rate, 0.002, 1e-12);
  EXPECT_NEAR(trainer->TrainStep(set.samples, set.Encoder())->stats.learning_rate, 0.0015, 1e-12);
  EXPECT_NEAR(trainer->TrainStep(set.samples, set.Encoder())->stats.learning_rate, 0.001, 1e-12);
}

// A run of a fixed length in time (scripts/run --minutes) anneals over its minutes whatever the
// machine's speed: the cosine over seconds has the step schedule's shape.
TEST(TrainerTest, CosineDecayOverSecondsFollowsTheTrainingTime) {
  TrainerOptions o;
  o.decay_seconds = 600.0;
  o.min_learning_rate = 1e-4;
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 0, 0.0), 1e-3, 1e-15);
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 1000000, 300.0), (1e-3 + 1e-4) / 2, 1e-12);
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 7, 600.0), 1e-4, 1e-15);
  EXPECT_NEAR(ScheduledLearningRate(o, 1e-3, 7, 1e6), 1e-4, 1e-15);
  for (int second = 1; second <= 600; ++second) {
    EXPECT_LE(ScheduledLearningRate(o, 1e-3, 0, second),
              ScheduledLearningRate(o, 1e-3, 0, second - 1));
  }
  // Both schedules at once are refused, and so is a negative or non-finite time.
  o.decay_steps = 100;
  EXPECT_THAT(o.Validate().message(), HasSubstr("not both"));
  o.decay_steps = 0;
  o.decay_seconds = -1.0;
  EXPECT_THAT(o.Validate().message(), HasSubstr("decay_seconds"));
  o.decay_seconds = std::nan("");
  EXPECT_THAT(o.Validate().message(), HasSubstr("decay_seconds"));
}

// The trainer counts the time between its steps, leaves out what came before its first step, and
// keeps the count in checkpoints: a restarted learner goes on along the same schedule.
TEST(TrainerTest, TrainingTimeIsCountedBetweenStepsAndResumedFromCheckpoints) {
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 4, 11);
  TrainerOptions o = TinyOptions();
  o.learning_rate = 0.002;
  o.decay_seconds = 3600.0;
  o.min_learning_rate = 0.0;
  auto trainer = MakeTrainer(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // before the first step: not counted
  const Result<TrainStepResult> first = trainer->TrainStep(set.samples, set.Encoder());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(trainer->counters().train_seconds, 0.0);
  EXPECT_NEAR(first->stats.learning_rate, 0.002, 1e-15);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const Result<TrainStepResult> second = trainer->TrainStep(set.samples, set.Encoder());
  ASSERT_TRUE(second.ok());
  const double counted = trainer->counters().train_seconds;
  EXPECT_GE(counted, 0.2);
  EXPECT_LT(second->stats.learning_rate, 0.002);
  EXPECT_NEAR(second->stats.learning_rate, ScheduledLearningRate(o, 0.002, 1, counted), 1e-15);

  testing::ScratchDir dir;
  ASSERT_TRUE(trainer->SaveCheckpoint(dir.File("ckpt"), 2).ok());
  auto resumed = MakeTrainer(o);
  ASSERT_TRUE(resumed->LoadCheckpoint(dir.File("ckpt")).ok());
  EXPECT_EQ(resumed->counters().train_seconds, counted);
  // The downtime of a restart is not training: the first step after the restore adds nothing.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const Result<TrainStepResult> after = resumed->TrainStep(set.samples, set.Encoder());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(resumed->counters().train_seconds, counted);
  EXPECT_NEAR(after->stats.learning_rate, ScheduledLearningRate(o, 0.002, 2, counted), 1e-15);
}

TEST(TrainerOptionsTest, RejectsBadValuesByName) {
  TrainerOptions o = TinyOptions();
  o.learning_rate = -1.0;
  EXPECT_THAT(o.Validate().message(), HasSubstr("learning_rate"));
  o = TinyOptions();
  o.adam_beta2 = 1.0;
  EXPECT_THAT(o.Validate().message(), HasSubstr("betas"));
  o = TinyOptions();
  o.runtime.device = DeviceChoice::kCuda;
  // On a machine without CUDA this is refused up front; with CUDA it works.
  const Result<std::unique_ptr<Trainer>> cuda = Trainer::Create(o);
  if (!cuda.ok()) {
    EXPECT_EQ(cuda.status().code(), StatusCode::kFailedPrecondition);
  }
}

}  // namespace
}  // namespace az::nn
