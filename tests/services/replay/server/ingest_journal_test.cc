// The ingest journal (services/replay/server/ingest_journal.h) in process: each window of a crash
// between taking a ring record and releasing it is simulated by dropping the journal and the store
// where the protocol stands, and reopening both from their files as the next daemon would.

#include "services/replay/server/ingest_journal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "tests/services/replay/server/server_test_util.h"

namespace az::replayd {
namespace {

using ::testing::ElementsAre;
using testing::IdRecord;
using testing::InsertIds;
using testing::OpenStore;
using testing::StoredIds;
using testing::TempDir;

constexpr std::uint64_t kRing = 0x5eedf00d;

class IngestJournalTest : public ::testing::Test {
 protected:
  std::string StorePath() const { return dir_.path() + "/replay.store"; }
  std::string JournalPath() const { return dir_.path() + "/replay.store.ingest"; }

  // What the ingestor does for one record up to the crash point: Begin, insert, Commit.
  enum class CrashAt { kAfterBegin, kAfterInsert, kAfterCommit };
  void TakeAndCrash(std::uint64_t position, std::uint64_t id, CrashAt crash) {
    auto store = OpenStore(StorePath(), 16);
    Result<IngestJournal> journal = IngestJournal::Open(JournalPath());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    journal->Begin(kRing, position, store->next_generation());
    if (crash == CrashAt::kAfterBegin) return;
    std::uint64_t generation = 0;
    ASSERT_TRUE(store->Insert(IdRecord(id), std::span(&generation, 1)).ok());
    if (crash == CrashAt::kAfterInsert) return;
    journal->Commit(generation);
    // Dropped here without releasing the ring slot: the ring hands the record over again.
  }

  // The next daemon, given the record again by the ring: stores it unless the journal says it is
  // there already, as the ingestor does. Returns whether it stored it.
  bool Redeliver(std::uint64_t position, std::uint64_t id) {
    auto store = OpenStore(StorePath(), 16);
    Result<IngestJournal> journal = IngestJournal::Open(JournalPath());
    AZ_CHECK(journal.ok(), journal.status().ToString());
    const std::vector<std::byte> record = IdRecord(id);
    if (journal->AlreadyStored(kRing, position, record, *store)) return false;
    journal->Begin(kRing, position, store->next_generation());
    std::uint64_t generation = 0;
    AZ_CHECK(store->Insert(record, std::span(&generation, 1)).ok(), "insert");
    journal->Commit(generation);
    return true;
  }

  std::vector<std::uint64_t> Stored() { return StoredIds(*OpenStore(StorePath(), 16)); }

  TempDir dir_;
};

TEST_F(IngestJournalTest, ARecordCommittedButNotReleasedIsStoredOnceAfterACrash) {
  InsertIds(*OpenStore(StorePath(), 16), 100, 3);
  TakeAndCrash(/*position=*/7, /*id=*/1, CrashAt::kAfterCommit);
  EXPECT_FALSE(Redeliver(7, 1));
  EXPECT_THAT(Stored(), ElementsAre(100, 101, 102, 1));
}

TEST_F(IngestJournalTest, ARecordInsertedButNotYetCommittedInTheJournalIsStoredOnce) {
  // Killed between the store's commit and the journal's: the journal says "inserting", and the
  // store is searched for the bytes among the generations issued since Begin.
  TakeAndCrash(7, 1, CrashAt::kAfterInsert);
  EXPECT_FALSE(Redeliver(7, 1));
  EXPECT_THAT(Stored(), ElementsAre(1));
}

TEST_F(IngestJournalTest, ARecordWhoseInsertNeverHappenedIsStoredAfterACrash) {
  TakeAndCrash(7, 1, CrashAt::kAfterBegin);
  EXPECT_TRUE(Redeliver(7, 1));
  EXPECT_THAT(Stored(), ElementsAre(1));
}

TEST_F(IngestJournalTest, OtherPositionsAndOtherRingsAreNotTakenForTheRecordInHand) {
  TakeAndCrash(7, 1, CrashAt::kAfterCommit);
  auto store = OpenStore(StorePath(), 16);
  Result<IngestJournal> journal = IngestJournal::Open(JournalPath());
  ASSERT_TRUE(journal.ok());
  EXPECT_TRUE(journal->AlreadyStored(kRing, 7, IdRecord(1), *store));
  EXPECT_FALSE(journal->AlreadyStored(kRing, 8, IdRecord(1), *store));
  EXPECT_FALSE(journal->AlreadyStored(kRing + 1, 7, IdRecord(1), *store));
  EXPECT_EQ(journal->entry().state, JournalEntry::kCommitted);
  EXPECT_EQ(journal->entry().position, 7u);
}

TEST_F(IngestJournalTest, AFileThatIsNotAJournalIsRefusedAndLeftAlone) {
  {
    std::ofstream out(JournalPath());
    out << "not a journal";
  }
  Result<IngestJournal> journal = IngestJournal::Open(JournalPath());
  EXPECT_EQ(journal.status().code(), StatusCode::kDataLoss);
  std::ifstream in(JournalPath());
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "not a journal");
}

}  // namespace
}  // namespace az::replayd
