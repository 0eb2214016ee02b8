// The ingestor (services/replay/server/ingestor.h) in process: records pushed into a real
// shared-memory ring (shm/ring.h) in a scope of the test's own, a real store in a temporary
// directory, a real rate limiter, and the record check injected as a plain function. The crash
// test forks a child that ingests and kills itself inside the ring's visitor, as the daemon's test
// hook does.

#include "services/replay/server/ingestor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include "tests/services/replay/server/server_test_util.h"
#include "tests/shm/test_processes.h"

namespace az::replayd {
namespace {

using ::az::shm::testing::Child;
using ::az::shm::testing::TestScope;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::IdRecord;
using testing::kRecordBytes;
using testing::OpenStore;
using testing::RecordId;
using testing::StoredIds;
using testing::TempDir;
using testing::WaitFor;
using namespace std::chrono_literals;

constexpr std::string_view kRingName = "samples";

// Valid records are those whose id is not a multiple of 3; the model version is id / 10.
Status CheckId(std::span<const std::byte> record) {
  const std::optional<std::uint64_t> id = RecordId(record);
  if (!id) return InvalidArgument("a torn record");
  if (*id % 3 == 0) return InvalidArgument("id " + std::to_string(*id) + " is a multiple of 3");
  return Status::Ok();
}

std::optional<std::uint32_t> VersionOfId(std::span<const std::byte> record) {
  return static_cast<std::uint32_t>(RecordId(record).value_or(0) / 10);
}

class IngestorTest : public ::testing::Test {
 protected:
  IngestorTest() : scope_("ingest") {
    Result<shm::Ring> ring =
        shm::Ring::Create(*scope_, kRingName, {.record_bytes = kRecordBytes, .capacity = 128});
    AZ_CHECK(ring.ok(), ring.status().ToString());
    producer_.emplace(std::move(ring).value());
  }

  std::string StorePath() const { return dir_.path() + "/replay.store"; }

  IngestOptions Options() const {
    IngestOptions options;
    options.journal_path = StorePath() + ".ingest";
    options.check = CheckId;
    options.model_version = VersionOfId;
    return options;
  }

  // The ring as the ingestor sees it: its own handle, as a daemon opens it.
  IngestSource Source() const {
    Result<shm::Ring> ring = shm::Ring::Open(*scope_, kRingName, kRecordBytes);
    AZ_CHECK(ring.ok(), ring.status().ToString());
    Result<IngestSource> source = IngestSource::Of(std::move(ring).value(), *scope_, kRingName);
    AZ_CHECK(source.ok(), source.status().ToString());
    return std::move(source).value();
  }

  std::unique_ptr<Ingestor> Make(const IngestOptions& options, replay::ReplayStore& store,
                                 RateLimiter& limiter) const {
    Result<std::unique_ptr<Ingestor>> ingestor =
        Ingestor::Create(options, Source(), store, limiter);
    AZ_CHECK(ingestor.ok(), ingestor.status().ToString());
    return std::move(ingestor).value();
  }

  void Push(std::uint64_t first_id, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_TRUE(producer_->Push(IdRecord(first_id + i), 10s).ok());
    }
  }

  TempDir dir_;
  TestScope scope_;
  std::optional<shm::Ring> producer_;
};

TEST_F(IngestorTest, StoresExactlyTheValidRecordsAndCountsTheRejectedOnes) {
  auto store = OpenStore(StorePath(), 256);
  RateLimiter limiter({}, 0);
  auto ingestor = Make(Options(), *store, limiter);
  ingestor->Start();
  Push(1, 90);  // ids 1..90: 30 multiples of 3
  ASSERT_TRUE(WaitFor([&] {
    const IngestStats stats = ingestor->Stats();
    return stats.ingested + stats.rejected == 90;
  }));
  ingestor->Stop();
  std::vector<std::uint64_t> valid;
  for (std::uint64_t id = 1; id <= 90; ++id) {
    if (id % 3 != 0) valid.push_back(id);
  }
  EXPECT_THAT(StoredIds(*store), ElementsAreArray(valid));  // one producer: ring order
  const IngestStats stats = ingestor->Stats();
  EXPECT_EQ(stats.ingested, 60u);
  EXPECT_EQ(stats.rejected, 30u);
  EXPECT_EQ(stats.duplicates, 0u);
  EXPECT_THAT(stats.last_rejection, HasSubstr("id 90 is a multiple of 3"));
  EXPECT_TRUE(stats.has_model_version);
  EXPECT_EQ(stats.max_model_version, 8u);  // id 89
  EXPECT_EQ(stats.ring.occupancy, 0u);
  EXPECT_EQ(limiter.State().inserts, 60u);
}

TEST_F(IngestorTest, WithoutAChecksEveryRecordIsStored) {
  auto store = OpenStore(StorePath(), 256);
  RateLimiter limiter({}, 0);
  IngestOptions options = Options();
  options.check = nullptr;
  options.model_version = nullptr;
  auto ingestor = Make(options, *store, limiter);
  ingestor->Start();
  Push(1, 30);
  ASSERT_TRUE(WaitFor([&] { return store->Stats().size == 30; }));
  ingestor->Stop();
  EXPECT_EQ(ingestor->Stats().rejected, 0u);
  EXPECT_FALSE(ingestor->Stats().has_model_version);
}

TEST_F(IngestorTest, WhilePausedRecordsWaitInTheRing) {
  auto store = OpenStore(StorePath(), 256);
  RateLimiter limiter({}, 0);
  auto ingestor = Make(Options(), *store, limiter);
  ingestor->SetPaused(true);
  ingestor->Start();
  Push(1, 10);
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(store->Stats().size, 0u);
  EXPECT_EQ(ingestor->Stats().ring.occupancy, 10u);
  ingestor->SetPaused(false);
  ASSERT_TRUE(WaitFor([&] { return ingestor->Stats().ring.occupancy == 0; }));
  EXPECT_TRUE(WaitFor([&] { return store->Stats().size == 7; }));  // 3, 6, 9 rejected
}

TEST_F(IngestorTest, ALimiterThatBlocksInsertsHoldsRecordsInTheRingUntilTheLearnerDraws) {
  auto store = OpenStore(StorePath(), 256);
  // One draw per insert, 4 of slack, inserts held back: at most 5 records ahead of the learner.
  RateLimiter limiter(
      {.samples_per_insert = 1, .min_size_to_sample = 1, .error_buffer = 4, .block_inserts = true},
      0);
  IngestOptions options = Options();
  options.check = nullptr;
  options.max_batch = 1;  // the limiter is asked before each ring call
  auto ingestor = Make(options, *store, limiter);
  ingestor->Start();
  Push(1, 10);
  ASSERT_TRUE(WaitFor([&] { return store->Stats().size == 5; }));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(store->Stats().size, 5u);
  EXPECT_EQ(ingestor->Stats().ring.occupancy, 5u);
  EXPECT_GT(limiter.State().insert_waits, 0u);
  // The learner draws 4: four more may come in.
  ASSERT_TRUE(limiter.TryAcquireSample(4, store->Stats().size).ok());
  ASSERT_TRUE(WaitFor([&] { return store->Stats().size == 9; }));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(store->Stats().size, 9u);
  EXPECT_EQ(ingestor->Stats().ring.occupancy, 1u);
}

TEST_F(IngestorTest, ARingOfAnotherRecordSizeIsRefused) {
  auto store = OpenStore(StorePath(), 256, /*record_bytes=*/32);
  RateLimiter limiter({}, 0);
  Result<std::unique_ptr<Ingestor>> ingestor =
      Ingestor::Create(Options(), Source(), *store, limiter);
  EXPECT_EQ(ingestor.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ingestor.status().message(), HasSubstr("32 bytes"));
}

TEST_F(IngestorTest, ARecordTakenButNotReleasedWhenTheIngestorDiedIsStoredExactlyOnce) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads in a forked child (the real daemon's crash "
                  "test, replayd_crash_test, covers this window under it)";
#endif
  Push(0, 100);
  // A child ingests and kills itself (SIGKILL) right after committing its 37th record, inside the
  // ring's visitor: the record is in the store and still held in the ring.
  Child crashing = Child::Spawn([&] {
    auto store = OpenStore(StorePath(), 256);
    RateLimiter limiter({}, 0);
    IngestOptions options = Options();
    options.check = nullptr;
    options.crash_after = 37;
    auto ingestor = Make(options, *store, limiter);
    ingestor->Start();
    std::this_thread::sleep_for(30s);
    return 1;  // the hook never fired
  });
  const std::optional<shm::testing::ExitInfo> exit = crashing.Wait(60s);
  ASSERT_TRUE(exit.has_value());
  ASSERT_FALSE(exit->exited) << "exit code " << exit->code;
  ASSERT_EQ(exit->signal, SIGKILL);
  {
    auto store = OpenStore(StorePath(), 256);
    EXPECT_EQ(store->Stats().size, 37u);
  }
  // The next ingestor gets the held record again from the ring, and the journal drops it.
  auto store = OpenStore(StorePath(), 256);
  RateLimiter limiter({}, store->Stats().size);
  IngestOptions options = Options();
  options.check = nullptr;
  auto ingestor = Make(options, *store, limiter);
  ingestor->Start();
  ASSERT_TRUE(WaitFor([&] { return ingestor->Stats().ring.occupancy == 0; }));
  ASSERT_TRUE(WaitFor([&] { return store->Stats().size == 100; }));
  ingestor->Stop();
  std::vector<std::uint64_t> ids = StoredIds(*store);
  std::sort(ids.begin(), ids.end());
  std::vector<std::uint64_t> expected(100);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_THAT(ids, ElementsAreArray(expected));
  EXPECT_EQ(ingestor->Stats().duplicates, 1u);
  EXPECT_EQ(ingestor->Stats().ingested, 63u);
}

}  // namespace
}  // namespace az::replayd
