#include "core/replay/replay_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "tests/replay/test_util.h"

namespace az::replay {
namespace {

using testing::MakeRecord;
using testing::MakeRecords;
using testing::RecordMatches;
using testing::TempDir;

constexpr std::uint64_t kRecordSize = 24;

class ReplayStoreTest : public ::testing::Test {
 protected:
  // alpha 1 and epsilon 0 make a priority equal to the loss it was set from.
  ReplayStoreOptions Options(std::uint64_t capacity, double alpha = 1.0) {
    ReplayStoreOptions options;
    options.path = dir_.File("replay.store");
    options.capacity = capacity;
    options.record_size = kRecordSize;
    options.alpha = alpha;
    options.epsilon = 0.0;
    return options;
  }

  static std::unique_ptr<ReplayStore> MustOpen(const ReplayStoreOptions& options) {
    auto store = ReplayStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // Inserts records with keys first.. and returns their generations.
  static std::vector<std::uint64_t> Insert(ReplayStore& store, std::uint64_t first, std::size_t n) {
    std::vector<std::uint64_t> generations(n);
    const Status status = store.Insert(MakeRecords(first, n, kRecordSize), generations);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return generations;
  }

  static void SetPriority(ReplayStore& store, std::uint64_t slot, std::uint64_t generation,
                          double loss) {
    const PriorityUpdate update{slot, generation, loss};
    const UpdateCounts counts = store.UpdatePriorities({&update, 1});
    ASSERT_EQ(counts.applied, 1u);
  }

  static double PriorityOf(const ReplayStore& store, std::uint64_t slot) {
    std::vector<std::byte> record(kRecordSize);
    auto info = store.ReadRecord(slot, record);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? info->priority : -1;
  }

  // Draws `batches` batches of `batch` and counts each slot.
  static std::map<std::uint64_t, int> Histogram(ReplayStore& store, int batches, int batch,
                                                std::uint64_t seed = 1) {
    Rng rng(seed);
    std::map<std::uint64_t, int> counts;
    std::vector<SampledSlot> draws(batch);
    for (int i = 0; i < batches; ++i) {
      const Status status = store.Sample(0.5, rng, draws);
      EXPECT_TRUE(status.ok()) << status.ToString();
      for (const SampledSlot& draw : draws) ++counts[draw.slot];
    }
    return counts;
  }

  TempDir dir_;
};

TEST_F(ReplayStoreTest, SamplesPriorities1234InProportion10To40Percent) {
  auto store = MustOpen(Options(4));
  const auto generations = Insert(*store, 0, 4);
  for (std::uint64_t slot = 0; slot < 4; ++slot)
    SetPriority(*store, slot, generations[slot], slot + 1.0);
  Rng rng(2024);
  std::vector<SampledSlot> batch(250);
  std::map<std::uint64_t, int> counts;
  for (int i = 0; i < 400; ++i) {  // 100,000 draws
    ASSERT_TRUE(store->Sample(0.4, rng, batch).ok());
    for (const SampledSlot& draw : batch) {
      ++counts[draw.slot];
      ASSERT_EQ(draw.generation, generations[draw.slot]);
      ASSERT_DOUBLE_EQ(draw.probability, (draw.slot + 1) / 10.0);
    }
  }
  for (std::uint64_t slot = 0; slot < 4; ++slot) {
    EXPECT_NEAR(counts[slot] / 100'000.0, (slot + 1) / 10.0, 0.01) << "slot " << slot;
  }
}

TEST_F(ReplayStoreTest, OneHighPrioritySlotDominatesManyLowOnes) {
  auto store = MustOpen(Options(100));
  const auto generations = Insert(*store, 0, 100);
  for (std::uint64_t slot = 0; slot < 100; ++slot) {
    SetPriority(*store, slot, generations[slot], slot == 37 ? 100.0 : 0.01);
  }
  const auto counts = Histogram(*store, 100, 1000);
  const double share = counts.at(37) / 100'000.0;
  EXPECT_NEAR(share, 100.0 / (100.0 + 99 * 0.01), 0.01);
  EXPECT_GT(counts.size(), 50u);  // the rest still get their small share
}

TEST_F(ReplayStoreTest, BetaZeroGivesAllWeightsOne) {
  auto store = MustOpen(Options(50));
  const auto generations = Insert(*store, 0, 50);
  for (std::uint64_t slot = 0; slot < 50; ++slot)
    SetPriority(*store, slot, generations[slot], 1.0 + slot);
  Rng rng(3);
  std::vector<SampledSlot> batch(64);
  ASSERT_TRUE(store->Sample(0.0, rng, batch).ok());
  for (const SampledSlot& draw : batch) EXPECT_EQ(draw.weight, 1.0);
}

TEST_F(ReplayStoreTest, BetaOneGivesWeightsInverseToProbabilityNormalisedToMaxOne) {
  auto store = MustOpen(Options(50));
  const auto generations = Insert(*store, 0, 50);
  for (std::uint64_t slot = 0; slot < 50; ++slot)
    SetPriority(*store, slot, generations[slot], 1.0 + slot);
  Rng rng(4);
  std::vector<SampledSlot> batch(64);
  ASSERT_TRUE(store->Sample(1.0, rng, batch).ok());
  double min_probability = 1;
  double max_weight = 0;
  for (const SampledSlot& draw : batch)
    min_probability = std::min(min_probability, draw.probability);
  for (const SampledSlot& draw : batch) {
    EXPECT_NEAR(draw.weight * draw.probability, min_probability, 1e-15);
    EXPECT_DOUBLE_EQ(draw.probability, (1.0 + draw.slot) / (50 * 51 / 2.0));
    max_weight = std::max(max_weight, draw.weight);
  }
  EXPECT_EQ(max_weight, 1.0);
}

TEST_F(ReplayStoreTest, AlphaZeroIsUniformWithUnitWeightsWhateverTheLosses) {
  constexpr int kSlots = 50;
  auto store = MustOpen(Options(kSlots, /*alpha=*/0.0));
  ASSERT_TRUE(store->uniform());
  const auto generations = Insert(*store, 0, kSlots);
  // Losses are accepted and counted, and change nothing.
  for (int slot = 0; slot < kSlots; ++slot)
    SetPriority(*store, slot, generations[slot], slot * 10.0);
  Rng rng(77);
  std::vector<SampledSlot> batch(100);
  std::vector<int> counts(kSlots, 0);
  constexpr int kBatches = 2000;
  for (int i = 0; i < kBatches; ++i) {
    ASSERT_TRUE(store->Sample(1.0, rng, batch).ok());
    for (const SampledSlot& draw : batch) {
      ++counts[draw.slot];
      ASSERT_EQ(draw.weight, 1.0);
      ASSERT_EQ(draw.probability, 1.0 / kSlots);
      ASSERT_EQ(draw.generation, generations[draw.slot]);
    }
  }
  const double expected = kBatches * 100.0 / kSlots;
  double chi_square = 0;
  for (int count : counts) chi_square += (count - expected) * (count - expected) / expected;
  EXPECT_LT(chi_square, 85.35);  // 49 degrees of freedom, p = 0.001
  const ReplayStats stats = store->Stats();
  EXPECT_EQ(stats.priority_sum, kSlots);
  EXPECT_EQ(stats.priority_min, 1.0);
  EXPECT_EQ(stats.priority_max, 1.0);
  EXPECT_EQ(stats.updates_applied, static_cast<std::uint64_t>(kSlots));
}

TEST_F(ReplayStoreTest, EmptyBufferRefusesToSample) {
  for (double alpha : {0.0, 0.6}) {
    auto store = MustOpen(Options(16, alpha));
    Rng rng(1);
    std::vector<SampledSlot> batch(8);
    const Status status = store->Sample(0.5, rng, batch);
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status.ToString();
    EXPECT_NE(status.message().find("empty"), std::string::npos);
    store.reset();
    std::filesystem::remove(Options(16).path);
  }
}

TEST_F(ReplayStoreTest, UnderFilledBufferSamplesOnlyItsFilledSlots) {
  for (double alpha : {0.0, 0.6}) {
    auto store = MustOpen(Options(100, alpha));
    const auto generations = Insert(*store, 500, 10);
    Rng rng(8);
    std::vector<SampledSlot> batch(256);
    std::vector<std::byte> records(256 * kRecordSize);
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(store->Sample(0.5, rng, batch, records).ok());
      for (std::size_t k = 0; k < batch.size(); ++k) {
        ASSERT_LT(batch[k].slot, 10u);
        ASSERT_EQ(batch[k].generation, generations[batch[k].slot]);
        ASSERT_DOUBLE_EQ(batch[k].probability, 0.1);  // equal (initial) priorities
        ASSERT_TRUE(RecordMatches(500 + batch[k].slot,
                                  std::span(records).subspan(k * kRecordSize, kRecordSize)));
      }
    }
    EXPECT_EQ(store->Stats().size, 10u);
    store.reset();
    std::filesystem::remove(Options(100).path);
  }
}

TEST_F(ReplayStoreTest, WrapAroundOverwritesTheOldestAndDropsStaleUpdates) {
  auto store = MustOpen(Options(8));
  const auto first = Insert(*store, 0, 8);
  EXPECT_EQ(first, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // The learner samples everything, then three new records overwrite slots 0..2.
  std::vector<PriorityUpdate> updates;
  for (std::uint64_t slot = 0; slot < 8; ++slot) updates.push_back({slot, first[slot], 0.5});
  const auto second = Insert(*store, 100, 3);
  EXPECT_EQ(second, (std::vector<std::uint64_t>{8, 9, 10}));
  const double new_priority = PriorityOf(*store, 0);
  const UpdateCounts counts = store->UpdatePriorities(updates);
  EXPECT_EQ(counts.applied, 5u);
  EXPECT_EQ(counts.stale, 3u);
  EXPECT_EQ(counts.rejected, 0u);
  std::vector<std::byte> record(kRecordSize);
  for (std::uint64_t slot = 0; slot < 3; ++slot) {
    auto info = store->ReadRecord(slot, record);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->generation, 8 + slot);
    EXPECT_TRUE(RecordMatches(100 + slot, record));
    EXPECT_EQ(info->priority, new_priority);  // the stale loss did not land on the new record
  }
  for (std::uint64_t slot = 3; slot < 8; ++slot) EXPECT_EQ(PriorityOf(*store, slot), 0.5);
  const ReplayStats stats = store->Stats();
  EXPECT_EQ(stats.size, 8u);
  EXPECT_EQ(stats.inserts, 11u);
  EXPECT_EQ(stats.updates_stale, 3u);
}

TEST_F(ReplayStoreTest, InsertLargerThanCapacityKeepsTheNewest) {
  auto store = MustOpen(Options(4));
  const auto generations = Insert(*store, 0, 10);
  EXPECT_EQ(generations.back(), 9u);
  std::vector<std::byte> record(kRecordSize);
  for (std::uint64_t slot = 0; slot < 4; ++slot) {
    auto info = store->ReadRecord(slot, record);
    ASSERT_TRUE(info.ok());
    const std::uint64_t expected = slot < 2 ? 8 + slot : 4 + slot;  // generations 6..9
    EXPECT_EQ(info->generation, expected);
    EXPECT_TRUE(RecordMatches(expected, record));
  }
}

TEST_F(ReplayStoreTest, RejectsNanInfiniteNegativeLossesAndBadSlotsAndStoresNone) {
  auto store = MustOpen(Options(4));
  const auto generations = Insert(*store, 0, 4);
  SetPriority(*store, 1, generations[1], 2.0);
  const std::vector<PriorityUpdate> bad = {
      {1, generations[1], std::nan("")},
      {1, generations[1], INFINITY},
      {1, generations[1], -INFINITY},
      {1, generations[1], -0.25},
      {4, 4, 1.0},
      {~0ull, 0, 1.0},
  };
  const UpdateCounts counts = store->UpdatePriorities(bad);
  EXPECT_EQ(counts.rejected, bad.size());
  EXPECT_EQ(counts.applied, 0u);
  EXPECT_EQ(PriorityOf(*store, 1), 2.0);
  EXPECT_EQ(store->Stats().values_rejected, bad.size());
  EXPECT_TRUE(std::isfinite(store->Stats().priority_sum));
}

TEST_F(ReplayStoreTest, NewRecordsEnterAtTheLargestPriorityCurrentlyInTheBuffer) {
  ReplayStoreOptions options = Options(10);
  options.initial_priority = 3.0;
  auto store = MustOpen(options);
  const auto a = Insert(*store, 0, 1);
  EXPECT_EQ(PriorityOf(*store, 0), 3.0);  // empty buffer: the initial priority
  SetPriority(*store, 0, a[0], 7.0);
  const auto b = Insert(*store, 1, 1);
  EXPECT_EQ(PriorityOf(*store, 1), 7.0);
  SetPriority(*store, 0, a[0], 1.0);
  SetPriority(*store, 1, b[0], 2.0);
  Insert(*store, 2, 1);
  EXPECT_EQ(PriorityOf(*store, 2), 2.0);  // the current maximum, not the largest ever seen
}

TEST_F(ReplayStoreTest, ZeroPriorityRecordsAreNeverSampled) {
  auto store = MustOpen(Options(16));
  const auto generations = Insert(*store, 0, 16);
  for (std::uint64_t slot = 0; slot < 16; ++slot) {
    SetPriority(*store, slot, generations[slot], slot % 3 == 0 ? 1.0 : 0.0);
  }
  const auto counts = Histogram(*store, 200, 256);
  for (const auto& [slot, count] : counts) EXPECT_EQ(slot % 3, 0u) << "slot " << slot;
  for (std::uint64_t slot = 0; slot < 16; slot += 3) EXPECT_GT(counts.at(slot), 0);
  for (std::uint64_t slot = 0; slot < 16; slot += 3)
    SetPriority(*store, slot, generations[slot], 0.0);
  Rng rng(1);
  std::vector<SampledSlot> batch(4);
  const Status status = store->Sample(0.5, rng, batch);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("priority 0"), std::string::npos) << status.ToString();
}

// The learner withdraws a record it cannot decode; with uniform sampling (alpha 0), where no
// priority is stored, as with prioritized sampling, it must never be drawn again until its slot is
// overwritten, and a later loss for it must not bring it back.
TEST_F(ReplayStoreTest, WithdrawnRecordsAreNeverDrawnWithEitherSampling) {
  for (double alpha : {0.0, 0.6}) {
    SCOPED_TRACE("alpha " + std::to_string(alpha));
    std::filesystem::remove(Options(16).path);
    auto store = MustOpen(Options(16, alpha));
    const auto generations = Insert(*store, 0, 16);
    std::vector<RecordKey> keys;
    for (std::uint64_t slot = 0; slot < 8; ++slot) keys.push_back({slot, generations[slot]});
    keys.push_back({9, generations[9] + 16});  // another generation: stale
    keys.push_back({16, 0});                   // beyond the capacity: rejected
    const UpdateCounts counts = store->Withdraw(keys);
    EXPECT_EQ(counts.applied, 8u);
    EXPECT_EQ(counts.stale, 1u);
    EXPECT_EQ(counts.rejected, 1u);
    EXPECT_EQ(store->Withdraw(std::span(keys).first(1)).applied, 1u);  // again: still withdrawn
    const ReplayStats stats = store->Stats();
    EXPECT_EQ(stats.size, 16u);
    EXPECT_EQ(stats.withdrawn, 8u);
    if (alpha == 0.0) {
      EXPECT_EQ(stats.priority_sum, 8.0);
    }
    // Still there to read (and snapshot), with priority 0.
    EXPECT_EQ(PriorityOf(*store, 2), 0.0);
    EXPECT_EQ(PriorityOf(*store, 12), 1.0);
    // A loss for a withdrawn record is stale and changes nothing.
    const PriorityUpdate revive{2, generations[2], 5.0};
    EXPECT_EQ(store->UpdatePriorities({&revive, 1}).stale, 1u);
    EXPECT_EQ(PriorityOf(*store, 2), 0.0);

    Rng rng(3);
    std::vector<SampledSlot> batch(256);
    std::vector<std::byte> records(256 * kRecordSize);
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(store->Sample(0.5, rng, batch, records).ok());
      for (std::size_t k = 0; k < batch.size(); ++k) {
        ASSERT_GE(batch[k].slot, 8u);
        ASSERT_DOUBLE_EQ(batch[k].probability, 1.0 / 8);
        ASSERT_TRUE(
            RecordMatches(batch[k].slot, std::span(records).subspan(k * kRecordSize, kRecordSize)));
      }
      ASSERT_TRUE(store->Sample(0.5, rng, batch).ok());  // without the records' bytes too
      for (const SampledSlot& draw : batch) ASSERT_GE(draw.slot, 8u);
    }
    for (std::uint64_t slot = 8; slot < 16; ++slot) keys.push_back({slot, generations[slot]});
    store->Withdraw(keys);
    EXPECT_EQ(store->Stats().withdrawn, 16u);
    const Status none = store->Sample(0.5, rng, batch);
    EXPECT_EQ(none.code(), StatusCode::kFailedPrecondition) << none.ToString();
    // Overwritten slots hold new records, drawn as any other.
    Insert(*store, 100, 4);
    EXPECT_EQ(store->Stats().withdrawn, 12u);
    ASSERT_TRUE(store->Sample(0.5, rng, batch).ok());
    for (const SampledSlot& draw : batch) ASSERT_LT(draw.slot, 4u);
  }
}

TEST_F(ReplayStoreTest, AWithdrawnRecordStaysWithdrawnAfterReopen) {
  for (double alpha : {0.0, 0.6}) {
    SCOPED_TRACE("alpha " + std::to_string(alpha));
    std::filesystem::remove(Options(8).path);
    {
      auto store = MustOpen(Options(8, alpha));
      const auto generations = Insert(*store, 0, 8);
      const RecordKey key{5, generations[5]};
      ASSERT_EQ(store->Withdraw({&key, 1}).applied, 1u);
    }
    auto store = MustOpen(Options(8, alpha));
    EXPECT_EQ(store->open_report().records, 8u);
    EXPECT_EQ(store->Stats().withdrawn, 1u);
    EXPECT_EQ(PriorityOf(*store, 5), 0.0);
    const auto counts = Histogram(*store, 20, 256);
    EXPECT_EQ(counts.count(5), 0u);
    EXPECT_EQ(counts.size(), 7u);
  }
}

TEST_F(ReplayStoreTest, HugePrioritiesAreClampedAndCounted) {
  auto store = MustOpen(Options(4));
  const auto generations = Insert(*store, 0, 4);
  SetPriority(*store, 2, generations[2], 1e12);
  EXPECT_EQ(PriorityOf(*store, 2), PriorityScale::kMaxPriority);
  EXPECT_EQ(store->Stats().values_clamped, 1u);
}

TEST_F(ReplayStoreTest, StatsReportEveryCounter) {
  auto store = MustOpen(Options(8));
  const auto generations = Insert(*store, 0, 6);
  SetPriority(*store, 0, generations[0], 0.25);
  SetPriority(*store, 1, generations[1], 4.0);
  Rng rng(1);
  std::vector<SampledSlot> batch(32);
  ASSERT_TRUE(store->Sample(0.5, rng, batch).ok());
  const PriorityUpdate stale{2, 99, 1.0};
  const PriorityUpdate rejected{2, generations[2], -1.0};
  store->UpdatePriorities({&stale, 1});
  store->UpdatePriorities({&rejected, 1});
  const ReplayStats stats = store->Stats();
  EXPECT_EQ(stats.size, 6u);
  EXPECT_EQ(stats.capacity, 8u);
  EXPECT_EQ(stats.inserts, 6u);
  EXPECT_EQ(stats.samples, 32u);
  EXPECT_EQ(stats.updates_applied, 2u);
  EXPECT_EQ(stats.updates_stale, 1u);
  EXPECT_EQ(stats.values_rejected, 1u);
  EXPECT_DOUBLE_EQ(stats.priority_sum, 0.25 + 4.0 + 4 * 1.0);  // four records still at 1.0
  EXPECT_EQ(stats.priority_min, 0.25);
  EXPECT_EQ(stats.priority_max, 4.0);
}

TEST_F(ReplayStoreTest, ReadRecordReturnsBytesGenerationAndPriorityOrSaysWhyNot) {
  auto store = MustOpen(Options(8));
  const auto generations = Insert(*store, 40, 3);
  SetPriority(*store, 1, generations[1], 0.75);
  std::vector<std::byte> record(kRecordSize);
  auto info = store->ReadRecord(1, record);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->slot, 1u);
  EXPECT_EQ(info->generation, 1u);
  EXPECT_EQ(info->priority, 0.75);
  EXPECT_TRUE(RecordMatches(41, record));
  EXPECT_EQ(store->ReadRecord(5, record).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store->ReadRecord(8, record).status().code(), StatusCode::kInvalidArgument);
  std::vector<std::byte> small(kRecordSize - 1);
  EXPECT_EQ(store->ReadRecord(1, small).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ReplayStoreTest, ATypedFixedSizeStructRoundTripsThroughTheByteApi) {
  struct Sample {
    std::int32_t move;
    float value;
    std::uint64_t model_version;
    float policy[2];
  };
  static_assert(sizeof(Sample) == 24);
  auto store = MustOpen(Options(4));
  const Sample in[2] = {{12, 0.5f, 7, {0.25f, 0.75f}}, {-3, -1.0f, 8, {1.0f, 0.0f}}};
  ASSERT_TRUE(store->Insert(std::as_bytes(std::span(in))).ok());
  Sample out[2];
  ASSERT_TRUE(store->ReadRecord(1, std::as_writable_bytes(std::span(out, 1))).ok());
  EXPECT_EQ(out[0].move, -3);
  EXPECT_EQ(out[0].model_version, 8u);
  Rng rng(1);
  std::vector<SampledSlot> batch(2);
  ASSERT_TRUE(store->Sample(0.5, rng, batch, std::as_writable_bytes(std::span(out))).ok());
  for (int k = 0; k < 2; ++k) EXPECT_EQ(out[k].move, in[batch[k].slot].move);
}

TEST_F(ReplayStoreTest, RejectsMalformedCallsWithoutChangingAnything) {
  auto store = MustOpen(Options(8));
  Insert(*store, 0, 2);
  std::vector<std::byte> partial(kRecordSize + 5);
  EXPECT_EQ(store->Insert(partial).code(), StatusCode::kInvalidArgument);
  std::vector<std::uint64_t> too_few(1);
  EXPECT_EQ(store->Insert(MakeRecords(0, 2, kRecordSize), too_few).code(),
            StatusCode::kInvalidArgument);
  Rng rng(1);
  std::vector<SampledSlot> batch(4);
  EXPECT_EQ(store->Sample(1.5, rng, batch).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Sample(std::nan(""), rng, batch).code(), StatusCode::kInvalidArgument);
  std::vector<std::byte> wrong(3 * kRecordSize);
  EXPECT_EQ(store->Sample(0.5, rng, batch, wrong).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Stats().size, 2u);
  EXPECT_EQ(store->Stats().samples, 0u);
}

TEST_F(ReplayStoreTest, ReopenFindsEveryRecordWithItsPriorityAndGenerationsGoOn) {
  const ReplayStoreOptions options = Options(32, 0.6);
  double sum_before;
  {
    auto store = MustOpen(options);
    EXPECT_TRUE(store->open_report().created);
    const auto generations = Insert(*store, 1000, 20);
    for (std::uint64_t slot = 0; slot < 20; ++slot) {
      SetPriority(*store, slot, generations[slot], 0.1 * slot);
    }
    sum_before = store->Stats().priority_sum;
  }
  auto store = MustOpen(options);
  EXPECT_FALSE(store->open_report().created);
  EXPECT_EQ(store->open_report().records, 20u);
  EXPECT_EQ(store->open_report().discarded_uncommitted, 0u);
  std::vector<std::byte> record(kRecordSize);
  for (std::uint64_t slot = 0; slot < 20; ++slot) {
    auto info = store->ReadRecord(slot, record);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->generation, slot);
    EXPECT_TRUE(RecordMatches(1000 + slot, record));
    EXPECT_NEAR(info->priority, std::pow(0.1 * slot, 0.6), 1e-6);
  }
  EXPECT_EQ(store->Stats().priority_sum, sum_before);
  EXPECT_EQ(Insert(*store, 0, 1)[0], 20u);
}

TEST_F(ReplayStoreTest, ARecordLeftMidWriteIsInvisibleAfterReopen) {
  const ReplayStoreOptions options = Options(8);
  {
    auto store = MustOpen(options);
    Insert(*store, 0, 5);
  }
  // What a process killed between claiming slot 5 and committing it leaves: a writing marker.
  const StoreLayout layout = ComputeStoreLayout(options.capacity, options.record_size);
  {
    std::fstream file(options.path, std::ios::in | std::ios::out | std::ios::binary);
    const SlotMeta meta{WritingState(5), 0};
    file.seekp(static_cast<std::streamoff>(layout.meta_offset + 5 * sizeof(SlotMeta)));
    file.write(reinterpret_cast<const char*>(&meta), sizeof(meta));
  }
  auto store = MustOpen(options);
  EXPECT_EQ(store->open_report().records, 5u);
  EXPECT_EQ(store->open_report().discarded_uncommitted, 1u);
  std::vector<std::byte> record(kRecordSize);
  EXPECT_EQ(store->ReadRecord(5, record).status().code(), StatusCode::kNotFound);
  const auto counts = Histogram(*store, 20, 64);
  EXPECT_EQ(counts.count(5), 0u);
  EXPECT_EQ(Insert(*store, 5, 1)[0], 5u);  // the next insert takes the slot again
}

TEST_F(ReplayStoreTest, HeaderMismatchIsRefusedNamingWhatDiffers) {
  const ReplayStoreOptions options = Options(32, 0.6);
  MustOpen(options);
  struct Case {
    ReplayStoreOptions options;
    std::vector<std::string> words;
  };
  ReplayStoreOptions record_size = options;
  record_size.record_size = 48;
  ReplayStoreOptions capacity = options;
  capacity.capacity = 64;
  ReplayStoreOptions alpha = options;
  alpha.alpha = 0.7;
  ReplayStoreOptions all = record_size;
  all.capacity = 64;
  all.alpha = 0.7;
  for (const Case& c :
       {Case{record_size, {"record size", "24", "48"}}, Case{capacity, {"capacity", "32", "64"}},
        Case{alpha, {"alpha", "0.6", "0.7"}}, Case{all, {"record size", "capacity", "alpha"}}}) {
    auto store = ReplayStore::Open(c.options);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
    for (const std::string& word : c.words) {
      EXPECT_NE(store.status().message().find(word), std::string::npos)
          << store.status().ToString() << " lacks " << word;
    }
  }
}

TEST_F(ReplayStoreTest, RefusesFilesThatAreNotStoresOrAreDamaged) {
  const ReplayStoreOptions options = Options(32);
  {
    std::ofstream garbage(options.path, std::ios::binary);
    garbage << std::string(8192, 'x');
  }
  auto not_store = ReplayStore::Open(options);
  ASSERT_FALSE(not_store.ok());
  EXPECT_NE(not_store.status().message().find("not a replay store"), std::string::npos)
      << not_store.status().ToString();
  std::filesystem::remove(options.path);

  MustOpen(options);
  const std::uint32_t future_version = kStoreLayoutVersion + 1;
  {
    std::fstream file(options.path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(offsetof(StoreHeader, layout_version));
    file.write(reinterpret_cast<const char*>(&future_version), sizeof(future_version));
  }
  auto version = ReplayStore::Open(options);
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.status().message().find("layout version"), std::string::npos)
      << version.status().ToString();
  std::filesystem::remove(options.path);

  MustOpen(options);
  std::filesystem::resize_file(options.path, 6000);
  auto truncated = ReplayStore::Open(options);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos)
      << truncated.status().ToString();
}

TEST_F(ReplayStoreTest, OnlyOneOpenerAtATime) {
  const ReplayStoreOptions options = Options(8);
  auto first = MustOpen(options);
  auto second = ReplayStore::Open(options);
  ASSERT_FALSE(second.ok());
  // Its own code, so that callers tell it from a file made with other settings without reading the
  // message.
  EXPECT_EQ(second.status().code(), StatusCode::kAborted);
  EXPECT_NE(second.status().message().find("already open"), std::string::npos);
  first.reset();
  EXPECT_TRUE(ReplayStore::Open(options).ok());
}

TEST_F(ReplayStoreTest, OpenModesAndInvalidOptions) {
  ReplayStoreOptions options = Options(8);
  options.mode = ReplayStoreOptions::OpenMode::kOpen;
  EXPECT_EQ(ReplayStore::Open(options).status().code(), StatusCode::kNotFound);
  options.mode = ReplayStoreOptions::OpenMode::kCreate;
  EXPECT_TRUE(ReplayStore::Open(options).ok());
  EXPECT_EQ(ReplayStore::Open(options).status().code(), StatusCode::kAlreadyExists);
  // No temporary file is left next to it.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);

  auto bad = [&](auto change) {
    ReplayStoreOptions o = Options(8);
    o.path = dir_.File("other.store");
    change(o);
    return ReplayStore::Open(o).status().code();
  };
  EXPECT_EQ(bad([](ReplayStoreOptions& o) { o.capacity = 0; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](ReplayStoreOptions& o) { o.record_size = 0; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](ReplayStoreOptions& o) { o.alpha = -0.1; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](ReplayStoreOptions& o) { o.alpha = std::nan(""); }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](ReplayStoreOptions& o) { o.epsilon = -1; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](ReplayStoreOptions& o) { o.initial_priority = 0; }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(bad([](ReplayStoreOptions& o) { o.path.clear(); }), StatusCode::kInvalidArgument);
}

TEST_F(ReplayStoreTest, GenerationsNeverGoBackEvenWhenEveryRecordIsGone) {
  const ReplayStoreOptions options = Options(8);
  {
    auto store = MustOpen(options);
    Insert(*store, 0, 3);
    ASSERT_TRUE(
        store->Replace(50, [](ReplayStore::RestoredRecord*) -> Result<bool> { return false; })
            .ok());
    EXPECT_EQ(store->Stats().size, 0u);
    EXPECT_EQ(store->Replace(10, [](ReplayStore::RestoredRecord*) -> Result<bool> { return false; })
                  .code(),
              StatusCode::kFailedPrecondition);
  }
  auto store = MustOpen(options);
  EXPECT_EQ(store->open_report().next_generation, 50u);
  EXPECT_EQ(Insert(*store, 0, 1)[0], 50u);
}

TEST(StoreLayoutTest, IsPinned) {
  // Changing any of these needs a kStoreLayoutVersion bump.
  EXPECT_EQ(kStoreLayoutVersion, 1u);
  EXPECT_EQ(offsetof(StoreHeader, layout_version), 8u);
  EXPECT_EQ(offsetof(StoreHeader, record_size), 16u);
  EXPECT_EQ(offsetof(StoreHeader, capacity), 32u);
  EXPECT_EQ(offsetof(StoreHeader, alpha), 40u);
  EXPECT_EQ(offsetof(StoreHeader, priority_fraction_bits), 48u);
  EXPECT_EQ(offsetof(StoreHeader, meta_offset), 56u);
  EXPECT_EQ(offsetof(StoreHeader, next_generation_floor), 96u);
  const StoreLayout layout = ComputeStoreLayout(1000, 20);
  EXPECT_EQ(layout.record_stride, 24u);
  EXPECT_EQ(layout.meta_offset, 4096u);
  EXPECT_EQ(layout.data_offset, 4096u + 16384u);
  EXPECT_EQ(layout.file_size, 4096u + 16384u + 24000u);
  EXPECT_EQ(CommittedState(0), 3u);
  EXPECT_EQ(WritingState(0), 2u);
  EXPECT_EQ(GenerationOf(CommittedState(12345)), 12345u);
  EXPECT_TRUE(IsWriting(WritingState(7)));
  EXPECT_FALSE(IsWriting(kSlotEmpty));
}

}  // namespace
}  // namespace az::replay
