// The learner loop in process: a real (tiny) trainer on real Connect Four samples, served by a fake
// batch source, with hooks that write real checkpoints. The loss falls on a fixed batch; every key
// drawn gets its loss back (unless the source samples uniformly); malformed records are dropped,
// withdrawn and never trained on; non-finite
// batches are skipped and, in a row, rolled back; a source that cannot serve is waited for; the
// step counter, beta and the publish and checkpoint cadence follow the options.

#include "services/learner/loop/learner_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "core/nn/net_config.h"
#include "core/nn/trainer.h"
#include "tests/nn/test_util.h"
#include "tests/services/learner/connect_four_samples.h"
#include "tests/services/learner/loop/fake_batch_source.h"

namespace az::learner {
namespace {

using std::chrono::milliseconds;
using testing::FakeBatchSource;
using ::testing::HasSubstr;
using Kind = StepOutcome::Kind;
using Clock = std::chrono::steady_clock;

// The real Connect Four decoder, whose encoder can be poisoned with a NaN input: what a batch that
// makes the network's loss non-finite looks like to the loop.
class PoisonableDecoder final : public BatchDecoder {
 public:
  PoisonableDecoder() : inner_(BatchDecoder::Create(games::ConnectFour::kId)) {}
  void Poison(bool poison) { poison_ = poison; }

  std::size_t record_bytes() const override { return inner_->record_bytes(); }
  nn::InputLayout input_layout() const override { return inner_->input_layout(); }
  bool Fits(const nn::NetConfig& net) const override { return inner_->Fits(net); }
  Status Decode(std::span<const std::byte> records, std::size_t record_bytes,
                std::span<const double> weights, DecodedBatch& out) override {
    return inner_->Decode(records, record_bytes, weights, out);
  }
  nn::EncodeFn Encoder() const override {
    nn::EncodeFn encode = inner_->Encoder();
    if (!poison_) return encode;
    return [encode](int i, float* dst) {
      encode(i, dst);
      if (i == 0) dst[0] = std::numeric_limits<float>::quiet_NaN();
    };
  }

 private:
  std::unique_ptr<BatchDecoder> inner_;
  bool poison_ = false;
};

// Publishing counts versions; checkpoints are real files of the trainer, and a rollback loads the
// newest one.
class FakeHooks final : public LearnerLoopHooks {
 public:
  explicit FakeHooks(nn::Trainer& trainer) : trainer_(trainer) {}

  std::vector<std::uint64_t> published_at;     // trainer steps
  std::vector<std::uint64_t> checkpointed_at;  // trainer steps
  std::vector<std::uint64_t> checkpointed_for_publish_at;
  int published_without_checkpoint = 0;
  int rollbacks = 0;
  Status publish_error;

  std::optional<std::uint64_t> model_version() const override { return version_; }
  Status PublishModel() override {
    if (!publish_error.ok()) return publish_error;
    const std::uint64_t step = trainer_.counters().steps;
    // The loop's promise: the model about to be published was checkpointed first.
    if (checkpointed_for_publish_at.empty() || checkpointed_for_publish_at.back() != step) {
      ++published_without_checkpoint;
    }
    published_at.push_back(step);
    version_ = version_ ? *version_ + 1 : 0;
    return Status::Ok();
  }
  Status WriteCheckpoint(CheckpointReason why) override {
    const std::uint64_t step = trainer_.counters().steps;
    checkpointed_at.push_back(step);
    if (why == CheckpointReason::kPublish) checkpointed_for_publish_at.push_back(step);
    newest_ = dir_.File("checkpoint-" + std::to_string(step));
    return trainer_.SaveCheckpoint(newest_, version_.value_or(0));
  }
  Result<std::optional<RestoredCheckpoint>> Rollback() override {
    ++rollbacks;
    if (newest_.empty()) return std::optional<RestoredCheckpoint>();
    AZ_ASSIGN_OR_RETURN(nn::WeightsFileInfo info, trainer_.LoadCheckpoint(newest_));
    (void)info;
    return std::optional<RestoredCheckpoint>(
        RestoredCheckpoint{.step = trainer_.counters().steps, .path = newest_});
  }
  void SetVersion(std::optional<std::uint64_t> version) { version_ = version; }

 private:
  nn::Trainer& trainer_;
  nn::testing::ScratchDir dir_;
  std::string newest_;
  std::optional<std::uint64_t> version_;
};

std::vector<sample::ConnectFourSample> Samples(std::size_t n, std::uint32_t model_version = 0) {
  return testing::RandomConnectFourSamples(n, /*seed=*/5, model_version);
}

// A loop over a 1-block, 8-filter Connect Four network (milliseconds a step on a CPU).
struct Rig {
  explicit Rig(std::span<const std::byte> records, std::size_t record_bytes,
               LearnerLoopOptions options = DefaultOptions(), replay::BetaScheduleOptions beta = {})
      : source(records, record_bytes) {
    nn::TrainerOptions t;
    t.net = nn::testing::TinyConfig();
    t.runtime.device = nn::DeviceChoice::kCpu;
    t.runtime.seed = 123;
    t.runtime.input_layout = decoder.input_layout();
    t.learning_rate = 1e-2;
    Result<std::unique_ptr<nn::Trainer>> made = nn::Trainer::Create(t);
    AZ_CHECK(made.ok(), made.status().ToString());
    trainer = std::move(made).value();
    hooks = std::make_unique<FakeHooks>(*trainer);
    Result<replay::BetaSchedule> schedule = replay::BetaSchedule::Create(beta);
    AZ_CHECK(schedule.ok(), schedule.status().ToString());
    Result<std::unique_ptr<LearnerLoop>> created =
        LearnerLoop::Create(options, *schedule,
                            {.trainer = trainer.get(),
                             .decoder = &decoder,
                             .source = &source,
                             .hooks = hooks.get(),
                             .interrupted = [this] { return interrupted; }});
    AZ_CHECK(created.ok(), created.status().ToString());
    loop = std::move(created).value();
  }
  explicit Rig(const std::vector<sample::ConnectFourSample>& samples,
               LearnerLoopOptions options = DefaultOptions(), replay::BetaScheduleOptions beta = {})
      : Rig(testing::Bytes(samples), sizeof(sample::ConnectFourSample), options, beta) {}

  static LearnerLoopOptions DefaultOptions() {
    LearnerLoopOptions o;
    o.batch = 16;
    o.publish_every = 1000;
    o.checkpoint_every = 0;
    o.retry_pause = milliseconds(200);
    return o;
  }

  StepOutcome MustStep() {
    Result<StepOutcome> outcome = loop->Step();
    AZ_CHECK(outcome.ok(), outcome.status().ToString());
    return std::move(outcome).value();
  }

  PoisonableDecoder decoder;
  FakeBatchSource source;
  std::unique_ptr<nn::Trainer> trainer;
  std::unique_ptr<FakeHooks> hooks;
  std::unique_ptr<LearnerLoop> loop;
  bool interrupted = false;
};

TEST(LearnerLoopTest, TrainsOnAFixedBatchAndTheLossFalls) {
  Rig rig(Samples(16));
  double first = 0, last = 0;
  for (int i = 0; i < 100; ++i) {
    const StepOutcome outcome = rig.MustStep();
    ASSERT_EQ(outcome.kind, Kind::kTrained) << i;
    ASSERT_EQ(outcome.report.samples, 16u);
    EXPECT_EQ(outcome.report.step, static_cast<std::uint64_t>(i + 1));
    ASSERT_TRUE(std::isfinite(outcome.report.loss));
    if (i == 0) first = outcome.report.loss;
    last = outcome.report.loss;
  }
  EXPECT_LT(last, 0.7 * first) << "first " << first << ", last " << last;
  EXPECT_EQ(rig.trainer->counters().steps, 100u);
  EXPECT_EQ(rig.loop->counters().steps, 100u);
  EXPECT_EQ(rig.loop->counters().samples_drawn, 1600u);
  EXPECT_EQ(rig.loop->counters().samples_trained, 1600u);
  EXPECT_EQ(rig.source.requests.size(), 100u);
  EXPECT_EQ(rig.source.requests.front().batch, 16u);
}

TEST(LearnerLoopTest, EverySampledKeyGetsItsLossBackAsItsPriority) {
  Rig rig(Samples(64));
  rig.source.SetFixed(false);
  for (int i = 0; i < 5; ++i) {
    const StepOutcome outcome = rig.MustStep();
    ASSERT_EQ(outcome.kind, Kind::kTrained);
    ASSERT_EQ(rig.source.updates.size(), static_cast<std::size_t>(i + 1));
    const std::vector<replay::PriorityUpdate>& update = rig.source.updates.back();
    const std::vector<replay::SampledSlot>& drawn = rig.source.batches.back();
    ASSERT_EQ(update.size(), drawn.size());
    for (std::size_t k = 0; k < update.size(); ++k) {
      // In draw order, with the generation it was drawn with, a finite positive loss.
      EXPECT_EQ(update[k].slot, drawn[k].slot);
      EXPECT_EQ(update[k].generation, drawn[k].generation);
      EXPECT_TRUE(std::isfinite(update[k].loss) && update[k].loss > 0) << update[k].loss;
    }
    EXPECT_TRUE(outcome.priorities_sent);
    EXPECT_TRUE(outcome.priority_error.ok());
    EXPECT_EQ(outcome.priority_counts.applied, 16u);
  }
  // A slot that self-play overwrote between the draw and the update: the loss goes back with
  // the generation that was drawn, and the source drops it as stale.
  rig.source.SetFixed(true);
  rig.source.OverwriteAfterNextDraw(0);
  const StepOutcome overwritten = rig.MustStep();
  EXPECT_EQ(overwritten.priority_counts.stale, 1u);
  EXPECT_EQ(overwritten.priority_counts.applied, 15u);
  EXPECT_EQ(rig.source.updates.back()[0].generation, 1u);
  EXPECT_EQ(rig.loop->counters().priorities_stale, 1u);
  EXPECT_EQ(rig.loop->counters().priorities_applied, 5 * 16u + 15u);
}

TEST(LearnerLoopTest, MalformedRecordsAreDroppedCountedAndWithdrawnNeverTrainedOn) {
  std::vector<sample::ConnectFourSample> samples = Samples(16);
  samples[3].magic = 0;  // not a sample
  samples[9].flags = 0;  // no outcome
  Rig rig(samples);
  const StepOutcome outcome = rig.MustStep();
  ASSERT_EQ(outcome.kind, Kind::kTrained);
  EXPECT_EQ(outcome.drawn, 16u);
  EXPECT_EQ(outcome.malformed, 2u);
  EXPECT_EQ(outcome.report.samples, 14u);
  EXPECT_EQ(rig.loop->counters().malformed, 2u);
  EXPECT_EQ(rig.loop->counters().samples_trained, 14u);

  // The malformed two are withdrawn (never drawn again until overwritten); the 14 others get their
  // losses back as priorities.
  ASSERT_EQ(rig.source.withdrawals.size(), 1u);
  ASSERT_EQ(rig.source.withdrawals[0].size(), 2u);
  EXPECT_EQ(rig.source.withdrawals[0][0].slot, 3u);
  EXPECT_EQ(rig.source.withdrawals[0][1].slot, 9u);
  EXPECT_EQ(rig.source.withdrawals[0][0].generation, rig.source.batches[0][3].generation);
  EXPECT_EQ(outcome.withdrawn, 2u);
  EXPECT_EQ(rig.loop->counters().withdrawn, 2u);
  const std::vector<replay::PriorityUpdate>& update = rig.source.updates.back();
  ASSERT_EQ(update.size(), 14u);
  for (const replay::PriorityUpdate& u : update) {
    EXPECT_NE(u.slot, 3u);
    EXPECT_NE(u.slot, 9u);
    EXPECT_GT(u.loss, 0.0) << u.slot;
  }

  // A batch of nothing but malformed records: skipped, no step, all withdrawn, no priorities.
  for (auto& s : samples) s.magic = 0;
  Rig bad(samples);
  const StepOutcome skipped = bad.MustStep();
  EXPECT_EQ(skipped.kind, Kind::kSkipped);
  EXPECT_EQ(skipped.skipped, SkipKind::kNoValidSamples);
  EXPECT_EQ(bad.trainer->counters().steps, 0u);
  EXPECT_TRUE(bad.source.updates.empty());
  ASSERT_EQ(bad.source.withdrawals.size(), 1u);
  EXPECT_EQ(bad.source.withdrawals[0].size(), 16u);
  EXPECT_EQ(bad.loop->counters().skipped_no_valid, 1u);
}

// With uniform sampling (replay alpha 0) no priority changes anything: the loop sends none, but
// still withdraws what it could not decode, which is what keeps such a record from being drawn.
TEST(LearnerLoopTest, AUniformSourceGetsNoPrioritiesButItsMalformedRecordsWithdrawn) {
  std::vector<sample::ConnectFourSample> samples = Samples(16);
  samples[5].magic = 0;
  Rig rig(samples);
  rig.source.SetPrioritized(false);
  rig.source.SetFixed(false);
  for (int i = 0; i < 4; ++i) {
    const StepOutcome outcome = rig.MustStep();
    ASSERT_EQ(outcome.kind, Kind::kTrained);
    EXPECT_FALSE(outcome.priorities_sent);
  }
  EXPECT_TRUE(rig.source.updates.empty());
  EXPECT_EQ(rig.loop->counters().priority_updates_sent, 0u);
  // Slot 5 was withdrawn once, the first time it was drawn, and never drawn after that.
  ASSERT_EQ(rig.source.withdrawals.size(), 1u);
  EXPECT_EQ(rig.source.withdrawals[0][0].slot, 5u);
  EXPECT_EQ(rig.loop->counters().withdrawn, 1u);
  std::size_t draws_after = 0;
  bool after = false;
  for (const std::vector<replay::SampledSlot>& batch : rig.source.batches) {
    for (const replay::SampledSlot& draw : batch) draws_after += after && draw.slot == 5 ? 1 : 0;
    after = after || std::any_of(batch.begin(), batch.end(),
                                 [](const replay::SampledSlot& d) { return d.slot == 5; });
  }
  EXPECT_EQ(draws_after, 0u);
  EXPECT_EQ(rig.loop->counters().malformed, rig.loop->counters().withdrawn);
}

TEST(LearnerLoopTest, ANonFiniteBatchIsSkippedWithoutPrioritiesAndTrainingGoesOn) {
  Rig rig(Samples(16));
  ASSERT_EQ(rig.MustStep().kind, Kind::kTrained);
  rig.decoder.Poison(true);
  const StepOutcome skipped = rig.MustStep();
  EXPECT_EQ(skipped.kind, Kind::kSkipped);
  EXPECT_EQ(skipped.skipped, SkipKind::kNonFiniteLoss);
  EXPECT_FALSE(skipped.priorities_sent);  // NaN losses are not priorities
  EXPECT_EQ(rig.source.updates.size(), 1u);
  EXPECT_EQ(rig.trainer->counters().steps, 1u);
  EXPECT_EQ(rig.loop->counters().skipped_nonfinite, 1u);
  EXPECT_EQ(rig.loop->counters().steps, 1u);

  rig.decoder.Poison(false);
  const StepOutcome next = rig.MustStep();
  EXPECT_EQ(next.kind, Kind::kTrained);
  EXPECT_EQ(next.report.step, 2u);
  EXPECT_EQ(rig.source.updates.size(), 2u);
}

TEST(LearnerLoopTest, NonFiniteBatchesInARowRollBackToTheNewestCheckpoint) {
  LearnerLoopOptions o = Rig::DefaultOptions();
  o.checkpoint_every = 5;
  o.rollback_after_skips = 2;
  Rig rig(Samples(16), o);
  for (int i = 0; i < 7; ++i) ASSERT_EQ(rig.MustStep().kind, Kind::kTrained);
  ASSERT_EQ(rig.hooks->checkpointed_at, (std::vector<std::uint64_t>{5}));

  rig.decoder.Poison(true);
  EXPECT_FALSE(rig.MustStep().rolled_back_to.has_value());
  const StepOutcome second = rig.MustStep();
  EXPECT_EQ(second.kind, Kind::kSkipped);
  ASSERT_TRUE(second.rolled_back_to.has_value());
  EXPECT_EQ(second.rolled_back_to->step, 5u);
  EXPECT_EQ(rig.trainer->counters().steps, 5u);  // steps 6 and 7 undone
  EXPECT_EQ(rig.loop->counters().rollbacks, 1u);

  // The count starts over: the next two skips roll back again; good batches in between reset it.
  EXPECT_FALSE(rig.MustStep().rolled_back_to.has_value());
  rig.decoder.Poison(false);
  EXPECT_EQ(rig.MustStep().kind, Kind::kTrained);
  rig.decoder.Poison(true);
  EXPECT_FALSE(rig.MustStep().rolled_back_to.has_value());
  EXPECT_EQ(rig.hooks->rollbacks, 1);
}

TEST(LearnerLoopTest, WithoutACheckpointARollbackGoesOn) {
  LearnerLoopOptions o = Rig::DefaultOptions();
  o.rollback_after_skips = 1;
  Rig rig(Samples(16), o);
  ASSERT_EQ(rig.MustStep().kind, Kind::kTrained);
  rig.decoder.Poison(true);
  const StepOutcome skipped = rig.MustStep();
  EXPECT_FALSE(skipped.rolled_back_to.has_value());
  EXPECT_EQ(rig.hooks->rollbacks, 1);
  EXPECT_EQ(rig.loop->counters().rollbacks, 0u);
  EXPECT_EQ(rig.trainer->counters().steps, 1u);
}

TEST(LearnerLoopTest, ASourceThatCannotServeIsWaitedForAndTriedAgain) {
  Rig rig(Samples(16));
  rig.source.FailNextSamples(
      {DeadlineExceeded("below the minimum size"), DeadlineExceeded("rate limited")});
  for (int i = 0; i < 2; ++i) {
    const StepOutcome waiting = rig.MustStep();
    EXPECT_EQ(waiting.kind, Kind::kWaiting);
    EXPECT_EQ(waiting.waiting_for.code(), StatusCode::kDeadlineExceeded);
    EXPECT_EQ(waiting.drawn, 0u);
  }
  EXPECT_EQ(rig.source.requests.back().timeout, milliseconds(1000));
  EXPECT_EQ(rig.trainer->counters().steps, 0u);
  EXPECT_EQ(rig.loop->counters().waits, 2u);
  EXPECT_EQ(rig.MustStep().kind, Kind::kTrained);
  EXPECT_EQ(rig.loop->counters().samples_drawn, 16u);

  // An error that comes back at once is followed by a pause (retry_pause: 200 ms) ...
  rig.source.FailNextSamples({FailedPrecondition("a batch larger than the buffer")});
  Clock::time_point start = Clock::now();
  EXPECT_EQ(rig.MustStep().kind, Kind::kWaiting);
  EXPECT_GE(Clock::now() - start, milliseconds(200));
  // ... but not a connection that dropped under the request (the source is restarting; the next
  // request waits for it by itself) ...
  rig.source.FailNextSamples({Unavailable("the connection dropped")});
  start = Clock::now();
  EXPECT_EQ(rig.MustStep().kind, Kind::kWaiting);
  EXPECT_LT(Clock::now() - start, milliseconds(150));
  // ... and one that a shutdown cuts short.
  rig.interrupted = true;
  rig.source.FailNextSamples({FailedPrecondition("shutting down")});
  start = Clock::now();
  EXPECT_EQ(rig.MustStep().kind, Kind::kWaiting);
  EXPECT_LT(Clock::now() - start, milliseconds(150));
}

TEST(LearnerLoopTest, AnotherGamesRecordsAreWaitedOnNotTrained) {
  const std::vector<std::byte> chess_sized(4 * 1160);
  Rig rig(chess_sized, 1160);
  const StepOutcome outcome = rig.MustStep();
  EXPECT_EQ(outcome.kind, Kind::kWaiting);
  EXPECT_EQ(outcome.waiting_for.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(rig.trainer->counters().steps, 0u);
  EXPECT_TRUE(rig.source.updates.empty());
}

TEST(LearnerLoopTest, APriorityUpdateWithoutAnAnswerIsCountedAndTrainingGoesOn) {
  Rig rig(Samples(16));
  rig.source.FailNextUpdates(1);
  const StepOutcome outcome = rig.MustStep();
  EXPECT_EQ(outcome.kind, Kind::kTrained);
  EXPECT_TRUE(outcome.priorities_sent);
  EXPECT_EQ(outcome.priority_error.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(rig.loop->counters().priority_updates_failed, 1u);
  EXPECT_EQ(rig.MustStep().priority_counts.applied, 16u);
  EXPECT_EQ(rig.loop->counters().priorities_applied, 16u);
}

TEST(LearnerLoopTest, StepsBetaAndTheCadenceOfModelsAndCheckpointsFollowTheOptions) {
  LearnerLoopOptions o = Rig::DefaultOptions();
  o.max_steps = 10;
  o.publish_every = 3;
  o.checkpoint_every = 4;
  replay::BetaScheduleOptions beta;
  beta.start = 0.4;
  beta.end = 1.0;
  beta.horizon = 10;
  Rig rig(Samples(16, /*model_version=*/0), o, beta);
  rig.hooks->SetVersion(0);  // model 0 was published before the loop started
  int steps = 0;
  while (!rig.loop->Done()) {
    const StepOutcome outcome = rig.MustStep();
    ASSERT_EQ(outcome.kind, Kind::kTrained);
    ++steps;
    EXPECT_EQ(outcome.published, steps % 3 == 0);
    EXPECT_EQ(outcome.checkpointed, steps % 3 == 0 || steps % 4 == 0);
    // Staleness: the samples were searched by model 0.
    const std::uint64_t version = steps <= 3 ? 0 : steps <= 6 ? 1 : steps <= 9 ? 2 : 3;
    ASSERT_EQ(outcome.report.staleness.size(), 16u);
    EXPECT_EQ(outcome.report.staleness[0], static_cast<double>(version));
    EXPECT_NEAR(outcome.next_beta, std::min(1.0, 0.4 + 0.06 * steps), 1e-9);
    ASSERT_LT(steps, 20);
  }
  EXPECT_EQ(steps, 10);
  EXPECT_EQ(rig.trainer->counters().steps, 10u);
  EXPECT_EQ(rig.hooks->published_at, (std::vector<std::uint64_t>{3, 6, 9}));
  // Every published model was checkpointed just before it was published (a kill never loses a
  // published model), and the periodic checkpoints fall in between.
  EXPECT_EQ(rig.hooks->checkpointed_at, (std::vector<std::uint64_t>{3, 4, 6, 8, 9}));
  EXPECT_EQ(rig.hooks->checkpointed_for_publish_at, (std::vector<std::uint64_t>{3, 6, 9}));
  EXPECT_EQ(rig.hooks->published_without_checkpoint, 0);
  EXPECT_EQ(rig.loop->counters().models_published, 3u);
  EXPECT_EQ(rig.loop->counters().checkpoints_written, 5u);
  // Each request carried the beta of its step and the newest model.
  ASSERT_EQ(rig.source.requests.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_NEAR(rig.source.requests[i].beta, 0.4 + 0.06 * i, 1e-9) << i;
    const std::int64_t version = i < 3 ? 0 : i < 6 ? 1 : i < 9 ? 2 : 3;
    EXPECT_EQ(rig.source.requests[i].model_version, version) << i;
  }
}

TEST(LearnerLoopTest, AHookErrorEndsTheLoop) {
  LearnerLoopOptions o = Rig::DefaultOptions();
  o.publish_every = 1;
  Rig rig(Samples(16), o);
  rig.hooks->publish_error = Unavailable("cannot write the model");
  const Result<StepOutcome> outcome = rig.loop->Step();
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.status().message(), HasSubstr("cannot write the model"));
}

TEST(LearnerLoopTest, RefusesOptionsOutOfRangeMissingPartsAndANetworkOfAnotherGame) {
  PoisonableDecoder decoder;
  FakeBatchSource source({}, 80);
  nn::TrainerOptions t;
  t.net = nn::NetConfig::ChessSmall();
  t.runtime.device = nn::DeviceChoice::kCpu;
  Result<std::unique_ptr<nn::Trainer>> chess = nn::Trainer::Create(t);
  ASSERT_TRUE(chess.ok()) << chess.status().ToString();
  FakeHooks hooks(**chess);
  Result<replay::BetaSchedule> beta = replay::BetaSchedule::Create({});
  ASSERT_TRUE(beta.ok());

  Result<std::unique_ptr<LearnerLoop>> loop = LearnerLoop::Create(
      Rig::DefaultOptions(), *beta,
      {.trainer = chess->get(), .decoder = &decoder, .source = &source, .hooks = &hooks});
  EXPECT_EQ(loop.status().code(), StatusCode::kFailedPrecondition);

  loop = LearnerLoop::Create(Rig::DefaultOptions(), *beta,
                             {.trainer = chess->get(), .decoder = &decoder, .source = &source});
  EXPECT_EQ(loop.status().code(), StatusCode::kInvalidArgument);

  LearnerLoopOptions bad = Rig::DefaultOptions();
  bad.publish_every = 0;
  loop = LearnerLoop::Create(
      bad, *beta,
      {.trainer = chess->get(), .decoder = &decoder, .source = &source, .hooks = &hooks});
  EXPECT_EQ(loop.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(loop.status().message(), HasSubstr("publish_every"));
}

}  // namespace
}  // namespace az::learner
