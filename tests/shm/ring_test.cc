#include "shm/ring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/shm/test_processes.h"

namespace az::shm {
namespace {

using ::az::shm::testing::TestScope;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::vector<std::byte> Record(std::uint32_t bytes, std::uint64_t value) {
  std::vector<std::byte> record(bytes);
  for (std::uint32_t i = 0; i < bytes; ++i) {
    record[i] = static_cast<std::byte>((value * 131 + i * 7) & 0xff);
  }
  if (bytes >= 8) std::memcpy(record.data(), &value, 8);
  return record;
}

TEST(RingTest, RecordsComeOutAsTheyWentInOneProducerOneConsumer) {
  TestScope scope("fifo");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 100, .capacity = 8});
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  for (std::uint64_t lap = 0; lap < 50; ++lap) {  // many laps around 8 slots
    for (std::uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(ring->TryPush(Record(100, lap * 5 + i)));
    std::vector<std::byte> out(100);
    for (std::uint64_t i = 0; i < 5; ++i) {
      ASSERT_EQ(ring->TryPop(out), 1u);
      EXPECT_EQ(out, Record(100, lap * 5 + i));
    }
  }
}

TEST(RingTest, TryPushFailsWhenFullAndTryPopWhenEmpty) {
  TestScope scope("full");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 16, .capacity = 4});
  ASSERT_TRUE(ring.ok());
  std::vector<std::byte> out(16);
  EXPECT_EQ(ring->TryPop(out), 0u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(ring->TryPush(Record(16, i)));
  EXPECT_FALSE(ring->TryPush(Record(16, 99)));
  EXPECT_EQ(ring->Stats().occupancy, 4u);
  EXPECT_EQ(ring->TryPop(out), 1u);
  EXPECT_TRUE(ring->TryPush(Record(16, 4)));
}

TEST(RingTest, BlockingCallsRunOutOfTimeWithDeadlineExceeded) {
  TestScope scope("deadline");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 16, .capacity = 1});
  ASSERT_TRUE(ring.ok());
  std::vector<std::byte> out(16);
  auto popped = ring->Pop(out, 5ms);
  EXPECT_EQ(popped.status().code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(ring->Push(Record(16, 1), 5ms).ok());
  Status pushed = ring->Push(Record(16, 2), 5ms);
  EXPECT_EQ(pushed.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(pushed.message(), HasSubstr("ring full"));
  RingStats stats = ring->Stats();
  EXPECT_EQ(stats.pop_timeouts, 1u);
  EXPECT_EQ(stats.push_timeouts, 1u);
  EXPECT_EQ(stats.sleeping_consumers, 0u);
  EXPECT_EQ(stats.sleeping_producers, 0u);
}

TEST(RingTest, PopTakesUpToABatchInOneCall) {
  TestScope scope("batch");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 32, .capacity = 64});
  ASSERT_TRUE(ring.ok());
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(ring->TryPush(Record(32, i)));
  std::vector<std::byte> batch(32 * 16);
  auto first = ring->Pop(batch, 1s);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 16u);
  EXPECT_EQ(std::vector<std::byte>(batch.begin() + 15 * 32, batch.begin() + 16 * 32),
            Record(32, 15));
  EXPECT_EQ(ring->TryPop(batch), 16u);
  EXPECT_EQ(ring->TryPop(batch), 8u);
  EXPECT_EQ(ring->TryPop(batch), 0u);
}

TEST(RingTest, RecordsOfEverySizeKeepTheirBytes) {
  // Sizes around the point where a record stops sharing the state word's cache line.
  for (std::uint32_t bytes : {1u, 55u, 56u, 57u, 64u, 1000u, 16384u}) {
    TestScope scope("size" + std::to_string(bytes));
    auto ring = Ring::Create(*scope, "r", {.record_bytes = bytes, .capacity = 4});
    ASSERT_TRUE(ring.ok());
    std::vector<std::byte> out(bytes);
    for (std::uint64_t i = 0; i < 10; ++i) {
      ASSERT_TRUE(ring->TryPush(Record(bytes, i)));
      ASSERT_TRUE(ring->TryPush(Record(bytes, i + 100)));
      ASSERT_EQ(ring->TryPop(out), 1u);
      EXPECT_EQ(out, Record(bytes, i)) << bytes;
      ASSERT_EQ(ring->TryPop(out), 1u);
      EXPECT_EQ(out, Record(bytes, i + 100)) << bytes;
    }
  }
}

TEST(RingTest, InPlaceProduceAndConsumeSeeDistinctPositions) {
  TestScope scope("inplace");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 8, .capacity = 4});
  ASSERT_TRUE(ring.ok());
  std::vector<std::uint64_t> positions;
  for (std::uint64_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        ring->PushWith(1s, [&](std::span<std::byte> slot) { std::memcpy(slot.data(), &i, 8); })
            .ok());
    auto taken = ring->Consume(4, 1s, [&](std::span<const std::byte> record, std::uint64_t pos) {
      std::uint64_t value;
      std::memcpy(&value, record.data(), 8);
      EXPECT_EQ(value, i);
      positions.push_back(pos);
    });
    ASSERT_TRUE(taken.ok());
    EXPECT_EQ(*taken, 1u);
  }
  std::vector<std::uint64_t> expected(10);
  for (std::uint64_t i = 0; i < 10; ++i) expected[i] = i;
  EXPECT_EQ(positions, expected);
}

TEST(RingTest, OpenChecksTheRecordSize) {
  TestScope scope("open");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 48, .capacity = 16});
  ASSERT_TRUE(ring.ok());
  auto wrong = Ring::Open(*scope, "r", 64);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("record size is 48 bytes"));
  auto right = Ring::Open(*scope, "r", 48);
  ASSERT_TRUE(right.ok());
  EXPECT_EQ(right->capacity(), 16u);
  ASSERT_TRUE(ring->TryPush(Record(48, 5)));
  std::vector<std::byte> out(48);
  EXPECT_EQ(right->TryPop(out), 1u);  // two handles, one ring
  EXPECT_EQ(out, Record(48, 5));
}

TEST(RingTest, BadSpecsAreRejected) {
  TestScope scope("spec");
  EXPECT_EQ(Ring::Create(*scope, "a", {.record_bytes = 8, .capacity = 12}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Ring::Create(*scope, "b", {.record_bytes = 0, .capacity = 8}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Ring::Create(*scope, "c", {.record_bytes = 8, .capacity = 0}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(RingTest, ThreadsWithTheirOwnHandlesMoveEveryRecordOnce) {
  TestScope scope("threads");
  constexpr int kProducers = 3;
  constexpr int kConsumers = 3;
  constexpr std::uint64_t kPerProducer = 20000;
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 16, .capacity = 64});
  ASSERT_TRUE(ring.ok());
  std::vector<std::atomic<int>> seen(kProducers * kPerProducer);
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      auto handle = Ring::Open(*scope, "r", 16);
      ASSERT_TRUE(handle.ok());
      for (std::uint64_t i = 0; i < kPerProducer; ++i) {
        const std::uint64_t id = p * kPerProducer + i;
        std::byte record[16] = {};
        std::memcpy(record, &id, 8);
        ASSERT_TRUE(handle->Push(record, 10s).ok());
      }
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      auto handle = Ring::Open(*scope, "r", 16);
      ASSERT_TRUE(handle.ok());
      for (;;) {
        auto taken = handle->Consume(8, 20ms, [&](std::span<const std::byte> r, std::uint64_t) {
          std::uint64_t id;
          std::memcpy(&id, r.data(), 8);
          seen[id].fetch_add(1);
        });
        if (!taken.ok() && done.load()) break;
      }
    });
  }
  for (int p = 0; p < kProducers; ++p) threads[p].join();
  done.store(true);
  for (std::size_t t = kProducers; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(std::count_if(seen.begin(), seen.end(), [](auto& s) { return s.load() != 1; }), 0);
  EXPECT_EQ(ring->Stats().occupancy, 0u);
}

}  // namespace
}  // namespace az::shm
