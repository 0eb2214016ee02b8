// Inserts, samples (with record copies), priority updates, reads, stats and a snapshot, all at once
// from several threads on a small ring that the inserts lap constantly. Run it under
// ThreadSanitizer too (-DAZ_SANITIZE=thread). Checks: no sampled or read record is torn or paired
// with the wrong generation, the counters add up, and the sum-tree kept incrementally equals one
// rebuilt from the slots.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <latch>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/replay/replay_store.h"
#include "core/replay/snapshot.h"
#include "tests/replay/test_util.h"

namespace az::replay {
namespace {

constexpr std::uint64_t kCapacity = 96;
constexpr std::uint64_t kRecordSize = 196;  // not a multiple of 8
constexpr int kInserters = 2;
constexpr int kMinRecordsPerInserter = 2000;  // and on until the samplers are done
constexpr int kSamplers = 2;
constexpr int kBatchesPerSampler = 400;
constexpr std::size_t kBatch = 32;

// A record carries its key in its first 8 bytes and bytes derived from the key after it.
std::vector<std::byte> KeyedRecord(std::uint64_t key) {
  std::vector<std::byte> record = testing::MakeRecord(key, kRecordSize);
  std::memcpy(record.data(), &key, sizeof(key));
  return record;
}

// The record's key, or ~0 when the bytes are not one whole record.
std::uint64_t KeyOf(std::span<const std::byte> record) {
  std::uint64_t key;
  std::memcpy(&key, record.data(), sizeof(key));
  const std::vector<std::byte> expected = KeyedRecord(key);
  return std::memcmp(expected.data(), record.data(), record.size()) == 0 ? key : ~0ull;
}

class StoreConcurrencyTest : public ::testing::TestWithParam<double> {};

TEST_P(StoreConcurrencyTest, ConcurrentInsertsSamplesUpdatesAndSnapshotsStayConsistent) {
  testing::TempDir dir;
  ReplayStoreOptions options;
  options.path = dir.File("concurrent.store");
  options.capacity = kCapacity;
  options.record_size = kRecordSize;
  options.alpha = GetParam();
  auto opened = ReplayStore::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ReplayStore& store = **opened;
  // Something to sample from before the threads start.
  ASSERT_TRUE(store.Insert(KeyedRecord(~1ull)).ok());

  std::mutex mutex;
  std::unordered_map<std::uint64_t, std::uint64_t> key_of_generation;  // filled by inserters
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;           // (generation, key) drawn
  std::atomic<std::uint64_t> updates_sent{0}, applied{0}, stale{0}, rejected{0};
  std::atomic<int> failures{0};
  std::atomic<bool> inserting{true};
  std::atomic<int> samplers_running{kSamplers};
  std::atomic<std::uint64_t> inserted{0};
  // Everyone starts together, and inserters keep going until the samplers finish, so the calls
  // really overlap however the threads are scheduled.
  std::latch start(kInserters + kSamplers + 2);

  std::vector<std::thread> threads;
  for (int t = 0; t < kInserters; ++t) {
    threads.emplace_back([&, t] {
      Rng rng(t);
      start.arrive_and_wait();
      std::uint64_t done = 0;
      while (done < kMinRecordsPerInserter || samplers_running.load() > 0) {
        const int n = 1 + static_cast<int>(rng.Below(40));
        std::vector<std::byte> records;
        std::vector<std::uint64_t> keys;
        for (int i = 0; i < n; ++i) {
          const std::uint64_t key = (std::uint64_t{1} << 40) * (t + 1) + done + i;
          const auto record = KeyedRecord(key);
          records.insert(records.end(), record.begin(), record.end());
          keys.push_back(key);
        }
        std::vector<std::uint64_t> generations(n);
        if (!store.Insert(records, generations).ok()) ++failures;
        {
          std::lock_guard lock(mutex);
          for (int i = 0; i < n; ++i) key_of_generation[generations[i]] = keys[i];
        }
        done += n;
      }
      inserted += done;
    });
  }
  for (int t = 0; t < kSamplers; ++t) {
    threads.emplace_back([&, t] {
      Rng rng(100 + t);
      std::vector<SampledSlot> batch(kBatch);
      std::vector<std::byte> records(kBatch * kRecordSize);
      std::vector<std::pair<std::uint64_t, std::uint64_t>> local;
      start.arrive_and_wait();
      for (int b = 0; b < kBatchesPerSampler; ++b) {
        if (!store.Sample(0.5, rng, batch, records).ok()) {
          ++failures;
          continue;
        }
        std::vector<PriorityUpdate> updates;
        for (std::size_t k = 0; k < kBatch; ++k) {
          const std::uint64_t key = KeyOf(std::span(records).subspan(k * kRecordSize, kRecordSize));
          if (key == ~0ull) ++failures;  // torn
          if (batch[k].weight <= 0 || batch[k].weight > 1 || batch[k].probability <= 0) ++failures;
          local.emplace_back(batch[k].generation, key);
          // Some losses are garbage on purpose.
          const double loss =
              k % 11 == 0 ? std::nan("") : 0.01 * static_cast<double>(rng.Below(500));
          updates.push_back({batch[k].slot, batch[k].generation, loss});
        }
        const UpdateCounts counts = store.UpdatePriorities(updates);
        updates_sent += updates.size();
        applied += counts.applied;
        stale += counts.stale;
        rejected += counts.rejected;
      }
      --samplers_running;
      std::lock_guard lock(mutex);
      seen.insert(seen.end(), local.begin(), local.end());
    });
  }
  threads.emplace_back([&] {  // reader: records by slot and stats
    Rng rng(7);
    std::vector<std::byte> record(kRecordSize);
    start.arrive_and_wait();
    while (inserting.load()) {
      auto info = store.ReadRecord(rng.Below(kCapacity), record);
      if (info.ok() && KeyOf(record) == ~0ull) ++failures;
      const ReplayStats stats = store.Stats();
      if (stats.size > kCapacity || stats.priority_sum < 0) ++failures;
    }
  });
  threads.emplace_back([&] {  // a snapshot taken in the middle of it all
    start.arrive_and_wait();
    const Status saved = SaveSnapshot(store, dir.File("during.azsnap")).status();
    if (!saved.ok()) ++failures;
  });
  for (int t = 0; t < kInserters + kSamplers; ++t) threads[t].join();
  inserting = false;
  for (std::size_t t = kInserters + kSamplers; t < threads.size(); ++t) threads[t].join();

  EXPECT_EQ(failures.load(), 0);
  // For the record (ctest --output-on-failure, or the XML report): how much the calls overlapped.
  RecordProperty("inserted", static_cast<int>(inserted.load()));
  RecordProperty("updates_stale", static_cast<int>(stale.load()));
  for (const auto& [generation, key] : seen) {
    if (generation == 0) continue;  // the record inserted before the threads
    auto it = key_of_generation.find(generation);
    ASSERT_NE(it, key_of_generation.end()) << generation;
    ASSERT_EQ(it->second, key) << "generation " << generation << " was paired with another record";
  }
  const ReplayStats stats = store.Stats();
  EXPECT_EQ(stats.inserts, 1u + inserted.load());
  EXPECT_EQ(stats.size, kCapacity);
  EXPECT_EQ(stats.samples, static_cast<std::uint64_t>(kSamplers * kBatchesPerSampler * kBatch));
  EXPECT_EQ(applied + stale + rejected, updates_sent.load());
  EXPECT_EQ(stats.updates_applied, applied.load());
  EXPECT_EQ(stats.updates_stale, stale.load());
  EXPECT_EQ(stats.values_rejected, rejected.load());

  // The snapshot taken during the storm holds whole records only.
  {
    ReplayStoreOptions copy_options = options;
    copy_options.path = dir.File("copy.store");
    auto copy = ReplayStore::Open(copy_options);
    ASSERT_TRUE(copy.ok());
    auto loaded = LoadSnapshot(**copy, dir.File("during.azsnap"));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_GT(loaded->records_loaded, 0u);
    ASSERT_TRUE((*copy)
                    ->ForEachRecord([&](const RecordInfo&, std::span<const std::byte> bytes) {
                      EXPECT_NE(KeyOf(bytes), ~0ull);
                      return Status::Ok();
                    })
                    .ok());
  }

  // The tree kept up by all those threads equals the one rebuilt from the slots on reopen.
  opened = Status(StatusCode::kCancelled, "closed");
  auto reopened = ReplayStore::Open(options);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  const ReplayStats rebuilt = (*reopened)->Stats();
  EXPECT_EQ(rebuilt.size, stats.size);
  EXPECT_EQ(rebuilt.inserts, stats.inserts);
  EXPECT_EQ(rebuilt.priority_sum, stats.priority_sum);
  EXPECT_EQ(rebuilt.priority_min, stats.priority_min);
  EXPECT_EQ(rebuilt.priority_max, stats.priority_max);
  EXPECT_EQ((*reopened)->open_report().discarded_uncommitted, 0u);
}

INSTANTIATE_TEST_SUITE_P(PrioritizedAndUniform, StoreConcurrencyTest, ::testing::Values(0.6, 0.0),
                         [](const auto& info) {
                           return info.param == 0 ? "Uniform" : "Prioritized";
                         });

}  // namespace
}  // namespace az::replay

namespace az::replay {
namespace {

// Once the ring is full, inserts overwrite it, and whoever watches the size (the daemon's status,
// scripts/chaos's "nothing lost" check) must read the capacity throughout: the overwritten records
// count until their replacements commit. Found by scripts/chaos, which saw 299,999 of 300,000.
TEST(StoreSizeTest, AFullRingReadsItsCapacityWhileInsertsOverwriteIt) {
  // Large records, so that each insert spends a while copying between its claim and its commit.
  constexpr std::uint64_t kSlots = 32;
  constexpr std::uint64_t kBig = 64 << 10;
  constexpr std::uint64_t kPerInsert = 8;
  testing::TempDir dir;
  ReplayStoreOptions options;
  options.path = dir.File("full.store");
  options.capacity = kSlots;
  options.record_size = kBig;
  auto opened = ReplayStore::Open(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ReplayStore& store = **opened;
  const std::vector<std::byte> batch(kSlots * kBig, std::byte{7});
  ASSERT_TRUE(store.Insert(batch).ok());
  ASSERT_EQ(store.Stats().size, kSlots);

  std::atomic<bool> inserting{true};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    for (int round = 0; round < 400; ++round) {
      if (!store.Insert(std::span(batch).first(kPerInsert * kBig)).ok()) ++failures;
    }
    inserting = false;
  });
  std::uint64_t reads = 0, below = 0;
  while (inserting) {
    ++reads;
    if (store.Stats().size != kSlots) ++below;
  }
  writer.join();
  EXPECT_EQ(failures, 0);
  EXPECT_GT(reads, 0u);
  EXPECT_EQ(below, 0u) << below << " of " << reads << " reads of the size were below the capacity";
  EXPECT_EQ(store.Stats().size, kSlots);
}

}  // namespace
}  // namespace az::replay
