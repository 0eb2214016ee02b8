// Endpoint naming in a run directory, including the fall-back for paths over the unix socket limit.

#include "ipc/endpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "ipc/client.h"
#include "ipc/server.h"
#include "tests/ipc/test_util.h"

namespace az::ipc {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TempDir;

TEST(IpcEndpointTest, DefaultEndpointsLiveInTheRunDirectory) {
  TempDir dir;
  EXPECT_EQ(*ControlEndpoint(dir.path(), "replay"), "ipc://" + dir.path() + "/replay.ctl");
  EXPECT_EQ(*EventsEndpoint(dir.path(), "learner"), "ipc://" + dir.path() + "/learner.pub");
  // Trailing slashes and dots do not change the name.
  EXPECT_EQ(*ControlEndpoint(dir.path() + "/./", "replay"), "ipc://" + dir.path() + "/replay.ctl");
}

TEST(IpcEndpointTest, RelativeRunDirectoryIsMadeAbsolute) {
  TempDir dir;
  const auto previous = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  Result<std::string> endpoint = ControlEndpoint("run", "replay");
  std::filesystem::current_path(previous);
  ASSERT_TRUE(endpoint.ok());
  EXPECT_EQ(*endpoint, "ipc://" + dir.path() + "/run/replay.ctl");
}

TEST(IpcEndpointTest, ShmPrefixIsTheSameForEverySpellingOfARunDirectoryAndDiffersBetweenRuns) {
  TempDir dir;
  TempDir other;
  Result<std::string> prefix = RunShmPrefix(dir.path());
  ASSERT_TRUE(prefix.ok());
  EXPECT_THAT(*prefix, StartsWith("az-"));
  EXPECT_EQ(prefix->size(), 19u);
  EXPECT_EQ(*RunShmPrefix(dir.path() + "/./"), *prefix);
  EXPECT_NE(*RunShmPrefix(other.path()), *prefix);
  EXPECT_FALSE(RunShmPrefix("").ok());
}

TEST(IpcEndpointTest, ServiceNamesAreChecked) {
  for (const char* good : {"replay", "selfplay-0", "gpu_eval", "a", "0abc"}) {
    EXPECT_TRUE(ValidateServiceName(good).ok()) << good;
  }
  for (const char* bad : {"", "Replay", "-x", "_x", "a b", "a/b", "a.b", "../x",
                          "abcdefghijabcdefghijabcdefghijabc"}) {
    Status status = ValidateServiceName(bad);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ControlEndpoint("/tmp", "A").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ControlEndpoint("", "a").status().code(), StatusCode::kInvalidArgument);
}

TEST(IpcEndpointTest, LongRunDirectoryFallsBackToAnAbstractSocketThatWorks) {
  TempDir dir;
  const std::string long_dir = dir.path() + "/" + std::string(60, 'd') + "/" + std::string(60, 'e');
  Result<std::string> endpoint = ControlEndpoint(long_dir, "replay");
  ASSERT_TRUE(endpoint.ok());
  EXPECT_THAT(*endpoint, StartsWith("ipc://@az-"));
  EXPECT_THAT(*endpoint, ::testing::EndsWith("-replay.ctl"));
  EXPECT_LE(IpcPath(*endpoint)->size(), kMaxUnixSocketPath);
  // Deterministic, and different for another run directory.
  EXPECT_EQ(*endpoint, *ControlEndpoint(long_dir, "replay"));
  EXPECT_NE(*endpoint, *ControlEndpoint(long_dir + "x", "replay"));

  Result<std::unique_ptr<Server>> server =
      Server::Create({.service = "replay", .run_dir = long_dir});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_EQ((*server)->endpoint(), *endpoint);
  ASSERT_TRUE((*server)->Start().ok());
  EXPECT_TRUE(IpcEndpointInUse(*endpoint));
  Result<Client> client = Client::Create({.endpoint = *endpoint});
  ASSERT_TRUE(client.ok());
  Result<Reply> reply = client->Call("status");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["service"], "replay");
}

TEST(IpcEndpointTest, InUseProbeTellsALiveListenerFromAStaleFile) {
  TempDir dir;
  const std::string endpoint = *ControlEndpoint(dir.path(), "probe");
  EXPECT_FALSE(IpcEndpointInUse(endpoint));  // nothing there
  {
    Result<std::unique_ptr<Server>> server =
        Server::Create({.service = "probe", .run_dir = dir.path()});
    ASSERT_TRUE(server.ok());
    EXPECT_TRUE(IpcEndpointInUse(endpoint));
  }
  // A socket file nobody listens on, as a SIGKILLed server leaves behind.
  const std::string path = dir.path() + "/probe.ctl";
  std::filesystem::remove(path);
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ::close(fd);
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(IpcEndpointInUse(endpoint));
  // A new server takes the stale endpoint over.
  Result<std::unique_ptr<Server>> server =
      Server::Create({.service = "probe", .run_dir = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  EXPECT_TRUE(IpcEndpointInUse(endpoint));
  EXPECT_FALSE(IpcEndpointInUse("tcp://127.0.0.1:1"));
  EXPECT_EQ(IpcPath("tcp://127.0.0.1:1"), std::nullopt);
}

}  // namespace
}  // namespace az::ipc
