// The rate limiter's arithmetic (services/replay/server/rate_limiter.h), in process.

#include "services/replay/server/rate_limiter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/services/replay/server/server_test_util.h"

namespace az::replayd {
namespace {

using ::testing::HasSubstr;

TEST(RateLimiterTest, WithoutARatioOnlyTheMinimumSizeHoldsSamplesBack) {
  RateLimiter limiter({.samples_per_insert = 0, .min_size_to_sample = 5}, 0);
  EXPECT_EQ(limiter.TryAcquireSample(1, 4).code(), StatusCode::kUnavailable);
  EXPECT_TRUE(limiter.TryAcquireSample(1000000, 5).ok());
  EXPECT_TRUE(limiter.CanInsert(1000000));
}

TEST(RateLimiterTest, SamplesFollowInsertsWithinTheErrorBuffer) {
  // 2 draws per insert, 10 draws of slack, after 5 records: offset 10, draws need diff >= 0.
  RateLimiter limiter({.samples_per_insert = 2, .min_size_to_sample = 5, .error_buffer = 10}, 0);
  limiter.OnInsert(5);                                // diff = 10
  EXPECT_TRUE(limiter.TryAcquireSample(10, 5).ok());  // diff = 0
  Status wait = limiter.TryAcquireSample(1, 5);
  EXPECT_EQ(wait.code(), StatusCode::kUnavailable);
  EXPECT_THAT(wait.message(), HasSubstr("0 available"));
  limiter.OnInsert(1);  // +2
  EXPECT_TRUE(limiter.TryAcquireSample(2, 6).ok());
  EXPECT_EQ(limiter.TryAcquireSample(1, 6).code(), StatusCode::kUnavailable);
  limiter.RefundSample(2);
  EXPECT_TRUE(limiter.TryAcquireSample(2, 6).ok());
  // A batch larger than the error buffer could never be served.
  EXPECT_EQ(limiter.TryAcquireSample(11, 100).code(), StatusCode::kFailedPrecondition);
}

TEST(RateLimiterTest, CreditBeyondTheBufferIsForgivenUnlessInsertsBlock) {
  RateLimiter forgiving({.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 4}, 0);
  forgiving.OnInsert(100);  // diff would be 100; max_diff = 1 + 4
  EXPECT_EQ(forgiving.State().diff, 5);
  EXPECT_EQ(forgiving.State().forgiven, 95);
  // At most the buffer above the balance point plus the buffer below it: 2 x 4 draws.
  EXPECT_TRUE(forgiving.TryAcquireSample(4, 100).ok());
  EXPECT_TRUE(forgiving.TryAcquireSample(4, 100).ok());
  EXPECT_EQ(forgiving.TryAcquireSample(1, 100).code(), StatusCode::kUnavailable);

  RateLimiter blocking(
      {.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 4, .block_inserts = true},
      0);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(blocking.CanInsert(1)) << i;
    blocking.OnInsert(1);
  }
  EXPECT_FALSE(blocking.CanInsert(1));                // diff 5 + 1 > max_diff 5
  EXPECT_TRUE(blocking.TryAcquireSample(3, 5).ok());  // diff 2
  EXPECT_TRUE(blocking.CanInsert(1));
  EXPECT_FALSE(blocking.CanInsert(1000));
  // A large insert is never stuck for good: allowed once the learner is at the balance point.
  EXPECT_TRUE(blocking.TryAcquireSample(1, 5).ok());  // diff 1 = offset
  EXPECT_TRUE(blocking.CanInsert(1000));
}

TEST(RateLimiterTest, RecordsFoundAtStartCountWithNoMoreThanTheUsualCredit) {
  RateLimiter limiter({.samples_per_insert = 4, .min_size_to_sample = 10, .error_buffer = 100},
                      100000);
  const RateLimiterState state = limiter.State();
  EXPECT_EQ(state.inserts, 100000u);
  EXPECT_EQ(state.diff, state.max_diff);
  // 100 draws of credit above the balance point (offset 40) and 100 below it.
  EXPECT_TRUE(limiter.TryAcquireSample(100, 100000).ok());
  EXPECT_TRUE(limiter.TryAcquireSample(100, 100000).ok());
  EXPECT_EQ(limiter.TryAcquireSample(1, 100000).code(), StatusCode::kUnavailable);
}

TEST(RateLimiterTest, BadOptionsAreRefusedAndChangesTakeEffectAtOnce) {
  EXPECT_FALSE(ValidateRateLimiterOptions({.samples_per_insert = -1}).ok());
  EXPECT_FALSE(ValidateRateLimiterOptions({.min_size_to_sample = 0}).ok());
  EXPECT_FALSE(ValidateRateLimiterOptions({.samples_per_insert = 8, .error_buffer = 4}).ok());
  RateLimiter limiter({.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 10}, 0);
  limiter.OnInsert(1);
  EXPECT_EQ(limiter.TryAcquireSample(20, 1).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(limiter.SetOptions({.samples_per_insert = 1, .error_buffer = 0.5}).ok());
  ASSERT_TRUE(limiter.SetOptions({.samples_per_insert = 0, .min_size_to_sample = 1}).ok());
  EXPECT_TRUE(limiter.TryAcquireSample(20, 1).ok());
}

TEST(RateLimiterTest, WaitersWakeWhenInsertsArrive) {
  RateLimiter limiter({.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 1}, 0);
  const std::uint64_t seen = limiter.version();
  // The insert comes while the waiter waits; a lost wake-up would hold it to its deadline.
  std::thread inserter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    limiter.OnInsert(1);
  });
  const auto start = std::chrono::steady_clock::now();
  limiter.WaitForChange(seen, start + std::chrono::seconds(20));
  const auto waited = std::chrono::steady_clock::now() - start;
  inserter.join();
  EXPECT_LT(waited, std::chrono::seconds(10)) << "the waiter slept to its deadline";
  EXPECT_NE(limiter.version(), seen);
  EXPECT_TRUE(limiter.TryAcquireSample(1, 1).ok());
}

TEST(RateLimiterTest, AWaitWithNothingChangingEndsAtItsDeadline) {
  RateLimiter limiter({.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 1}, 0);
  const auto start = std::chrono::steady_clock::now();
  limiter.WaitForChange(limiter.version(), start + std::chrono::milliseconds(100));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST(RateLimiterTest, ConcurrentSamplersNeverDrawMoreThanTheRatioAllows) {
  // 2 draws per insert, 4 of slack, from the first record on: offset r * m = 2, so a draw needs
  // diff - 1 >= 2 - 4, that is draws <= 2 * inserts + 2 (less any credit forgiven).
  RateLimiter limiter({.samples_per_insert = 2, .min_size_to_sample = 1, .error_buffer = 4}, 0);
  std::atomic<std::uint64_t> inserted{0};
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> drawn{0};
  std::atomic<bool> overdrawn{false};
  std::vector<std::thread> samplers;
  for (int t = 0; t < 3; ++t) {
    samplers.emplace_back([&] {
      while (!stop.load()) {
        const std::uint64_t seen = limiter.version();
        if (limiter.TryAcquireSample(1, inserted.load()).ok()) {
          const std::uint64_t total = drawn.fetch_add(1) + 1;
          if (total > 2 * limiter.State().inserts + 2) overdrawn.store(true);
          continue;
        }
        limiter.WaitForChange(seen, std::chrono::steady_clock::now() + std::chrono::seconds(5));
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    limiter.OnInsert(1);
    inserted.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // The samplers take every draw the inserts paid for, then stay held back at the balance point
  // minus the buffer.
  EXPECT_TRUE(
      testing::WaitFor([&] { return limiter.State().diff == -2; }, std::chrono::seconds(20)))
      << limiter.State().ToJson().dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const RateLimiterState state = limiter.State();
  EXPECT_EQ(state.diff, -2);
  EXPECT_EQ(static_cast<double>(drawn.load()), 2.0 * 200 + 2 - state.forgiven);
  stop.store(true);
  limiter.Wake();
  for (std::thread& t : samplers) t.join();
  EXPECT_FALSE(overdrawn.load());
}

}  // namespace
}  // namespace az::replayd
