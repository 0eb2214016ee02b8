// The snapshotter (services/replay/server/snapshotter.h) in process: a real store in a temporary
// directory, its thread writing real snapshot files, which load back into a fresh store.

#include "services/replay/server/snapshotter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "core/replay/snapshot.h"
#include "tests/services/replay/server/server_test_util.h"

namespace az::replayd {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::InsertIds;
using testing::OpenStore;
using testing::StoredIds;
using testing::TempDir;
using testing::WaitFor;
using namespace std::chrono_literals;

class SnapshotterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenStore(dir_.path() + "/replay.store", 64);
    InsertIds(*store_, 0, 40);
  }
  std::string SnapshotDir() const { return dir_.path() + "/snapshots"; }

  std::unique_ptr<Snapshotter> Make(SnapshotterOptions options,
                                    Snapshotter::Done on_done = nullptr) {
    options.dir = SnapshotDir();
    Result<std::unique_ptr<Snapshotter>> made =
        Snapshotter::Create(*store_, options, std::move(on_done));
    AZ_CHECK(made.ok(), made.status().ToString());
    return std::move(made).value();
  }

  TempDir dir_;
  std::unique_ptr<replay::ReplayStore> store_;
};

TEST_F(SnapshotterTest, WritesPeriodicSnapshotsAndKeepsTheNewestN) {
  std::atomic<int> done{0};
  auto snapshotter =
      Make({.interval_seconds = 0.05, .keep = 2}, [&](const Result<SnapshotResult>& result) {
        EXPECT_TRUE(result.ok()) << result.status().ToString();
        ++done;
      });
  snapshotter->Start();
  // Inserts go on while snapshots are written; each snapshot has the store's next generation in
  // its name, so names differ.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(WaitFor([&] { return done.load() > i; }, 20s)) << "snapshot " << i;
    InsertIds(*store_, 100 + i, 1);
  }
  snapshotter->Stop();
  const SnapshotterStats stats = snapshotter->Stats();
  EXPECT_GE(stats.written, 5u);
  EXPECT_EQ(stats.failed, 0u);
  ASSERT_TRUE(stats.last.has_value());
  const std::vector<std::string> kept = Snapshotter::List(SnapshotDir());
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept.back(), stats.last->path);
  Result<std::string> latest = Snapshotter::Latest(SnapshotDir());
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(*latest, stats.last->path);
  for (const std::string& path : kept) {
    EXPECT_THAT(std::filesystem::path(path).filename().string(), HasSubstr("replay-"));
  }
}

TEST_F(SnapshotterTest, ASnapshotLoadsBackIntoAFreshStoreWithItsMetadata) {
  auto snapshotter = Make({.interval_seconds = 0, .keep = 3, .metadata = [] {
                             return std::string(R"({"model_version":7})");
                           }});
  snapshotter->Start();
  std::promise<Result<SnapshotResult>> answered;
  snapshotter->RequestNow(
      [&](const Result<SnapshotResult>& result) { answered.set_value(result); });
  std::future<Result<SnapshotResult>> future = answered.get_future();
  ASSERT_EQ(future.wait_for(20s), std::future_status::ready);
  const Result<SnapshotResult> result = future.get();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->records, 40u);
  EXPECT_GT(result->bytes, 40u * testing::kRecordBytes);
  snapshotter->Stop();

  auto fresh = OpenStore(dir_.path() + "/fresh.store", 64);
  Result<replay::SnapshotInfo> loaded = replay::LoadSnapshot(*fresh, result->path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->records_loaded, 40u);
  EXPECT_THAT(StoredIds(*fresh), ElementsAreArray(StoredIds(*store_)));
  const std::string metadata(reinterpret_cast<const char*>(loaded->metadata.data()),
                             loaded->metadata.size());
  EXPECT_EQ(metadata, R"({"model_version":7})");
}

TEST_F(SnapshotterTest, WithoutAnIntervalItWritesOnlyWhenAsked) {
  auto snapshotter = Make({.interval_seconds = 0, .keep = 3});
  snapshotter->Start();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(snapshotter->Stats().written, 0u);
  Result<SnapshotResult> now = snapshotter->WriteNow();
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(Snapshotter::List(SnapshotDir()).size(), 1u);
  EXPECT_EQ(snapshotter->Stats().written, 1u);
}

TEST_F(SnapshotterTest, RequestsQueuedWhenItStopsAreAnsweredCancelled) {
  auto snapshotter = Make({.interval_seconds = 0, .keep = 3});
  // Not started: the request waits in the queue until Stop().
  std::atomic<int> cancelled{0};
  snapshotter->RequestNow([&](const Result<SnapshotResult>& result) {
    if (result.status().code() == StatusCode::kCancelled) ++cancelled;
  });
  snapshotter->Stop();
  EXPECT_EQ(cancelled.load(), 1);
  snapshotter->RequestNow([&](const Result<SnapshotResult>& result) {
    if (result.status().code() == StatusCode::kCancelled) ++cancelled;
  });
  EXPECT_EQ(cancelled.load(), 2);
}

TEST_F(SnapshotterTest, LeftoversOfAKilledWriteAreRemovedAtStartAndBadSettingsRefused) {
  std::filesystem::create_directories(SnapshotDir());
  const std::string leftover =
      SnapshotDir() + "/replay-20240101T000000Z-g0000000000000001.azsnap.tmp.123";
  { std::ofstream(leftover) << "half a snapshot"; }
  auto snapshotter = Make({.interval_seconds = 0, .keep = 3});
  EXPECT_FALSE(std::filesystem::exists(leftover));
  EXPECT_EQ(snapshotter->SetKeep(0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(snapshotter->SetInterval(-1).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(snapshotter->SetInterval(5).ok());
  EXPECT_EQ(snapshotter->Stats().interval_seconds, 5);
  EXPECT_EQ(Snapshotter::Latest(SnapshotDir()).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace az::replayd
