#include "shm/segment.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tests/shm/test_processes.h"

namespace az::shm {
namespace {

using ::az::shm::testing::Child;
using ::az::shm::testing::Eventually;
using ::az::shm::testing::Shared;
using ::az::shm::testing::TestScope;
using ::testing::HasSubstr;

constexpr std::uint32_t kKind = FourCc('T', 'E', 'S', 'T');

SegmentSpec Spec() { return {kKind, 3, 128, 64, 8192}; }
SegmentExpectation Expect() { return {kKind, 3, 128, 64}; }
void NoInit(std::span<std::byte>) {}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  AZ_CHECK(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

TEST(SegmentTest, OpenerSeesTheCreatorsBytesAndHeader) {
  TestScope scope("bytes");
  auto created = Segment::Create(*scope, "a", Spec(), [](std::span<std::byte> payload) {
    std::memset(payload.data(), 0x5a, payload.size());
  });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto opened = Segment::Open(*scope, "a", Expect());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->payload().size(), 8192u);
  EXPECT_EQ(opened->payload()[100], std::byte{0x5a});
  EXPECT_EQ(opened->header().creator_pid, static_cast<std::uint32_t>(::getpid()));
  EXPECT_EQ(opened->header().record_bytes, 128u);
  EXPECT_EQ(opened->header().capacity, 64u);
  created->payload()[7] = std::byte{1};
  EXPECT_EQ(opened->payload()[7], std::byte{1});  // the same memory, not a copy
}

TEST(SegmentTest, EveryHeaderMismatchIsRefusedWithItsName) {
  TestScope scope("mismatch");
  ASSERT_TRUE(Segment::Create(*scope, "a", Spec(), NoInit).ok());
  struct Case {
    SegmentExpectation expected;
    const char* named;
  } cases[] = {
      {{FourCc('R', 'I', 'N', 'G'), 3, 128, 64},
       "layout kind is 'TEST' but this program expects 'RING'"},
      {{kKind, 4, 128, 64}, "layout version is 3 but this program expects 4"},
      {{kKind, 3, 256, 64}, "record size is 128 bytes but this program expects 256 bytes"},
      {{kKind, 3, 128, 32}, "capacity is 64 records but this program expects 32 records"},
  };
  for (const Case& c : cases) {
    auto opened = Segment::Open(*scope, "a", c.expected);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(opened.status().message(), HasSubstr(c.named));
  }
  // Zero record size and capacity accept whatever the segment has.
  EXPECT_TRUE(Segment::Open(*scope, "a", {kKind, 3, 0, 0}).ok());
}

TEST(SegmentTest, ForeignOrTruncatedObjectIsRefused) {
  TestScope scope("foreign");
  auto location = scope->Locate("junk");
  const int fd = ::shm_open(location->c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  const char junk[] = "definitely not a segment header";
  ASSERT_EQ(::pwrite(fd, junk, sizeof junk, 0), static_cast<ssize_t>(sizeof junk));
  auto opened = Segment::Open(*scope, "junk", Expect());
  ASSERT_FALSE(opened.ok());
  EXPECT_THAT(opened.status().message(), HasSubstr("not an az segment"));

  ASSERT_TRUE(Segment::Create(*scope, "cut", Spec(), NoInit).ok());
  ASSERT_EQ(::truncate(scope->FilePath("cut")->c_str(), 4096 + 100), 0);
  opened = Segment::Open(*scope, "cut", Expect());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(opened.status().message(), HasSubstr("truncated"));
  ::close(fd);
}

TEST(SegmentTest, CreatedOwnerOnlyWhateverTheUmask) {
  TestScope scope("umask");
  const mode_t previous = ::umask(0);
  auto created = Segment::Create(*scope, "a", Spec(), NoInit);
  ::umask(previous);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(ModeOf(created->location()), 0600u);
}

TEST(SegmentTest, OpenRefusesASegmentOthersCanReach) {
  TestScope scope("wide");
  auto created = Segment::Create(*scope, "a", Spec(), NoInit);
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(::chmod(created->location().c_str(), 0644), 0);
  auto opened = Segment::Open(*scope, "a", Expect());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(opened.status().message(), HasSubstr("mode 0644"));
}

TEST(SegmentTest, AnotherUserCannotOpenIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch to another user";
  TestScope scope("user");
  ASSERT_TRUE(Segment::Create(*scope, "a", Spec(), NoInit).ok());
  Child child = Child::Spawn([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 2;  // nobody
    auto opened = Segment::Open(*scope, "a", Expect());
    if (opened.ok()) return 1;
    return opened.status().code() == StatusCode::kFailedPrecondition ? 0 : 3;
  });
  EXPECT_EQ(child.ExitCode(), 0);
}

TEST(SegmentTest, CreatingAnExistingNameFails) {
  TestScope scope("exists");
  auto first = Segment::Create(*scope, "a", Spec(), NoInit);
  ASSERT_TRUE(first.ok());
  auto second = Segment::Create(*scope, "a", Spec(), NoInit, {.reclaim_stale = true});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(second.status().message(), HasSubstr("alive"));
}

TEST(SegmentTest, StaleSegmentOfADeadCreatorIsDetectedAndReclaimed) {
  TestScope scope("stale");
  Child creator = Child::Spawn([&] {
    auto created = Segment::Create(*scope, "a", Spec(), NoInit);
    if (!created.ok()) return 1;
    ::pause();  // killed here, holding the segment
    return 0;
  });
  ASSERT_TRUE(Eventually([&] {
    return Segment::Inspect(*scope, "a").ok() && Segment::Inspect(*scope, "a")->initialised;
  }));
  auto live = Segment::Inspect(*scope, "a");
  EXPECT_TRUE(live->creator_alive);
  EXPECT_FALSE(live->stale);
  creator.Kill();
  ASSERT_TRUE(creator.Wait(std::chrono::seconds(10)));

  auto dead = Segment::Inspect(*scope, "a");
  ASSERT_TRUE(dead.ok());
  EXPECT_FALSE(dead->creator_alive);
  EXPECT_TRUE(dead->attached.empty());
  EXPECT_TRUE(dead->stale);
  auto refused = Segment::Create(*scope, "a", Spec(), NoInit);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("stale"));
  auto reclaimed = Segment::Create(*scope, "a", Spec(), NoInit, {.reclaim_stale = true});
  ASSERT_TRUE(reclaimed.ok()) << reclaimed.status().ToString();
  EXPECT_EQ(reclaimed->header().creator_pid, static_cast<std::uint32_t>(::getpid()));
}

TEST(SegmentTest, ALiveAttachedProcessKeepsASegmentFromBeingReclaimed) {
  TestScope scope("attached");
  Shared<std::atomic<int>> opened;
  Child creator =
      Child::Spawn([&] { return Segment::Create(*scope, "a", Spec(), NoInit).ok() ? 0 : 1; });
  ASSERT_EQ(creator.ExitCode(), 0);  // creator gone, segment left behind
  Child user = Child::Spawn([&] {
    auto segment = Segment::Open(*scope, "a", Expect());
    if (!segment.ok()) return 1;
    opened->store(1);
    ::pause();
    return 0;
  });
  ASSERT_TRUE(Eventually([&] { return opened->load() == 1; }));
  auto refused = Segment::Create(*scope, "a", Spec(), NoInit, {.reclaim_stale = true});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("1 live processes attached: " + std::to_string(user.pid())));
  user.Kill();
  ASSERT_TRUE(user.Wait(std::chrono::seconds(10)));
  EXPECT_TRUE(Segment::Create(*scope, "a", Spec(), NoInit, {.reclaim_stale = true}).ok());
}

TEST(SegmentTest, UnfinishedSegmentTimesOutAndCountsAsStale) {
  TestScope scope("unfinished");
  // A creator that died between creating the object and publishing its header.
  const int fd = ::shm_open(scope->Locate("a")->c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  ::close(fd);
  auto opened = Segment::Open(*scope, "a", Expect(), {.init_wait = std::chrono::milliseconds(30)});
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(opened.status().message(), HasSubstr("no finished header"));
  auto info = Segment::Inspect(*scope, "a", std::chrono::milliseconds(0));
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->initialised);
  EXPECT_TRUE(info->stale);
  EXPECT_TRUE(Segment::Create(*scope, "a", Spec(), NoInit,
                              {.reclaim_stale = true, .init_wait = std::chrono::milliseconds(0)})
                  .ok());
}

TEST(SegmentTest, ScopesKeepSegmentsOfTheSameNameApart) {
  TestScope one("one");
  TestScope two("two");
  ASSERT_TRUE(Segment::Create(*one, "eval", Spec(), [](std::span<std::byte> p) {
                p[0] = std::byte{1};
              }).ok());
  ASSERT_TRUE(Segment::Create(*two, "eval", Spec(), [](std::span<std::byte> p) {
                p[0] = std::byte{2};
              }).ok());
  EXPECT_EQ(Segment::Open(*one, "eval", Expect())->payload()[0], std::byte{1});
  EXPECT_EQ(Segment::Open(*two, "eval", Expect())->payload()[0], std::byte{2});
  EXPECT_EQ(*Segment::RemoveAll(*one), 1);
  EXPECT_EQ(Segment::Open(*one, "eval", Expect()).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Segment::Open(*two, "eval", Expect()).ok());
}

TEST(SegmentTest, RunDirectoryScopeHoldsSegmentsAsFiles) {
  char dir_template[] = "/dev/shm/aztest-dir-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto scope = Scope::Parse("dir:" + dir);
  ASSERT_TRUE(scope.ok()) << scope.status().ToString();
  {
    auto created = Segment::Create(*scope, "replay", Spec(), NoInit);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    EXPECT_EQ(created->location(), dir + "/replay.shm");
    EXPECT_EQ(ModeOf(dir + "/replay.shm"), 0600u);
    EXPECT_TRUE(Segment::Open(*scope, "replay", Expect()).ok());
  }
  EXPECT_EQ(*Segment::RemoveAll(*scope), 1);
  EXPECT_FALSE(std::filesystem::exists(dir + "/replay.shm"));
  std::filesystem::remove(dir);
}

TEST(SegmentTest, BadNamesAreRejected) {
  EXPECT_EQ(Scope::Prefix("a/b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Scope::Prefix("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Scope::Prefix(".hidden").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Scope::Directory("/no/such/dir").status().code(), StatusCode::kNotFound);
  auto scope = Scope::Prefix("ok");
  EXPECT_EQ(scope->Locate("x y").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*scope->Locate("eval"), "/ok.eval");
}

}  // namespace
}  // namespace az::shm
