// Rings between real processes: many producers and consumers, wakeups across processes, idle cost,
// and recovery from processes killed while they hold a slot or sleep.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstring>
#include <iostream>
#include <vector>

#include "shm/ring.h"
#include "tests/shm/test_processes.h"

namespace az::shm {
namespace {

using ::az::shm::testing::Child;
using ::az::shm::testing::Eventually;
using ::az::shm::testing::Shared;
using ::az::shm::testing::TestScope;
using namespace std::chrono_literals;

// A record that proves its own integrity: who sent it, which one, and a checksum over the rest.
struct alignas(8) TestRecord {
  std::uint32_t producer;
  std::uint32_t reserved;
  std::uint64_t sequence;
  std::uint64_t payload[5];
  std::uint64_t checksum;
};
static_assert(sizeof(TestRecord) == 64);

std::uint64_t Mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

TestRecord MakeRecord(std::uint32_t producer, std::uint64_t sequence) {
  TestRecord r{producer, 0, sequence, {}, 0};
  std::uint64_t sum = Mix(producer * 1000003ULL + sequence);
  for (std::uint64_t& word : r.payload) {
    word = Mix(sum + 17);
    sum = sum * 31 + word;
  }
  r.checksum = sum;
  return r;
}

bool Intact(const TestRecord& r) {
  return std::memcmp(&r, &static_cast<const TestRecord&>(MakeRecord(r.producer, r.sequence)),
                     sizeof r) == 0;
}

std::span<const std::byte> Bytes(const TestRecord& r) {
  return std::as_bytes(std::span<const TestRecord>(&r, 1));
}

constexpr int kProducers = 4;
constexpr int kConsumers = 3;
constexpr std::uint64_t kPerProducer = 500'000;  // 2 million records in all

struct Tally {
  std::array<std::atomic<std::uint64_t>, kProducers * kPerProducer / 64> bits;
  std::atomic<std::uint64_t> duplicates;
  std::atomic<std::uint64_t> corrupt;
  std::atomic<std::uint64_t> received;
  std::atomic<int> producers_done;
};

TEST(RingProcessTest, ManyProducersAndConsumersMoveMillionsOfRecordsExactlyOnce) {
  TestScope scope("millions");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = sizeof(TestRecord), .capacity = 1024});
  ASSERT_TRUE(ring.ok());
  Shared<Tally> tally;
  std::vector<Child> children;
  for (int p = 0; p < kProducers; ++p) {
    children.push_back(Child::Spawn([&, p] {
      auto handle = Ring::Open(*scope, "r", sizeof(TestRecord));
      if (!handle.ok()) return 1;
      for (std::uint64_t i = 0; i < kPerProducer; ++i) {
        if (!handle->Push(Bytes(MakeRecord(p, i)), 30s).ok()) return 2;
      }
      tally->producers_done.fetch_add(1);
      return 0;
    }));
  }
  for (int c = 0; c < kConsumers; ++c) {
    children.push_back(Child::Spawn([&] {
      auto handle = Ring::Open(*scope, "r", sizeof(TestRecord));
      if (!handle.ok()) return 1;
      for (;;) {
        auto taken =
            handle->Consume(32, 20ms, [&](std::span<const std::byte> bytes, std::uint64_t) {
              TestRecord r;
              std::memcpy(&r, bytes.data(), sizeof r);
              if (r.producer >= kProducers || r.sequence >= kPerProducer || !Intact(r)) {
                tally->corrupt.fetch_add(1);
                return;
              }
              const std::uint64_t id = r.producer * kPerProducer + r.sequence;
              const std::uint64_t bit = std::uint64_t{1} << (id % 64);
              if (tally->bits[id / 64].fetch_or(bit) & bit) tally->duplicates.fetch_add(1);
              tally->received.fetch_add(1);
            });
        if (!taken.ok() && tally->producers_done.load() == kProducers) return 0;
      }
    }));
  }
  for (Child& child : children) EXPECT_EQ(child.ExitCode(std::chrono::seconds(240)), 0);
  EXPECT_EQ(tally->corrupt.load(), 0u);
  EXPECT_EQ(tally->duplicates.load(), 0u);
  EXPECT_EQ(tally->received.load(), kProducers * kPerProducer);
  std::uint64_t missing = 0;
  for (const auto& word : tally->bits) missing += 64 - __builtin_popcountll(word.load());
  EXPECT_EQ(missing, 0u);
  RingStats stats = ring->Stats();
  EXPECT_EQ(stats.produced, kProducers * kPerProducer);
  EXPECT_EQ(stats.consumed, kProducers * kPerProducer);
  EXPECT_EQ(stats.reclaimed_writes + stats.reclaimed_reads, 0u);  // nobody died
}

TEST(RingProcessTest, ASleepingConsumerIsWokenByAProducerInAnotherProcess) {
  TestScope scope("wake");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 64, .capacity = 8});
  ASSERT_TRUE(ring.ok());
  Child consumer = Child::Spawn([&] {
    auto handle = Ring::Open(*scope, "r", 64);
    if (!handle.ok()) return 1;
    std::vector<std::byte> out(64);
    auto popped = handle->Pop(out, 60s);  // far longer than the test waits
    if (!popped.ok()) return 2;
    return std::memcmp(out.data(), Bytes(MakeRecord(7, 7)).data(), 64) == 0 ? 0 : 3;
  });
  ASSERT_TRUE(Eventually([&] { return ring->Stats().sleeping_consumers == 1; }));
  ASSERT_TRUE(ring->TryPush(Bytes(MakeRecord(7, 7))));
  EXPECT_EQ(consumer.ExitCode(std::chrono::seconds(30)), 0);
}

TEST(RingProcessTest, AnIdleConsumerUsesAlmostNoCpu) {
  TestScope scope("idle");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = 64, .capacity = 8});
  ASSERT_TRUE(ring.ok());
  Child consumer = Child::Spawn([&] {
    auto handle = Ring::Open(*scope, "r", 64);
    if (!handle.ok()) return 1;
    std::vector<std::byte> out(64);
    auto popped = handle->Pop(out, 1s);
    return popped.status().code() == StatusCode::kDeadlineExceeded ? 0 : 2;
  });
  std::optional<testing::ExitInfo> info = consumer.Wait(30s);
  ASSERT_TRUE(info.has_value());
  EXPECT_TRUE(info->exited && info->code == 0);
  const double cpu_seconds = info->usage.ru_utime.tv_sec + info->usage.ru_utime.tv_usec * 1e-6 +
                             info->usage.ru_stime.tv_sec + info->usage.ru_stime.tv_usec * 1e-6;
  // Blocked for one second: a spinning consumer would burn ~1 s; a sleeping one a few ms (mostly
  // opening the ring). Generous bound, so that a loaded machine cannot fail it.
  EXPECT_LT(cpu_seconds, 0.25) << "cpu " << cpu_seconds << " s while blocked for 1 s";
  RecordProperty("idle_consumer_cpu_us", static_cast<int>(cpu_seconds * 1e6));
  std::cout << "consumer blocked for 1 s used " << cpu_seconds * 1e3 << " ms of CPU\n";
}

TEST(RingProcessTest, AHoleLeftByAKilledProducerIsSteppedOver) {
  TestScope scope("hole");
  auto ring =
      Ring::Create(*scope, "r", {.record_bytes = 64, .capacity = 4}, {.reclaim_interval = 10ms});
  ASSERT_TRUE(ring.ok());
  Shared<std::atomic<int>> inside;
  Child producer = Child::Spawn([&] {
    auto handle = Ring::Open(*scope, "r", 64);
    if (!handle.ok()) return 1;
    Status status = handle->PushWith(1s, [&](std::span<std::byte>) {
      inside->store(1);
      ::pause();  // killed here: the slot is claimed and never published
    });
    return status.ok() ? 2 : 3;
  });
  ASSERT_TRUE(Eventually([&] { return inside->load() == 1; }));
  producer.Kill();
  ASSERT_TRUE(producer.Wait(10s));
  ASSERT_TRUE(ring->TryPush(Bytes(MakeRecord(1, 1))));
  std::vector<std::byte> out(64);
  auto popped = ring->Pop(out, 10s);
  ASSERT_TRUE(popped.ok()) << popped.status().ToString();
  EXPECT_EQ(std::memcmp(out.data(), Bytes(MakeRecord(1, 1)).data(), 64), 0);
  EXPECT_EQ(ring->Stats().reclaimed_writes, 1u);
  EXPECT_EQ(ring->TryPop(out), 0u);  // the hole delivered nothing
}

TEST(RingProcessTest, ARecordHeldByAKilledConsumerGoesToAnotherWithItsPosition) {
  TestScope scope("orphan");
  auto ring =
      Ring::Create(*scope, "r", {.record_bytes = 64, .capacity = 4}, {.reclaim_interval = 10ms});
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(ring->TryPush(Bytes(MakeRecord(2, 0))));
  ASSERT_TRUE(ring->TryPush(Bytes(MakeRecord(2, 1))));
  Shared<std::atomic<std::uint64_t>> held_position;
  Child consumer = Child::Spawn([&] {
    auto handle = Ring::Open(*scope, "r", 64);
    if (!handle.ok()) return 1;
    handle->TryConsume(1, [&](std::span<const std::byte>, std::uint64_t position) {
      held_position->store(position + 1);
      ::pause();  // killed here: claimed, not released
    });
    return 2;
  });
  ASSERT_TRUE(Eventually([&] { return held_position->load() != 0; }));
  consumer.Kill();
  ASSERT_TRUE(consumer.Wait(10s));

  std::vector<std::pair<std::uint64_t, std::uint64_t>> got;  // (sequence, position)
  for (int i = 0; i < 2; ++i) {
    auto taken = ring->Consume(1, 10s, [&](std::span<const std::byte> bytes, std::uint64_t pos) {
      TestRecord r;
      std::memcpy(&r, bytes.data(), sizeof r);
      EXPECT_TRUE(Intact(r));
      got.emplace_back(r.sequence, pos);
    });
    ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  }
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(std::uint64_t{0}, held_position->load() - 1));
  EXPECT_EQ(got[1].first, 1u);
  RingStats stats = ring->Stats();
  EXPECT_EQ(stats.reclaimed_reads, 1u);
  std::vector<std::byte> out(64);
  EXPECT_EQ(ring->TryPop(out), 0u);  // delivered once, not twice
  EXPECT_EQ(stats.occupancy, 0u);
}

TEST(RingProcessTest, ProducersBlockedBehindAKilledConsumerCarryOn) {
  TestScope scope("blocked");
  auto ring =
      Ring::Create(*scope, "r", {.record_bytes = 64, .capacity = 2}, {.reclaim_interval = 10ms});
  ASSERT_TRUE(ring.ok());
  ASSERT_TRUE(ring->TryPush(Bytes(MakeRecord(3, 0))));
  Shared<std::atomic<int>> inside;
  Child consumer = Child::Spawn([&] {
    auto handle = Ring::Open(*scope, "r", 64);
    if (!handle.ok()) return 1;
    handle->TryConsume(1, [&](std::span<const std::byte>, std::uint64_t) {
      inside->store(1);
      ::pause();
    });
    return 2;
  });
  ASSERT_TRUE(Eventually([&] { return inside->load() == 1; }));
  // Fill the ring so that the next push needs the dead consumer's slot.
  ASSERT_TRUE(ring->TryPush(Bytes(MakeRecord(3, 1))));
  ASSERT_FALSE(ring->TryPush(Bytes(MakeRecord(3, 2))));
  consumer.Kill();
  ASSERT_TRUE(consumer.Wait(10s));
  Shared<std::atomic<int>> received;
  Child drainer = Child::Spawn([&] {
    auto handle = Ring::Open(*scope, "r", 64, {.reclaim_interval = 10ms});
    if (!handle.ok()) return 1;
    std::vector<std::byte> out(64);
    for (int i = 0; i < 3; ++i) {
      if (!handle->Pop(out, 10s).ok()) return 2;
      received->fetch_add(1);
    }
    return 0;
  });
  EXPECT_TRUE(ring->Push(Bytes(MakeRecord(3, 2)), 10s).ok());
  EXPECT_EQ(drainer.ExitCode(), 0);
  EXPECT_EQ(received->load(), 3);
}

TEST(RingProcessTest, AConsumerKilledWhileSleepingStopsCountingAsAWaiter) {
  TestScope scope("sleeper");
  auto ring =
      Ring::Create(*scope, "r", {.record_bytes = 64, .capacity = 4}, {.reclaim_interval = 10ms});
  ASSERT_TRUE(ring.ok());
  Child consumer = Child::Spawn([&] {
    auto handle = Ring::Open(*scope, "r", 64);
    if (!handle.ok()) return 1;
    std::vector<std::byte> out(64);
    return handle->Pop(out, 60s).ok() ? 2 : 3;
  });
  ASSERT_TRUE(Eventually([&] { return ring->Stats().sleeping_consumers == 1; }));
  consumer.Kill();
  ASSERT_TRUE(consumer.Wait(10s));
  EXPECT_EQ(ring->Stats().sleeping_consumers, 1u);  // the dead count lingers ...
  ring->ReclaimDead();
  EXPECT_EQ(ring->Stats().sleeping_consumers, 0u);  // ... until reaped: pushes stop calling wake
  EXPECT_EQ(ring->Stats().reaped_processes, 1u);
}

}  // namespace
}  // namespace az::shm
