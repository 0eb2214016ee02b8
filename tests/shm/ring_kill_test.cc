// The crash-safety contract, tested the hard way: hundreds of short runs of real producer and
// consumer processes, each run SIGKILLing one of them at a random moment. After every run the
// survivors must have finished on their own (nobody wedged), and every record that was published
// must have been delivered exactly once. Set AZ_SHM_KILL_RUNS to run more (a soak).

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "shm/ring.h"
#include "tests/shm/test_processes.h"

namespace az::shm {
namespace {

using ::az::shm::testing::Child;
using ::az::shm::testing::Shared;
using ::az::shm::testing::TestScope;
using namespace std::chrono_literals;

constexpr int kProducers = 2;
constexpr int kConsumers = 2;
constexpr std::uint64_t kPerProducer = 200;
// Every record claims one position; a dead producer's hole claims one too.
constexpr std::uint64_t kMaxPositions = kProducers * kPerProducer + 64;
constexpr RingOptions kOptions{.spin_time = 5us, .reclaim_interval = 5ms};

// 32 KB records, written in place by the producer and checked in place by the consumer, so that a
// good share of each process's time is spent inside a claimed slot, where a kill is hardest.
struct Record {
  std::uint32_t producer;
  std::uint32_t reserved;
  std::uint64_t sequence;
  std::uint64_t body[4093];
  std::uint64_t checksum;
};
static_assert(sizeof(Record) == 32768);

void FillRecord(Record& r, std::uint32_t producer, std::uint64_t sequence) {
  r.producer = producer;
  r.reserved = 0;
  r.sequence = sequence;
  std::uint64_t x = producer * 0x9e3779b97f4a7c15ULL + sequence + 1;
  for (std::uint64_t& word : r.body) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    word = x;
  }
  r.checksum = x ^ sequence;
}

bool Intact(const Record& r) {
  if (r.producer >= 2 || r.sequence >= 1'000'000) return false;
  Record expected;
  FillRecord(expected, r.producer, r.sequence);
  return std::memcmp(&r, &expected, sizeof r) == 0;
}

// What the children report. A consumer logs each record under its ring position: the position
// names one publication, so a record delivered again after its consumer died is logged in the
// same place, while a record published twice would show up under two positions.
struct Book {
  std::array<std::atomic<std::uint64_t>, kProducers> acked;  // Push returned OK this many times
  std::array<std::atomic<std::uint64_t>, kMaxPositions> by_position;  // (producer << 32 | seq) + 1
  std::atomic<std::uint64_t> conflicts;  // one position, two different records
  std::atomic<std::uint64_t> corrupt;
  std::atomic<int> producers_done;
  std::atomic<int> started;  // children that have opened the ring
};

int RunProducer(const Scope& scope, Book& book, std::uint32_t p) {
  auto ring = Ring::Open(scope, "r", sizeof(Record), kOptions);
  if (!ring.ok()) return 1;
  book.started.fetch_add(1);
  for (std::uint64_t i = 0; i < kPerProducer; ++i) {
    Status pushed = ring->PushWith(10s, [&](std::span<std::byte> slot) {
      FillRecord(*reinterpret_cast<Record*>(slot.data()), p, i);
    });
    if (!pushed.ok()) return 2;
    book.acked[p].store(i + 1);
  }
  return 0;
}

int RunConsumer(const Scope& scope, Book& book) {
  auto ring = Ring::Open(scope, "r", sizeof(Record), kOptions);
  if (!ring.ok()) return 1;
  book.started.fetch_add(1);
  for (;;) {
    auto taken = ring->Consume(8, 20ms, [&](std::span<const std::byte> bytes, std::uint64_t pos) {
      const Record& r = *reinterpret_cast<const Record*>(bytes.data());
      if (r.producer >= kProducers || r.sequence >= kPerProducer || pos >= kMaxPositions ||
          !Intact(r)) {
        book.corrupt.fetch_add(1);
        return;
      }
      const std::uint64_t value = (std::uint64_t{r.producer} << 32 | r.sequence) + 1;
      const std::uint64_t previous = book.by_position[pos].exchange(value);
      if (previous != 0 && previous != value) book.conflicts.fetch_add(1);
    });
    // Empty for 20 ms, with reclaim passes every 5 ms during the wait, after all producers ended:
    // everything published has been taken.
    if (!taken.ok() && book.producers_done.load() == 1) return 0;
  }
}

struct RunResult {
  bool wedged = false;
  std::string failure;
  RingStats stats;
  std::chrono::nanoseconds busy{0};
};

RunResult OneRun(int victim, bool early, std::chrono::microseconds delay) {
  RunResult result;
  TestScope scope("kill");
  auto ring = Ring::Create(*scope, "r", {.record_bytes = sizeof(Record), .capacity = 8}, kOptions);
  AZ_CHECK(ring.ok(), ring.status().ToString());
  Shared<Book> book;
  std::vector<Child> producers;
  std::vector<Child> consumers;
  for (std::uint32_t p = 0; p < kProducers; ++p) {
    producers.push_back(Child::Spawn([&, p] { return RunProducer(*scope, *book, p); }));
  }
  for (int c = 0; c < kConsumers; ++c) {
    consumers.push_back(Child::Spawn([&] { return RunConsumer(*scope, *book); }));
  }
  // Kill at a random moment: mostly in the run's busy part, after everyone is up; sometimes while
  // the processes are still starting (opening the segment, registering in the ring).
  if (!early) {
    while (book->started.load() < kProducers + kConsumers) std::this_thread::yield();
  }
  const auto busy_start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(delay);
  Child& target = victim < kProducers ? producers[victim] : consumers[victim - kProducers];
  target.Kill();

  // Survivors must finish on their own. The bound only catches a wedge; a healthy run takes tens
  // of milliseconds.
  for (std::size_t p = 0; p < producers.size(); ++p) {
    std::optional<testing::ExitInfo> info = producers[p].Wait(20s);
    if (!info) return {true, "producer " + std::to_string(p) + " wedged"};
    if (static_cast<int>(p) != victim && !(info->exited && info->code == 0)) {
      return {false,
              "producer " + std::to_string(p) + " failed with " + std::to_string(info->code)};
    }
  }
  book->producers_done.store(1);
  result.busy = std::chrono::steady_clock::now() - busy_start;
  for (std::size_t c = 0; c < consumers.size(); ++c) {
    std::optional<testing::ExitInfo> info = consumers[c].Wait(20s);
    if (!info) return {true, "consumer " + std::to_string(c) + " wedged"};
    if (static_cast<int>(c) + kProducers != victim && !(info->exited && info->code == 0)) {
      return {false,
              "consumer " + std::to_string(c) + " failed with " + std::to_string(info->code)};
    }
  }

  // Nothing may be left behind for someone else to find.
  ring->ReclaimDead();
  const std::size_t leftover = ring->TryConsume(1 << 20, [](auto, auto) {});
  if (leftover != 0) return {false, std::to_string(leftover) + " records left in the ring"};
  if (book->corrupt.load() != 0) return {false, "corrupt records delivered"};
  if (book->conflicts.load() != 0) return {false, "two records under one position"};

  for (std::uint32_t p = 0; p < kProducers; ++p) {
    std::vector<int> times(kPerProducer, 0);
    for (const auto& entry : book->by_position) {
      const std::uint64_t value = entry.load();
      if (value != 0 && ((value - 1) >> 32) == p) ++times[(value - 1) & 0xffffffff];
    }
    std::uint64_t delivered = 0;
    while (delivered < kPerProducer && times[delivered] == 1) ++delivered;
    for (std::uint64_t i = 0; i < kPerProducer; ++i) {
      if (times[i] > 1) return {false, "record " + std::to_string(i) + " delivered twice"};
      if (i >= delivered && times[i] != 0) {
        return {false, "producer " + std::to_string(p) + ": record " + std::to_string(i) +
                           " delivered but " + std::to_string(delivered) + " lost"};
      }
    }
    // Every acknowledged record arrived; at most the one in flight when its producer died more.
    const std::uint64_t acked = book->acked[p].load();
    const bool killed = static_cast<int>(p) == victim;
    if (delivered < acked || delivered > acked + (killed ? 1 : 0)) {
      return {false, "producer " + std::to_string(p) + ": " + std::to_string(acked) +
                         " acknowledged, " + std::to_string(delivered) + " delivered"};
    }
  }
  result.stats = ring->Stats();
  return result;
}

TEST(RingKillTest, AfterAnySigkillSurvivorsCarryOnAndEachPublishedRecordArrivesOnce) {
  int runs = 300;
  if (const char* env = std::getenv("AZ_SHM_KILL_RUNS")) runs = std::max(1, std::atoi(env));
  const std::uint64_t seed = std::random_device{}();
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> pick_victim(0, kProducers + kConsumers - 1);
  std::uniform_int_distribution<int> pick_delay_us(0, 8000);
  std::uint64_t reclaimed_writes = 0, reclaimed_reads = 0;
  std::chrono::nanoseconds slowest{0};
  std::chrono::nanoseconds busy_total{0};
  for (int run = 0; run < runs; ++run) {
    const int victim = pick_victim(random);
    const bool early = random() % 8 == 0;
    const auto delay = std::chrono::microseconds(pick_delay_us(random) / (early ? 8 : 1));
    const auto start = std::chrono::steady_clock::now();
    RunResult result = OneRun(victim, early, delay);
    busy_total += result.busy;
    slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
    ASSERT_TRUE(result.failure.empty())
        << "run " << run << " (seed " << seed << ", victim " << victim << ", kill after "
        << delay.count() << " us" << (early ? " from the start" : "") << "): " << result.failure;
    reclaimed_writes += result.stats.reclaimed_writes;
    reclaimed_reads += result.stats.reclaimed_reads;
  }
  std::cout << runs << " runs (seed " << seed << "): " << reclaimed_writes
            << " slots of killed producers skipped, " << reclaimed_reads
            << " records of killed consumers redelivered; slowest run "
            << std::chrono::duration_cast<std::chrono::milliseconds>(slowest).count()
            << " ms, mean time to the producers' end "
            << std::chrono::duration_cast<std::chrono::microseconds>(busy_total).count() / runs
            << " us\n";
  // With hundreds of kills, some land inside a claimed slot: both recovery paths must have run.
  EXPECT_GT(reclaimed_writes, 0u);
  EXPECT_GT(reclaimed_reads, 0u);
}

}  // namespace
}  // namespace az::shm
