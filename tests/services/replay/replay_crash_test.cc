// SIGKILL at any moment loses nothing az-replay acknowledged: records inserted over the control
// socket (acknowledged by the reply), priority updates (likewise), and records published to the
// sample ring (acknowledged to their producer by Push) are all there after a restart, and a ring
// record is stored exactly once even when the daemon died between committing and releasing it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "services/replay/sample_ring.h"
#include "tests/services/replay/replay_test_util.h"

namespace az::replayd {
namespace {

using testing::Client;
using testing::Daemon;
using ::testing::HasSubstr;
using testing::IdRecords;
using testing::RecordId;
using testing::ShmScope;
using testing::TempDir;
using testing::WaitFor;

constexpr int kRecordBytes = 64;

class ReplayCrashTest : public ::testing::Test {
 protected:
  std::vector<std::string> Args(std::uint64_t capacity, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--record-layout",
                                     "bytes",
                                     "--record-bytes",
                                     std::to_string(kRecordBytes),
                                     "--capacity",
                                     std::to_string(capacity),
                                     "--alpha",
                                     "1",
                                     "--epsilon",
                                     "0",
                                     "--shm-scope",
                                     shm_.spec(),
                                     "--metrics-port",
                                     "-1",
                                     "--model-events-from",
                                     ""};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  std::unique_ptr<Daemon> Start(const std::vector<std::string>& args) {
    auto daemon = std::make_unique<Daemon>(dir_.path(), args);
    EXPECT_TRUE(daemon->WaitReady()) << daemon->LogText();
    return daemon;
  }

  // Every stored record, by id, read through the daemon.
  std::map<std::uint64_t, ReadRecord> ReadAll(std::uint64_t capacity) {
    std::vector<std::uint64_t> slots(capacity);
    for (std::uint64_t s = 0; s < capacity; ++s) slots[s] = s;
    Result<std::vector<ReadRecord>> read = Client(dir_.path()).Read(slots);
    AZ_CHECK(read.ok(), read.status().ToString());
    std::map<std::uint64_t, ReadRecord> by_id;
    for (ReadRecord& record : *read) {
      if (!record.found) continue;
      std::optional<std::uint64_t> id = RecordId(record.bytes);
      if (!id) {
        ADD_FAILURE() << "a torn record is visible";
        continue;
      }
      if (!by_id.emplace(*id, std::move(record)).second) {
        ADD_FAILURE() << "record " << *id << " is stored twice";
      }
    }
    return by_id;
  }

  TempDir dir_;
  ShmScope shm_;
};

TEST_F(ReplayCrashTest, KillNineDuringInsertsAndUpdatesLosesNothingAcknowledged) {
  constexpr std::uint64_t kCapacity = 1 << 16;  // no wrap-around: every record stays
  struct Acked {
    std::uint64_t generation;
    std::optional<double> loss;  // an acknowledged priority update
  };
  std::map<std::uint64_t, Acked> acked;  // id -> what the daemon acknowledged
  std::mt19937_64 random(42);
  std::uint64_t next_id = 0;

  for (int round = 0; round < 3; ++round) {
    auto daemon = Start(Args(kCapacity));
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::thread writer([&, round] {
      std::mt19937_64 sizes(round);
      ReplayClient replay = Client(dir_.path(), std::chrono::milliseconds(1000), 1);
      // Stay below the capacity over all rounds, so that no acknowledged record is overwritten.
      const std::uint64_t budget = (round + 1) * (kCapacity / 4);
      while (!stop.load() && next_id + 64 < budget) {
        std::this_thread::sleep_for(std::chrono::microseconds(sizes() % 500));
        const std::size_t n = 1 + sizes() % 64;
        const std::uint64_t first = next_id;
        next_id += n;
        Result<InsertResult> inserted = replay.Insert(IdRecords(first, n, kRecordBytes));
        if (!inserted.ok()) return;  // killed: this batch is not acknowledged
        std::vector<replay::PriorityUpdate> updates;
        {
          std::lock_guard lock(mutex);
          for (std::size_t i = 0; i < n; ++i) {
            acked[first + i] = {inserted->generations[i], std::nullopt};
          }
        }
        // Give every other record of the batch its own loss.
        for (std::size_t i = 0; i < n; i += 2) {
          const std::uint64_t g = inserted->generations[i];
          updates.push_back({g % kCapacity, g, 0.5 + double((first + i) % 1000)});
        }
        Result<replay::UpdateCounts> counts = replay.UpdatePriorities(updates);
        if (!counts.ok()) return;
        EXPECT_EQ(counts->applied, updates.size());
        std::lock_guard lock(mutex);
        for (std::size_t i = 0; i < n; i += 2) acked[first + i].loss = updates[i / 2].loss;
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + random() % 400));
    daemon->Kill();
    stop.store(true);
    writer.join();

    // A fresh daemon on the same store finds every acknowledged record with its priority.
    auto restarted = Start(Args(kCapacity));
    std::map<std::uint64_t, ReadRecord> stored = ReadAll(kCapacity);
    std::lock_guard lock(mutex);
    ASSERT_FALSE(acked.empty());
    for (const auto& [id, expected] : acked) {
      auto it = stored.find(id);
      ASSERT_NE(it, stored.end()) << "acknowledged record " << id << " is missing (round " << round
                                  << ", " << stored.size() << " of " << acked.size() << " found)\n"
                                  << daemon->LogText() << "\n"
                                  << restarted->LogText();
      EXPECT_EQ(it->second.generation, expected.generation) << id;
      if (expected.loss) {
        EXPECT_NEAR(it->second.priority, *expected.loss, 1e-6 * *expected.loss) << id;
      }
    }
    // Unacknowledged records (the batch in flight) may or may not be there; nothing else is.
    for (const auto& [id, record] : stored) EXPECT_LT(id, next_id);
    EXPECT_EQ(restarted->Terminate(), 0);
  }
}

TEST_F(ReplayCrashTest, KillNineWhileIngestingFromTheRingLosesAndDuplicatesNothing) {
  constexpr std::uint64_t kCapacity = 1 << 15;
  constexpr std::uint64_t kRecords = 6000;
  // The producer creates a small ring, so it fills (and the producer waits) while the daemon is
  // down.
  Result<shm::Ring> ring =
      OpenSampleRing({.scope = shm_.spec(), .record_bytes = kRecordBytes, .capacity = 64});
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  std::atomic<std::uint64_t> published{0};
  std::thread producer([&] {
    const std::vector<std::byte> records = IdRecords(0, kRecords, kRecordBytes);
    for (std::uint64_t id = 0; id < kRecords; ++id) {
      const Status pushed = ring->Push(std::span(records).subspan(id * kRecordBytes, kRecordBytes),
                                       std::chrono::seconds(60));
      ASSERT_TRUE(pushed.ok()) << pushed.ToString();  // the daemon comes back in time
      published.store(id + 1);
    }
  });

  std::mt19937_64 random(7);
  std::unique_ptr<Daemon> daemon;
  for (int kill = 0; kill < 4; ++kill) {
    daemon = Start(Args(kCapacity));
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + random() % 300));
    daemon->Kill();
    // Down for a while: the ring fills and the producer waits.
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 200));
  }
  daemon = Start(Args(kCapacity));
  producer.join();
  ReplayClient replay = Client(dir_.path());
  ASSERT_TRUE(WaitFor(
      [&] {
        Result<nlohmann::json> status = replay.Status();
        return status.ok() && (*status)["size"] == kRecords;
      },
      std::chrono::seconds(60)));
  std::map<std::uint64_t, ReadRecord> stored = ReadAll(kCapacity);  // checks: no duplicates
  EXPECT_EQ(stored.size(), kRecords);
  for (std::uint64_t id = 0; id < kRecords; ++id) {
    ASSERT_TRUE(stored.count(id)) << "published record " << id << " is missing";
  }
  EXPECT_EQ(ring->Stats().occupancy, 0u);
  EXPECT_EQ(daemon->Terminate(), 0);
}

TEST_F(ReplayCrashTest, ARecordCommittedButNotReleasedBeforeAKillIsNotStoredTwice) {
  constexpr std::uint64_t kCapacity = 1024;
  Result<shm::Ring> ring =
      OpenSampleRing({.scope = shm_.spec(), .record_bytes = kRecordBytes, .capacity = 256});
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  const std::vector<std::byte> records = IdRecords(0, 100, kRecordBytes);
  for (std::uint64_t id = 0; id < 100; ++id) {
    ASSERT_TRUE(ring->Push(std::span(records).subspan(id * kRecordBytes, kRecordBytes),
                           std::chrono::seconds(10))
                    .ok());
  }
  // The test hook kills the daemon right after it commits the 37th record, inside the ring's
  // visitor: the slot is still held, so the ring hands the record to the next daemon.
  Daemon crashing(dir_.path(), Args(kCapacity, {"--crash-after-ingest", "37"}));
  EXPECT_EQ(crashing.process().Wait(), 128 + SIGKILL) << crashing.LogText();
  EXPECT_THAT(crashing.LogText(), HasSubstr("test hook"));

  auto daemon = Start(Args(kCapacity));
  ReplayClient replay = Client(dir_.path());
  ASSERT_TRUE(WaitFor([&] {
    Result<nlohmann::json> status = replay.Status();
    // 63 records never taken, plus the one the dead daemon held, delivered again.
    return status.ok() && (*status)["ring"]["occupancy"] == 0 &&
           (*status)["ring"]["ingested"].get<int>() +
                   (*status)["ring"]["duplicates_dropped"].get<int>() ==
               64;
  }));
  Result<nlohmann::json> status = replay.Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["ring"]["duplicates_dropped"], 1) << status->dump();
  EXPECT_EQ((*status)["size"], 100);
  std::map<std::uint64_t, ReadRecord> stored = ReadAll(kCapacity);  // checks: no duplicates
  EXPECT_EQ(stored.size(), 100u);
  EXPECT_EQ(daemon->Terminate(), 0);
}

}  // namespace
}  // namespace az::replayd
