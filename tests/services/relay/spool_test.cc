// The relay's spool (services/relay/spool.h) in process, on a real directory: what is appended
// stays until acknowledged and survives a reopen with its numbers, acknowledged segments go, a torn
// tail is cut and a corrupt entry skipped rather than sent, a full spool says so, and the source of
// the last entry (to recognise a ring record handed over again) survives a restart.

#include "services/relay/spool.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/ipc/test_util.h"

namespace az::relay {
namespace {

using ipc::testing::TempDir;
using ::testing::HasSubstr;

constexpr std::uint32_t kBytes = 24;
constexpr std::uint64_t kEntryBytes = 32 + kBytes;

std::vector<std::byte> Record(std::uint64_t id) {
  std::vector<std::byte> record(kBytes, std::byte{0x5a});
  std::memcpy(record.data(), &id, sizeof id);
  return record;
}

std::vector<std::uint64_t> Ids(const SpoolBatch& batch) {
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 0; i < batch.count; ++i) {
    std::uint64_t id = 0;
    std::memcpy(&id, batch.records.data() + i * kBytes, sizeof id);
    ids.push_back(id);
  }
  return ids;
}

std::size_t SegmentFiles(const std::string& dir) {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    n += entry.path().extension() == ".spool";
  }
  return n;
}

class SpoolTest : public ::testing::Test {
 protected:
  std::unique_ptr<Spool> Open(std::uint64_t segment_records = 4, std::uint64_t max_bytes = 1 << 20,
                              std::uint32_t record_bytes = kBytes) {
    Result<std::unique_ptr<Spool>> spool = Spool::Open({.dir = dir(),
                                                        .record_bytes = record_bytes,
                                                        .segment_records = segment_records,
                                                        .max_bytes = max_bytes});
    AZ_CHECK(spool.ok(), spool.status().ToString());
    return std::move(spool).value();
  }
  void Append(Spool& spool, std::uint64_t first, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_TRUE(spool.Append(Record(first + i), {7, first + i}).ok());
    }
  }
  SpoolBatch Read(Spool& spool, std::size_t max = 100) {
    Result<SpoolBatch> batch = spool.ReadPending(max, std::chrono::milliseconds(0));
    AZ_CHECK(batch.ok(), batch.status().ToString());
    return std::move(batch).value();
  }
  std::string dir() const { return dir_.path() + "/spool"; }

  TempDir dir_;
};

TEST_F(SpoolTest, EntriesStayUntilAcknowledgedAndKeepTheirNumbersAcrossAReopen) {
  {
    auto spool = Open();
    Append(*spool, 100, 6);
    const SpoolBatch batch = Read(*spool, 4);
    EXPECT_EQ(batch.first_seq, 1u);
    EXPECT_EQ(Ids(batch), (std::vector<std::uint64_t>{100, 101, 102, 103}));
    ASSERT_TRUE(spool->Ack(2).ok());
    EXPECT_EQ(spool->Stats().pending, 4u);
  }
  auto spool = Open();
  const SpoolStats stats = spool->Stats();
  EXPECT_EQ(stats.acked, 2u);
  EXPECT_EQ(stats.next_seq, 7u);
  const SpoolBatch batch = Read(*spool);
  EXPECT_EQ(batch.first_seq, 3u);
  EXPECT_EQ(Ids(batch), (std::vector<std::uint64_t>{102, 103, 104, 105}));
  Append(*spool, 106, 1);
  EXPECT_EQ(spool->Stats().next_seq, 8u);
}

TEST_F(SpoolTest, AcknowledgedSegmentsAreDeletedButTheLastStays) {
  auto spool = Open(/*segment_records=*/4);
  Append(*spool, 0, 10);  // segments 1-4, 5-8, 9-10
  EXPECT_EQ(SegmentFiles(dir()), 3u);
  ASSERT_TRUE(spool->Ack(8).ok());
  EXPECT_EQ(SegmentFiles(dir()), 1u);
  ASSERT_TRUE(spool->Ack(10).ok());
  EXPECT_EQ(SegmentFiles(dir()), 1u) << "the last segment names the last ring record taken";
  EXPECT_EQ(Read(*spool).count, 0u);
  ASSERT_TRUE(spool->Ack(3).ok()) << "an old acknowledgement changes nothing";
  EXPECT_EQ(spool->Stats().acked, 10u);
  ASSERT_TRUE(spool->Ack(99).ok());
  EXPECT_EQ(spool->Stats().acked, 10u) << "never past what was appended";
}

TEST_F(SpoolTest, TheLastSourceSurvivesARestartEvenWhenEverythingIsAcknowledged) {
  {
    auto spool = Open();
    Append(*spool, 40, 3);
    ASSERT_TRUE(spool->Ack(3).ok());
  }
  auto spool = Open();
  ASSERT_TRUE(spool->LastSource().has_value());
  EXPECT_EQ(*spool->LastSource(), (SpoolSource{7, 42}));
}

TEST_F(SpoolTest, ATornTailIsCutAtOpen) {
  {
    auto spool = Open(/*segment_records=*/100);
    Append(*spool, 0, 3);
  }
  const std::string segment = dir() + "/00000000000000000001.spool";
  {  // half an entry, as a power loss mid-write would leave
    std::ofstream out(segment, std::ios::binary | std::ios::app);
    out << std::string(kEntryBytes / 2, 'x');
  }
  auto spool = Open(100);
  EXPECT_EQ(spool->Stats().torn_truncated, 1u);
  EXPECT_EQ(spool->Stats().next_seq, 4u);
  EXPECT_EQ(std::filesystem::file_size(segment), 3 * kEntryBytes);
  Append(*spool, 3, 1);
  EXPECT_EQ(Ids(Read(*spool)), (std::vector<std::uint64_t>{0, 1, 2, 3}));
}

TEST_F(SpoolTest, ACorruptLastEntryIsCutAndACorruptMiddleEntryIsSkippedOnce) {
  {
    auto spool = Open(/*segment_records=*/100);
    Append(*spool, 0, 5);
  }
  const std::string segment = dir() + "/00000000000000000001.spool";
  auto flip = [&](std::uint64_t entry) {
    const int fd = ::open(segment.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    char byte = 0;
    const off_t at = static_cast<off_t>(entry * kEntryBytes + 40);
    ASSERT_EQ(::pread(fd, &byte, 1, at), 1);
    byte ^= 0x10;
    ASSERT_EQ(::pwrite(fd, &byte, 1, at), 1);
    ::close(fd);
  };
  flip(4);  // the last entry (seq 5)
  flip(1);  // seq 2
  auto spool = Open(100);
  EXPECT_EQ(spool->Stats().next_seq, 5u) << "the corrupt tail entry is cut";
  const SpoolBatch first = Read(*spool);
  EXPECT_EQ(Ids(first), (std::vector<std::uint64_t>{0})) << "stops before the corrupt entry";
  ASSERT_TRUE(spool->Ack(1).ok());
  const SpoolBatch after = Read(*spool);
  EXPECT_EQ(after.first_seq, 3u) << "skips it: the daemon counts a gap";
  EXPECT_EQ(Ids(after), (std::vector<std::uint64_t>{2, 3}));
  (void)Read(*spool);
  EXPECT_EQ(spool->Stats().corrupt_skipped, 1u) << "counted once, however often it is read";
}

TEST_F(SpoolTest, FullOnceTheUnacknowledgedBytesReachTheLimit) {
  auto spool = Open(4, /*max_bytes=*/3 * kEntryBytes);
  Append(*spool, 0, 2);
  EXPECT_FALSE(spool->Full());
  Append(*spool, 2, 1);
  EXPECT_TRUE(spool->Full());
  ASSERT_TRUE(spool->Ack(1).ok());
  EXPECT_FALSE(spool->Full());
}

TEST_F(SpoolTest, ReadPendingWaitsForAnAppend) {
  auto spool = Open();
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(spool->Append(Record(9), {1, 1}).ok());
  });
  Result<SpoolBatch> batch = spool->ReadPending(10, std::chrono::seconds(10));
  writer.join();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(batch->count, 1u);
}

TEST_F(SpoolTest, ASpoolOfAnotherRecordSizeIsRefused) {
  {
    auto spool = Open(100);
    Append(*spool, 0, 5);
  }
  Result<std::unique_ptr<Spool>> other =
      Spool::Open({.dir = dir(), .record_bytes = kBytes + 8, .segment_records = 100});
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(other.status().message(), HasSubstr("00000000000000000001.spool"));
}

TEST_F(SpoolTest, BadOptionsAndRecordsAreRefused) {
  EXPECT_EQ(Spool::Open({.dir = "", .record_bytes = 8}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Spool::Open({.dir = dir(), .record_bytes = 0}).status().code(),
            StatusCode::kInvalidArgument);
  auto spool = Open();
  EXPECT_EQ(spool->Append(std::vector<std::byte>(3), {}).status().code(),
            StatusCode::kInvalidArgument);
  {
    std::ofstream acked(dir() + "/acked");
    acked << "garbage";
  }
  EXPECT_EQ(Spool::Open({.dir = dir(), .record_bytes = kBytes}).status().code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace az::relay
