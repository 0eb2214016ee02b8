#include "core/replay/snapshot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include "core/replay/snapshot_format.h"
#include "tests/replay/snapshot_v1_writer.h"
#include "tests/replay/test_util.h"

namespace az::replay {
namespace {

using testing::MakeRecords;
using testing::RecordMatches;
using testing::TempDir;

constexpr std::uint64_t kRecordSize = 24;

std::vector<char> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::span<const std::byte> Text(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

class SnapshotTest : public ::testing::Test {
 protected:
  std::unique_ptr<ReplayStore> Open(const std::string& name, std::uint64_t capacity,
                                    std::uint64_t record_size = kRecordSize, double alpha = 0.6) {
    ReplayStoreOptions options;
    options.path = dir_.File(name);
    options.capacity = capacity;
    options.record_size = record_size;
    options.alpha = alpha;
    auto store = ReplayStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  // A store of 64 slots that has seen 100 inserts (keys = generations) and some priority updates.
  std::unique_ptr<ReplayStore> Source() {
    std::filesystem::remove(dir_.File("source.store"));
    auto store = Open("source.store", 64);
    std::vector<std::uint64_t> generations(100);
    EXPECT_TRUE(store->Insert(MakeRecords(0, 100, kRecordSize), generations).ok());
    std::vector<PriorityUpdate> updates;
    for (std::uint64_t g = 30; g < 100; g += 3) updates.push_back({g % 64, g, 0.01 * g});
    EXPECT_EQ(store->UpdatePriorities(updates).applied, updates.size() - 2);  // 30, 33 overwritten
    return store;
  }

  // Every record as (generation-order key, priority), read back through ForEachRecord.
  static std::vector<std::pair<std::uint64_t, double>> Contents(const ReplayStore& store) {
    std::vector<std::pair<std::uint64_t, double>> contents;
    EXPECT_TRUE(store
                    .ForEachRecord([&](const RecordInfo& info, std::span<const std::byte> bytes) {
                      std::uint64_t key = 0;
                      while (!RecordMatches(key, bytes) && key < 100'000) ++key;
                      contents.emplace_back(key, info.priority);
                      return Status::Ok();
                    })
                    .ok());
    return contents;
  }

  // Saves a snapshot of Source() and returns its path.
  std::string SavedSnapshot() {
    const std::string path = dir_.File("snap.azsnap");
    auto source = Source();
    auto saved = SaveSnapshot(*source, path, Text("model 42"));
    EXPECT_TRUE(saved.ok()) << saved.status().ToString();
    return path;
  }

  // A store with content of its own, to check that failed loads leave it alone.
  std::unique_ptr<ReplayStore> Bystander() {
    auto store = Open("bystander.store", 64);
    EXPECT_TRUE(store->Insert(MakeRecords(5000, 10, kRecordSize)).ok());
    return store;
  }

  static void ExpectUntouched(const ReplayStore& store) {
    const ReplayStats stats = store.Stats();
    EXPECT_EQ(stats.size, 10u);
    EXPECT_EQ(stats.inserts, 10u);
    std::vector<std::byte> record(kRecordSize);
    for (std::uint64_t slot = 0; slot < 10; ++slot) {
      auto info = store.ReadRecord(slot, record);
      ASSERT_TRUE(info.ok());
      EXPECT_TRUE(RecordMatches(5000 + slot, record));
    }
  }

  TempDir dir_;
};

TEST_F(SnapshotTest, RoundTripRestoresRecordsPrioritiesGenerationsAndMetadata) {
  const std::string path = dir_.File("snap.azsnap");
  auto source = Source();
  auto saved = SaveSnapshot(*source, path, Text("model 42"));
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(*saved, 64u);

  auto target = Open("target.store", 64);
  auto info = LoadSnapshot(*target, path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->version, 2u);
  EXPECT_EQ(info->records_in_file, 64u);
  EXPECT_EQ(info->records_loaded, 64u);
  EXPECT_EQ(info->records_dropped, 0u);
  EXPECT_TRUE(info->generations_preserved);
  EXPECT_EQ(
      std::string(reinterpret_cast<const char*>(info->metadata.data()), info->metadata.size()),
      "model 42");

  std::vector<std::byte> a(kRecordSize), b(kRecordSize);
  for (std::uint64_t slot = 0; slot < 64; ++slot) {
    auto from = source->ReadRecord(slot, a);
    auto to = target->ReadRecord(slot, b);
    ASSERT_TRUE(from.ok() && to.ok());
    EXPECT_EQ(from->generation, to->generation);
    EXPECT_EQ(from->priority, to->priority);  // exact: same capacity, same fixed-point scale
    EXPECT_EQ(a, b);
  }
  const ReplayStats s = source->Stats(), t = target->Stats();
  EXPECT_EQ(t.size, s.size);
  EXPECT_EQ(t.inserts, s.inserts);
  EXPECT_EQ(t.priority_sum, s.priority_sum);
  EXPECT_EQ(t.priority_min, s.priority_min);
  EXPECT_EQ(t.priority_max, s.priority_max);
  // A learner's update for a record sampled from the source still lands on the restored record.
  const PriorityUpdate update{99 % 64, 99, 2.0};
  EXPECT_EQ(target->UpdatePriorities({&update, 1}).applied, 1u);
  // And generations go on from where the source left off.
  std::vector<std::uint64_t> generation(1);
  ASSERT_TRUE(target->Insert(MakeRecords(100, 1, kRecordSize), generation).ok());
  EXPECT_EQ(generation[0], 100u);
  // Nothing but the snapshot itself is left in the directory (no temporary file).
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

TEST_F(SnapshotTest, ALargerSnapshotThanTheCapacityKeepsTheNewestRecords) {
  const std::string path = SavedSnapshot();
  auto target = Open("small.store", 16);
  auto info = LoadSnapshot(*target, path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->records_loaded, 16u);
  EXPECT_EQ(info->records_dropped, 48u);
  EXPECT_FALSE(info->generations_preserved);  // another capacity: records get new generations
  const auto contents = Contents(*target);
  ASSERT_EQ(contents.size(), 16u);
  for (std::size_t i = 0; i < contents.size(); ++i) EXPECT_EQ(contents[i].first, 84 + i);
  // New generations start above every generation the snapshot's store issued.
  std::vector<std::byte> record(kRecordSize);
  auto oldest = target->ReadRecord(100 % 16, record);
  ASSERT_TRUE(oldest.ok());
  EXPECT_EQ(oldest->generation, 100u);
  EXPECT_TRUE(RecordMatches(84, record));
  EXPECT_EQ(target->Stats().inserts, 116u);
}

TEST_F(SnapshotTest, ASmallerSnapshotFitsALargerStoreInOrder) {
  const std::string path = SavedSnapshot();
  auto target = Open("large.store", 256);
  auto info = LoadSnapshot(*target, path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->records_loaded, 64u);
  const auto contents = Contents(*target);
  ASSERT_EQ(contents.size(), 64u);
  for (std::size_t i = 0; i < contents.size(); ++i) EXPECT_EQ(contents[i].first, 36 + i);
}

TEST_F(SnapshotTest, LoadsThePreviousVersionFromTheCheckedInFile) {
  const std::string path = std::string(AZ_SOURCE_DIR) + "/tests/replay/data/snapshot_v1.azsnap";
  auto target = Open("v1.store", 8, testing::kV1RecordSize, testing::kV1Alpha);
  auto info = LoadSnapshot(*target, path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->version, 1u);
  EXPECT_EQ(info->records_loaded, 6u);
  EXPECT_FALSE(info->generations_preserved);
  EXPECT_TRUE(info->metadata.empty());
  const auto expected = testing::CheckedInV1Records();
  std::vector<std::byte> record(testing::kV1RecordSize);
  for (std::uint64_t slot = 0; slot < 6; ++slot) {
    auto read = target->ReadRecord(slot, record);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->generation, slot);
    EXPECT_EQ(record, expected[slot].bytes);
    EXPECT_EQ(read->priority, expected[slot].priority);
  }
}

TEST_F(SnapshotTest, TheCheckedInVersion1FileMatchesTheVersion1Layout) {
  const std::string path = dir_.File("regenerated_v1.azsnap");
  ASSERT_TRUE(testing::WriteSnapshotV1(path, testing::kV1RecordSize, testing::kV1Alpha,
                                       testing::CheckedInV1Records())
                  .ok());
  EXPECT_EQ(ReadFile(path),
            ReadFile(std::string(AZ_SOURCE_DIR) + "/tests/replay/data/snapshot_v1.azsnap"));
}

TEST_F(SnapshotTest, TruncatedFilesAreRefusedAndTheStoreIsLeftAlone) {
  const std::string path = SavedSnapshot();
  const std::vector<char> whole = ReadFile(path);
  auto store = Bystander();
  for (std::size_t size : {std::size_t{0}, std::size_t{5}, std::size_t{100}, std::size_t{200},
                           whole.size() / 2, whole.size() - 1}) {
    WriteFile(path, std::vector<char>(whole.begin(), whole.begin() + size));
    auto info = LoadSnapshot(*store, path);
    ASSERT_FALSE(info.ok()) << "size " << size;
    EXPECT_EQ(info.status().code(), StatusCode::kDataLoss) << info.status().ToString();
    EXPECT_NE(info.status().message().find("truncated"), std::string::npos)
        << info.status().ToString();
    ExpectUntouched(*store);
  }
}

TEST_F(SnapshotTest, AnyFlippedByteIsRefusedAndTheStoreIsLeftAlone) {
  const std::string path = SavedSnapshot();
  const std::vector<char> whole = ReadFile(path);
  auto store = Bystander();
  int header = 0, body = 0;
  for (std::size_t i = 0; i < whole.size(); i += (i < 256 ? 1 : 7)) {
    std::vector<char> damaged = whole;
    damaged[i] ^= 0x04;
    WriteFile(path, damaged);
    auto info = LoadSnapshot(*store, path);
    ASSERT_FALSE(info.ok()) << "byte " << i << " flipped, yet the snapshot loaded";
    const std::string& message = info.status().message();
    header += message.find("header") != std::string::npos;
    body += message.find("body checksum") != std::string::npos;
  }
  EXPECT_GT(header, 0);
  EXPECT_GT(body, 0);
  ExpectUntouched(*store);
}

TEST_F(SnapshotTest, AFlippedByteInAVersion1FileIsRefused) {
  const std::string path = dir_.File("v1.azsnap");
  std::filesystem::copy_file(std::string(AZ_SOURCE_DIR) + "/tests/replay/data/snapshot_v1.azsnap",
                             path);
  std::vector<char> bytes = ReadFile(path);
  bytes[sizeof(SnapshotHeaderV1) + 10] ^= 0x01;
  WriteFile(path, bytes);
  auto target = Open("v1.store", 8, testing::kV1RecordSize, testing::kV1Alpha);
  auto info = LoadSnapshot(*target, path);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(info.status().message().find("checksum mismatch"), std::string::npos)
      << info.status().ToString();
  EXPECT_EQ(target->Stats().size, 0u);
}

TEST_F(SnapshotTest, IncompatibleOrMissingSnapshotsAreRefusedSayingWhy) {
  const std::string path = SavedSnapshot();
  auto other_size = Open("size.store", 64, 32);
  auto size = LoadSnapshot(*other_size, path);
  EXPECT_EQ(size.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(size.status().message().find("record size is 24 bytes, the store's is 32"),
            std::string::npos)
      << size.status().ToString();
  auto other_alpha = Open("alpha.store", 64, kRecordSize, 0.8);
  auto alpha = LoadSnapshot(*other_alpha, path);
  EXPECT_EQ(alpha.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(alpha.status().message().find("alpha"), std::string::npos);

  auto store = Bystander();
  EXPECT_EQ(LoadSnapshot(*store, dir_.File("missing.azsnap")).status().code(),
            StatusCode::kNotFound);
  std::vector<char> future = ReadFile(path);
  future[8] = 9;  // version 9
  WriteFile(path, future);
  auto version = LoadSnapshot(*store, path);
  EXPECT_EQ(version.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(version.status().message().find("version 9"), std::string::npos)
      << version.status().ToString();
  ExpectUntouched(*store);
}

TEST_F(SnapshotTest, AFailedSaveLeavesTheOldSnapshotInPlace) {
  const std::string path = SavedSnapshot();
  const std::vector<char> before = ReadFile(path);
  auto source = Source();
  // The temporary file cannot be created: the save fails and the old snapshot is untouched.
  std::filesystem::create_directory(path + ".tmp." + std::to_string(::getpid()));
  auto failed = SaveSnapshot(*source, path);
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(ReadFile(path), before);
  EXPECT_EQ(SaveSnapshot(*source, dir_.File("no/such/dir/snap")).status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(
      SaveSnapshot(*source, path, std::vector<std::byte>(kMaxSnapshotMetadata + 1)).status().code(),
      StatusCode::kInvalidArgument);
}

TEST_F(SnapshotTest, UniformStoresRoundTripToo) {
  auto source = Open("uniform.store", 32, kRecordSize, 0.0);
  ASSERT_TRUE(source->Insert(MakeRecords(0, 20, kRecordSize)).ok());
  const std::string path = dir_.File("uniform.azsnap");
  ASSERT_TRUE(SaveSnapshot(*source, path).ok());
  auto target = Open("uniform2.store", 32, kRecordSize, 0.0);
  auto info = LoadSnapshot(*target, path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(target->Stats().size, 20u);
  EXPECT_EQ(target->Stats().priority_sum, 20.0);
}

// A record the learner withdrew (it could not decode it) stays withdrawn across a snapshot: the
// restored store keeps it, with priority 0, and never draws it.
TEST_F(SnapshotTest, AWithdrawnRecordStaysWithdrawnThroughASnapshot) {
  for (double alpha : {0.0, 0.6}) {
    std::filesystem::remove(dir_.File("withdrawn.store"));
    std::filesystem::remove(dir_.File("withdrawn2.store"));
    auto source = Open("withdrawn.store", 8, kRecordSize, alpha);
    std::vector<std::uint64_t> generations(8);
    ASSERT_TRUE(source->Insert(MakeRecords(0, 8, kRecordSize), generations).ok());
    const RecordKey key{3, generations[3]};
    ASSERT_EQ(source->Withdraw({&key, 1}).applied, 1u);
    const std::string path = dir_.File("withdrawn.azsnap");
    ASSERT_TRUE(SaveSnapshot(*source, path).ok());
    auto target = Open("withdrawn2.store", 8, kRecordSize, alpha);
    ASSERT_TRUE(LoadSnapshot(*target, path).ok());
    EXPECT_EQ(target->Stats().size, 8u) << "alpha " << alpha;
    EXPECT_EQ(target->Stats().withdrawn, 1u) << "alpha " << alpha;
    std::vector<std::byte> record(kRecordSize);
    auto info = target->ReadRecord(3, record);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->priority, 0.0);
    EXPECT_TRUE(RecordMatches(3, record));
    Rng rng(5);
    std::vector<SampledSlot> batch(512);
    ASSERT_TRUE(target->Sample(0.5, rng, batch).ok());
    for (const SampledSlot& draw : batch) ASSERT_NE(draw.slot, 3u) << "alpha " << alpha;
  }
}

TEST(SnapshotFormatTest, IsPinned) {
  EXPECT_EQ(kSnapshotVersion, 2u);
  EXPECT_EQ(offsetof(SnapshotHeaderV1, record_count), 16u);
  EXPECT_EQ(offsetof(SnapshotHeaderV1, alpha), 24u);
  EXPECT_EQ(offsetof(SnapshotHeaderV2, record_count), 24u);
  EXPECT_EQ(offsetof(SnapshotHeaderV2, next_generation), 40u);
  EXPECT_EQ(offsetof(SnapshotHeaderV2, metadata_size), 56u);
  EXPECT_EQ(offsetof(SnapshotHeaderV2, body_crc32c), 72u);
  EXPECT_EQ(offsetof(SnapshotHeaderV2, header_crc32c), 76u);
}

}  // namespace
}  // namespace az::replay
