// The sampler (services/replay/server/sampler.h) in process: a real store in a temporary directory,
// a real rate limiter, real threads; the transport is the answer callback.

#include "services/replay/server/sampler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tests/services/replay/server/server_test_util.h"

namespace az::replayd {
namespace {

using ::testing::HasSubstr;
using testing::InsertIds;
using testing::OpenStore;
using testing::TempDir;
using testing::WaitFor;
using namespace std::chrono_literals;

// Collects answers; each request's answer arrives exactly once.
class Answers {
 public:
  Sampler::Answer Expect() {
    std::lock_guard lock(mutex_);
    const std::size_t index = slots_.size();
    slots_.emplace_back();
    return [this, index](Result<SampledBatch> batch) {
      std::lock_guard lock(mutex_);
      ++calls_[index];
      slots_[index].emplace(std::move(batch));
      changed_.notify_all();
    };
  }
  // Waits until request `index` is answered.
  bool Wait(std::size_t index, std::chrono::milliseconds limit = 20s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return slots_[index].has_value(); });
  }
  bool Answered(std::size_t index) {
    std::lock_guard lock(mutex_);
    return slots_[index].has_value();
  }
  Result<SampledBatch>& operator[](std::size_t index) {
    std::lock_guard lock(mutex_);
    return *slots_[index];
  }
  int Calls(std::size_t index) {
    std::lock_guard lock(mutex_);
    return calls_[index];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::optional<Result<SampledBatch>>> slots_;
  std::map<std::size_t, int> calls_;
};

// Every draw names a stored slot with its current generation, the weights are in (0, 1] with the
// largest 1, and the records are the bytes stored in those slots.
void ExpectWellFormed(const SampledBatch& batch, const replay::ReplayStore& store) {
  ASSERT_EQ(batch.draws.size, batch.args.batch * sizeof(replay::SampledSlot));
  ASSERT_EQ(batch.record_bytes, store.record_size());
  ASSERT_EQ(batch.records.size,
            batch.args.with_records ? batch.args.batch * store.record_size() : 0);
  const std::vector<replay::SampledSlot> draws = batch.Draws();
  double largest = 0;
  std::vector<std::byte> stored(store.record_size());
  for (std::uint32_t i = 0; i < batch.args.batch; ++i) {
    const replay::SampledSlot& draw = draws[i];
    Result<replay::RecordInfo> info = store.ReadRecord(draw.slot, stored);
    ASSERT_TRUE(info.ok()) << "draw " << i << " names slot " << draw.slot;
    EXPECT_EQ(info->generation, draw.generation);
    EXPECT_GT(draw.weight, 0.0);
    EXPECT_LE(draw.weight, 1.0);
    EXPECT_GT(draw.probability, 0.0);
    largest = std::max(largest, draw.weight);
    if (batch.args.with_records) {
      const std::span<const std::byte> record = batch.Record(i);
      EXPECT_TRUE(std::equal(record.begin(), record.end(), stored.begin())) << "record " << i;
      EXPECT_TRUE(testing::RecordId(record).has_value());
    }
  }
  EXPECT_DOUBLE_EQ(largest, 1.0);
}

class SamplerTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = OpenStore(dir_.path() + "/replay.store", 256); }

  TempDir dir_;
  std::unique_ptr<replay::ReplayStore> store_;
};

TEST_F(SamplerTest, AnswersEveryRequestFromManyThreadsWithAWellFormedBatch) {
  InsertIds(*store_, 0, 100);
  RateLimiter limiter({}, store_->Stats().size);
  Sampler sampler(*store_, limiter, {.prefetch = true});
  sampler.Start();
  Answers answers;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::vector<Sampler::Answer> callbacks;
  for (int i = 0; i < kThreads * kPerThread; ++i) callbacks.push_back(answers.Expect());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int index = t * kPerThread + i;
        // Shapes vary, so some requests find the prefetched batch and others discard it.
        sampler.Submit({.batch = static_cast<std::uint32_t>(1 + index % 3 * 16),
                        .beta = 0.5,
                        .with_records = index % 4 != 0,
                        .timeout = 5s},
                       callbacks[index]);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads * kPerThread; ++i) {
    ASSERT_TRUE(answers.Wait(i)) << "request " << i << " was never answered";
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().ToString();
    EXPECT_EQ(answers[i]->args.batch, static_cast<std::uint32_t>(1 + i % 3 * 16));
    EXPECT_EQ(answers[i]->args.with_records, i % 4 != 0);
    EXPECT_EQ(answers[i]->size, 100u);
    ExpectWellFormed(*answers[i], *store_);
  }
  sampler.Stop();
  for (int i = 0; i < kThreads * kPerThread; ++i) EXPECT_EQ(answers.Calls(i), 1) << i;
  const SamplerStats stats = sampler.Stats();
  EXPECT_EQ(stats.requests, static_cast<std::uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_EQ(limiter.State().samples, stats.draws);
}

TEST_F(SamplerTest, DrawsTheNextBatchAheadAndServesAMatchingRequestFromIt) {
  InsertIds(*store_, 0, 50);
  RateLimiter limiter({}, store_->Stats().size);
  Sampler sampler(*store_, limiter, {.prefetch = true, .prefetch_max_age = 60s});
  sampler.Start();
  Answers answers;
  const SampleArgs args{.batch = 32, .beta = 0.4, .with_records = true, .timeout = 5s};
  sampler.Submit(args, answers.Expect());
  ASSERT_TRUE(answers.Wait(0));
  ASSERT_TRUE(answers[0].ok());
  EXPECT_FALSE(answers[0]->prefetched);
  // The worker draws the same shape ahead; the next matching request gets it.
  ASSERT_TRUE(WaitFor([&] { return sampler.Stats().prefetch_draws == 1; }));
  sampler.Submit(args, answers.Expect());
  ASSERT_TRUE(answers.Wait(1));
  ASSERT_TRUE(answers[1].ok());
  EXPECT_TRUE(answers[1]->prefetched);
  EXPECT_LT(answers[1]->drawn_at, std::chrono::steady_clock::now());
  ExpectWellFormed(*answers[1], *store_);
  EXPECT_EQ(sampler.Stats().prefetch_hits, 1u);
  // A learner's beta moves every step: the batch drawn ahead still serves, with its importance
  // weights recomputed for the new beta ((P_min / P(i))^beta over the batch).
  ASSERT_TRUE(WaitFor([&] { return sampler.Stats().prefetch_draws == 2; }));
  SampleArgs next_beta = args;
  next_beta.beta = 0.9;
  sampler.Submit(next_beta, answers.Expect());
  ASSERT_TRUE(answers.Wait(2));
  ASSERT_TRUE(answers[2].ok());
  EXPECT_TRUE(answers[2]->prefetched);
  EXPECT_EQ(answers[2]->args.beta, 0.9);
  EXPECT_EQ(sampler.Stats().prefetch_hits, 2u);
  const std::vector<replay::SampledSlot> draws = answers[2]->Draws();
  double min_probability = 1.0;
  for (const replay::SampledSlot& d : draws) min_probability = std::min(min_probability, d.probability);
  for (const replay::SampledSlot& d : draws) {
    EXPECT_NEAR(d.weight, std::pow(min_probability / d.probability, 0.9), 1e-12);
  }
  // Another shape cannot use the batch drawn ahead: it is discarded and a fresh one drawn.
  ASSERT_TRUE(WaitFor([&] { return sampler.Stats().prefetch_draws == 3; }));
  sampler.Submit({.batch = 8, .beta = 0.4, .with_records = true, .timeout = 5s}, answers.Expect());
  ASSERT_TRUE(answers.Wait(3));
  ASSERT_TRUE(answers[3].ok());
  EXPECT_FALSE(answers[3]->prefetched);
  EXPECT_EQ(answers[3]->args.batch, 8u);
  EXPECT_GE(sampler.Stats().prefetch_discards, 1u);
}

TEST_F(SamplerTest, APrefetchedBatchOlderThanTheMaxAgeIsDrawnAgain) {
  InsertIds(*store_, 0, 50);
  RateLimiter limiter({}, store_->Stats().size);
  Sampler sampler(*store_, limiter, {.prefetch = true, .prefetch_max_age = 50ms});
  sampler.Start();
  Answers answers;
  const SampleArgs args{.batch = 4, .beta = 0.4, .with_records = true, .timeout = 5s};
  sampler.Submit(args, answers.Expect());
  ASSERT_TRUE(answers.Wait(0));
  ASSERT_TRUE(WaitFor([&] { return sampler.Stats().prefetch_draws == 1; }));
  std::this_thread::sleep_for(300ms);
  sampler.Submit(args, answers.Expect());
  ASSERT_TRUE(answers.Wait(1));
  ASSERT_TRUE(answers[1].ok());
  EXPECT_FALSE(answers[1]->prefetched);
  EXPECT_EQ(sampler.Stats().prefetch_discards, 1u);
}

TEST_F(SamplerTest, TheLimiterHoldsARequestAboveTheRatioUntilInsertsPayForIt) {
  InsertIds(*store_, 0, 10);
  // One draw per insert, 4 draws of slack either way of the balance point (1 x 1).
  RateLimiter limiter({.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 4},
                      store_->Stats().size);
  Sampler sampler(*store_, limiter, {.prefetch = false});
  sampler.Start();
  Answers answers;
  // Draw what the limiter allows now (the 10 records found at start give at most 4 + 4 draws), in
  // batches no larger than the error buffer.
  ASSERT_EQ(limiter.State().diff - limiter.State().min_diff, 8);
  for (int i = 0; i < 2; ++i) {
    sampler.Submit({.batch = 4, .beta = 0.5, .timeout = 5s}, answers.Expect());
    ASSERT_TRUE(answers.Wait(i));
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().ToString();
  }
  // The next request must wait: nothing has been inserted since.
  sampler.Submit({.batch = 3, .beta = 0.5, .timeout = 20s}, answers.Expect());
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(answers.Answered(2));
  EXPECT_EQ(sampler.Stats().waiting, 1u);
  // Two inserts pay for two draws: still not enough for three.
  InsertIds(*store_, 100, 2);
  limiter.OnInsert(2);
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(answers.Answered(2));
  // The third releases it.
  InsertIds(*store_, 102, 1);
  limiter.OnInsert(1);
  ASSERT_TRUE(answers.Wait(2, 10s));
  ASSERT_TRUE(answers[2].ok()) << answers[2].status().ToString();
  EXPECT_EQ(answers[2]->args.batch, 3u);
  EXPECT_GT(answers[2]->waited_ms, 300.0);
  ExpectWellFormed(*answers[2], *store_);
  EXPECT_EQ(sampler.Stats().waited, 1u);
  EXPECT_GE(limiter.State().sample_waits, 1u);
}

TEST_F(SamplerTest, ARequestHeldPastItsTimeoutGetsDeadlineExceededWithTheLimiterState) {
  InsertIds(*store_, 0, 3);
  // Nothing may be drawn before the buffer holds 10 records.
  RateLimiter limiter({.min_size_to_sample = 10}, store_->Stats().size);
  Sampler sampler(*store_, limiter, {});
  sampler.Start();
  Answers answers;
  const auto start = std::chrono::steady_clock::now();
  sampler.Submit({.batch = 2, .beta = 0.5, .timeout = 300ms}, answers.Expect());
  // A later request with a shorter timeout times out on its own, behind the first.
  sampler.Submit({.batch = 2, .beta = 0.5, .timeout = 100ms}, answers.Expect());
  ASSERT_TRUE(answers.Wait(1, 10s));
  EXPECT_EQ(answers[1].status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(answers[1].status().message(), HasSubstr("behind earlier requests"));
  ASSERT_TRUE(answers.Wait(0, 10s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_EQ(answers[0].status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(answers[0].status().message(), HasSubstr("rate limiter"));
  EXPECT_THAT(answers[0].status().message(), HasSubstr("min_size_to_sample"));
  EXPECT_THAT(answers[0].status().message(), HasSubstr("limiter state"));
  // A request that may not wait at all is answered at once.
  sampler.Submit({.batch = 2, .beta = 0.5, .timeout = 0ms}, answers.Expect());
  ASSERT_TRUE(answers.Answered(2));
  EXPECT_EQ(answers[2].status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(sampler.Stats().timeouts, 3u);
  EXPECT_EQ(limiter.State().sample_timeouts, 3u);
  EXPECT_EQ(limiter.State().samples, 0u);
}

TEST_F(SamplerTest, ABatchTheLimiterCanNeverServeIsRefusedAtOnce) {
  InsertIds(*store_, 0, 10);
  RateLimiter limiter({.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 8},
                      store_->Stats().size);
  Sampler sampler(*store_, limiter, {});
  sampler.Start();
  Answers answers;
  sampler.Submit({.batch = 9, .beta = 0.5, .timeout = 10s}, answers.Expect());
  ASSERT_TRUE(answers.Answered(0));
  EXPECT_EQ(answers[0].status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(answers[0].status().message(), HasSubstr("error_buffer"));
}

TEST_F(SamplerTest, StopAnswersWaitingRequestsCancelledAndLaterOnesAtOnce) {
  RateLimiter limiter({.min_size_to_sample = 1}, 0);  // an empty store: everyone waits
  Sampler sampler(*store_, limiter, {});
  sampler.Start();
  Answers answers;
  for (int i = 0; i < 3; ++i)
    sampler.Submit({.batch = 1, .beta = 0.5, .timeout = 60s}, answers.Expect());
  ASSERT_TRUE(WaitFor([&] { return sampler.Stats().waiting == 3; }));
  sampler.Stop();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(answers.Answered(i));
    EXPECT_EQ(answers[i].status().code(), StatusCode::kCancelled);
  }
  sampler.Submit({.batch = 1, .beta = 0.5, .timeout = 60s}, answers.Expect());
  ASSERT_TRUE(answers.Answered(3));
  EXPECT_EQ(answers[3].status().code(), StatusCode::kCancelled);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(answers.Calls(i), 1);
}

TEST_F(SamplerTest, AFailedDrawGivesItsDrawsBackToTheLimiter) {
  InsertIds(*store_, 0, 10);
  RateLimiter limiter({}, store_->Stats().size);
  Sampler sampler(*store_, limiter, {});
  sampler.Start();
  Answers answers;
  // The limiter allows it; the store refuses a beta outside [0, 1].
  sampler.Submit({.batch = 4, .beta = 2.0, .timeout = 1s}, answers.Expect());
  ASSERT_TRUE(answers.Answered(0));
  EXPECT_EQ(answers[0].status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(limiter.State().samples, 0u);
  EXPECT_EQ(sampler.Stats().errors, 1u);
  EXPECT_EQ(sampler.Stats().requests, 0u);
}

}  // namespace
}  // namespace az::replayd
