// Samples pushed by other hosts (services/replay/server/remote_ingest.h) in process: a resent batch
// is never stored twice, a daemon that restarts (the ledger and the store reopened from their
// files) still knows what each host pushed, a daemon killed between storing a record and its
// journal commit neither loses nor doubles it, a malformed record is dropped without stalling the
// host's stream, and bad arguments are refused with nothing stored.

#include "services/replay/server/remote_ingest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/services/replay/server/server_test_util.h"

namespace az::replayd {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::IdRecord;
using testing::OpenStore;
using testing::RecordId;
using testing::StoredIds;
using testing::TempDir;

// Records id..id+count-1, back to back.
std::vector<std::byte> Ids(std::uint64_t first, std::size_t count) {
  std::vector<std::byte> out;
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<std::byte> record = IdRecord(first + i);
    out.insert(out.end(), record.begin(), record.end());
  }
  return out;
}

std::vector<std::uint64_t> Sorted(std::vector<std::uint64_t> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

class RemoteIngestTest : public ::testing::Test {
 protected:
  // A daemon's view: the store and the ledger, opened from their files.
  struct Daemon {
    std::unique_ptr<replay::ReplayStore> store;
    std::unique_ptr<RateLimiter> limiter;
    std::unique_ptr<RemoteIngest> ingest;
  };
  Daemon Open(RecordCheck check = {}) {
    Daemon d;
    d.store = OpenStore(dir_.path() + "/replay.store", 64);
    d.limiter = std::make_unique<RateLimiter>(RateLimiterOptions{}, d.store->Stats().size);
    Result<std::unique_ptr<RemoteIngest>> ingest = RemoteIngest::Open(
        {.dir = dir_.path() + "/remote", .check = std::move(check)}, *d.store, *d.limiter);
    AZ_CHECK(ingest.ok(), ingest.status().ToString());
    d.ingest = std::move(ingest).value();
    return d;
  }
  std::string JournalPath(const std::string& host) const {
    return dir_.path() + "/remote/" + host + ".journal";
  }

  TempDir dir_;
};

TEST_F(RemoteIngestTest, StoresABatchAndDropsItWhenPushedAgain) {
  Daemon d = Open();
  Result<PushResult> first = d.ingest->Push("host-a", 1, Ids(100, 5));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->stored, 5u);
  EXPECT_EQ(first->committed_through, 5u);
  // The reply was lost; the relay pushes the same batch again.
  Result<PushResult> again = d.ingest->Push("host-a", 1, Ids(100, 5));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stored, 0u);
  EXPECT_EQ(again->duplicates, 5u);
  EXPECT_EQ(again->committed_through, 5u);
  // A batch that overlaps the end of the stored one: only the new part is stored.
  Result<PushResult> overlap = d.ingest->Push("host-a", 4, Ids(103, 4));
  ASSERT_TRUE(overlap.ok());
  EXPECT_EQ(overlap->duplicates, 2u);
  EXPECT_EQ(overlap->stored, 2u);
  EXPECT_EQ(overlap->committed_through, 7u);
  EXPECT_EQ(Sorted(StoredIds(*d.store)),
            (std::vector<std::uint64_t>{100, 101, 102, 103, 104, 105, 106}));
  const auto stats = d.ingest->Stats();
  ASSERT_EQ(stats.count("host-a"), 1u);
  EXPECT_EQ(stats.at("host-a").stored, 7u);
  EXPECT_EQ(stats.at("host-a").duplicates, 7u);
  EXPECT_EQ(stats.at("host-a").pushes, 3u);
}

TEST_F(RemoteIngestTest, HostsHaveTheirOwnSequences) {
  Daemon d = Open();
  ASSERT_TRUE(d.ingest->Push("a", 1, Ids(1, 3)).ok());
  Result<PushResult> b = d.ingest->Push("b", 1, Ids(11, 3));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->stored, 3u) << "host b's 1..3 are not host a's";
  EXPECT_EQ(Sorted(StoredIds(*d.store)), (std::vector<std::uint64_t>{1, 2, 3, 11, 12, 13}));
}

TEST_F(RemoteIngestTest, ARestartedDaemonStillKnowsWhatEachHostPushed) {
  {
    Daemon d = Open();
    ASSERT_TRUE(d.ingest->Push("a", 1, Ids(1, 4)).ok());
  }
  Daemon d = Open();
  EXPECT_EQ(d.ingest->Stats().at("a").committed_through, 4u) << "known hosts are loaded at open";
  Result<PushResult> again = d.ingest->Push("a", 1, Ids(1, 6));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->duplicates, 4u);
  EXPECT_EQ(again->stored, 2u);
  EXPECT_EQ(Sorted(StoredIds(*d.store)), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6}));
}

// The crash windows of one record, as in the ingest journal's own tests: the daemon dies after
// Begin (nothing stored) or after the insert (stored, not committed), and the relay pushes the
// batch again to the next daemon.
TEST_F(RemoteIngestTest, AKillBetweenInsertAndCommitNeitherLosesNorDoublesTheRecord) {
  {
    Daemon d = Open();
    ASSERT_TRUE(d.ingest->Push("a", 1, Ids(1, 2)).ok());
  }
  {  // What Push does for sample 3, up to the crash after its insert.
    auto store = OpenStore(dir_.path() + "/replay.store", 64);
    Result<IngestJournal> journal = IngestJournal::Open(JournalPath("a"));
    ASSERT_TRUE(journal.ok());
    journal->Begin(HostTag("a"), 3, store->next_generation());
    ASSERT_TRUE(store->Insert(IdRecord(3)).ok());
  }
  Daemon d = Open();
  EXPECT_EQ(d.ingest->Stats().at("a").committed_through, 2u);
  Result<PushResult> again = d.ingest->Push("a", 1, Ids(1, 4));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->duplicates, 3u) << "1, 2 by the ledger, 3 by its bytes in the store";
  EXPECT_EQ(again->stored, 1u);
  EXPECT_EQ(Sorted(StoredIds(*d.store)), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST_F(RemoteIngestTest, AKillBetweenBeginAndInsertStoresTheRecordWhenPushedAgain) {
  {
    Daemon d = Open();
    ASSERT_TRUE(d.ingest->Push("a", 1, Ids(1, 2)).ok());
  }
  {
    auto store = OpenStore(dir_.path() + "/replay.store", 64);
    Result<IngestJournal> journal = IngestJournal::Open(JournalPath("a"));
    ASSERT_TRUE(journal.ok());
    journal->Begin(HostTag("a"), 3, store->next_generation());
  }
  Daemon d = Open();
  Result<PushResult> again = d.ingest->Push("a", 3, Ids(3, 2));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stored, 2u);
  EXPECT_EQ(again->duplicates, 0u);
  EXPECT_EQ(Sorted(StoredIds(*d.store)), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST_F(RemoteIngestTest, AMalformedRecordIsDroppedAndTheStreamGoesOn) {
  Daemon d = Open([](std::span<const std::byte> record) {
    return RecordId(record) == 2 ? InvalidArgument("record 2 is bad") : Status::Ok();
  });
  Result<PushResult> pushed = d.ingest->Push("a", 1, Ids(1, 3));
  ASSERT_TRUE(pushed.ok());
  EXPECT_EQ(pushed->stored, 2u);
  EXPECT_EQ(pushed->rejected, 1u);
  EXPECT_THAT(pushed->first_rejection, HasSubstr("record 2 is bad"));
  EXPECT_EQ(pushed->committed_through, 3u) << "the ledger moves past it: the relay acks it";
  Result<PushResult> again = d.ingest->Push("a", 1, Ids(1, 3));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->stored + again->rejected, 0u);
  EXPECT_EQ(Sorted(StoredIds(*d.store)), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(d.ingest->Stats().at("a").rejected, 1u);
}

TEST_F(RemoteIngestTest, APushPastTheNextNumberIsStoredAndTheGapCounted) {
  Daemon d = Open();
  ASSERT_TRUE(d.ingest->Push("a", 1, Ids(1, 2)).ok());
  Result<PushResult> later = d.ingest->Push("a", 10, Ids(10, 2));
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->stored, 2u);
  EXPECT_EQ(later->committed_through, 11u);
  EXPECT_EQ(d.ingest->Stats().at("a").gaps, 7u);
}

TEST_F(RemoteIngestTest, BadPushesAreRefusedWithNothingStored) {
  Daemon d = Open();
  for (const char* host : {"", "a/b", "..", "with space"}) {
    Result<PushResult> bad = d.ingest->Push(host, 1, Ids(1, 1));
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << host;
  }
  EXPECT_EQ(d.ingest->Push("a", 0, Ids(1, 1)).status().code(), StatusCode::kInvalidArgument);
  std::vector<std::byte> torn = Ids(1, 2);
  torn.pop_back();
  Result<PushResult> partial = d.ingest->Push("a", 1, torn);
  EXPECT_EQ(partial.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(partial.status().message(), HasSubstr("whole"));
  EXPECT_TRUE(StoredIds(*d.store).empty());
}

TEST_F(RemoteIngestTest, AFileThatIsNotAJournalIsReportedAtOpen) {
  ASSERT_TRUE(std::filesystem::create_directories(dir_.path() + "/remote"));
  {
    std::ofstream junk(JournalPath("broken"));
    junk << "not a journal";
  }
  auto store = OpenStore(dir_.path() + "/replay.store", 64);
  RateLimiter limiter(RateLimiterOptions{}, 0);
  Result<std::unique_ptr<RemoteIngest>> ingest =
      RemoteIngest::Open({.dir = dir_.path() + "/remote"}, *store, limiter);
  EXPECT_EQ(ingest.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(ingest.status().message(), HasSubstr("broken.journal"));
}

TEST(HostNameTest, AcceptsHostNamesAndRefusesPaths) {
  EXPECT_TRUE(ValidateHostName("gpu-box-01.lab").ok());
  EXPECT_TRUE(ValidateHostName(std::string(64, 'h')).ok());
  EXPECT_FALSE(ValidateHostName(std::string(65, 'h')).ok());
  EXPECT_FALSE(ValidateHostName("../etc").ok());
  EXPECT_NE(HostTag("a"), HostTag("b"));
  EXPECT_NE(HostTag("a"), 0u);
}

}  // namespace
}  // namespace az::replayd
