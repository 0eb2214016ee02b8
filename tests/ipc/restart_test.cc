// A real server process killed with SIGKILL and restarted while a client waits: the client gets its
// answer from the new process through its retries. Also: a client that starts before its server, a
// client that gives up, and a late subscriber after the publishing process was killed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include "ipc/client.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "ipc/event_subscriber.h"
#include "tests/ipc/test_util.h"

namespace az::ipc {
namespace {

using testing::BinaryPath;
using testing::ChildProcess;
using ::testing::HasSubstr;
using testing::TempDir;

std::unique_ptr<ChildProcess> StartEchoServer(const std::string& run_dir,
                                              std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {BinaryPath("az_ipc_echo_server"), "--run-dir", run_dir};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto child = std::make_unique<ChildProcess>(argv);
  AZ_CHECK(child->started(), "could not start " + argv[0]);
  return child;
}

// Waits until the echo server in `run_dir` answers; returns its pid.
std::int64_t WaitUntilServing(const std::string& run_dir) {
  Result<Client> client = Client::Create({.endpoint = *ControlEndpoint(run_dir, "echo"),
                                          .attempt_timeout = std::chrono::milliseconds(200),
                                          .max_attempts = 100});
  AZ_CHECK(client.ok());
  Result<Reply> reply = client->Call("pid");
  AZ_CHECK(reply.ok(), reply.status().ToString());
  return reply->body["pid"].get<std::int64_t>();
}

TEST(IpcRestartTest, ClientGetsItsAnswerFromAServerRestartedAfterSigkill) {
  TempDir dir;
  auto first = StartEchoServer(dir.path(), {"--hang"});
  ASSERT_EQ(WaitUntilServing(dir.path()), first->pid());

  // The client asks a question the first server will never answer.
  Result<Client> client = Client::Create({.endpoint = *ControlEndpoint(dir.path(), "echo"),
                                          .attempt_timeout = std::chrono::milliseconds(300),
                                          .max_attempts = 100});
  ASSERT_TRUE(client.ok());
  Result<Reply> reply = Internal("no reply yet");
  std::thread waiting([&] { reply = client->Call("hang"); });

  const std::string marker = dir.path() + "/echo.hanging";
  ASSERT_TRUE(testing::WaitFor([&] { return std::filesystem::exists(marker); }));
  first->Kill();
  std::filesystem::remove(marker);
  // The killed server's discovery record still says running, with a dead pid.
  Result<ServiceInfo> record = ReadServiceInfo(dir.path(), "echo");
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(record->state, "running");
  EXPECT_FALSE(ProcessAlive(record->pid));

  auto second = StartEchoServer(dir.path());  // answers "hang" at once
  waiting.join();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["pid"], second->pid());
  EXPECT_GT(client->last_attempts(), 1);
  EXPECT_EQ(ReadServiceInfo(dir.path(), "echo")->pid, second->pid());

  // And the same client goes on working with the new server.
  Result<Reply> again = client->Call("echo", {{"x", 1}});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->body["args"]["x"], 1);
}

// A request whose connection drops (the server was killed) is lost with it: the client must not
// wait out its 60 s attempt. With one attempt it fails at once with UNAVAILABLE; with more, the next
// attempt reaches the restarted server.
TEST(IpcRestartTest, ACallWhoseServerIsKilledEndsAtOnceInsteadOfWaitingOutItsDeadline) {
  TempDir dir;
  auto first = StartEchoServer(dir.path(), {"--hang"});
  ASSERT_EQ(WaitUntilServing(dir.path()), first->pid());
  const std::string marker = dir.path() + "/echo.hanging";

  Result<Client> once = Client::Create({.endpoint = *ControlEndpoint(dir.path(), "echo"),
                                        .attempt_timeout = std::chrono::seconds(60),
                                        .max_attempts = 1});
  ASSERT_TRUE(once.ok());
  Result<Reply> reply = Internal("no reply yet");
  std::thread waiting([&] { reply = once->Call("hang"); });
  ASSERT_TRUE(testing::WaitFor([&] { return std::filesystem::exists(marker); }));
  const auto killed = std::chrono::steady_clock::now();
  first->Kill();
  waiting.join();
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(30));
  EXPECT_EQ(reply.status().code(), StatusCode::kUnavailable) << reply.status().ToString();
  EXPECT_THAT(reply.status().message(), HasSubstr("dropped"));
  std::filesystem::remove(marker);

  auto second = StartEchoServer(dir.path(), {"--hang"});
  ASSERT_EQ(WaitUntilServing(dir.path()), second->pid());
  Result<Client> retrying = Client::Create({.endpoint = *ControlEndpoint(dir.path(), "echo"),
                                            .attempt_timeout = std::chrono::seconds(60),
                                            .max_attempts = 2});
  ASSERT_TRUE(retrying.ok());
  std::thread again([&] { reply = retrying->Call("hang"); });
  ASSERT_TRUE(testing::WaitFor([&] { return std::filesystem::exists(marker); }));
  second->Kill();
  std::filesystem::remove(marker);
  auto third = StartEchoServer(dir.path());  // answers "hang" at once
  const auto restarted = std::chrono::steady_clock::now();
  again.join();
  EXPECT_LT(std::chrono::steady_clock::now() - restarted, std::chrono::seconds(30));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["pid"], third->pid());
  EXPECT_EQ(retrying->last_attempts(), 2);
}

TEST(IpcRestartTest, ClientStartedBeforeItsServerGetsAnAnswer) {
  TempDir dir;
  Result<Client> client = Client::Create({.endpoint = *ControlEndpoint(dir.path(), "echo"),
                                          .attempt_timeout = std::chrono::milliseconds(300),
                                          .max_attempts = 100});
  ASSERT_TRUE(client.ok());
  Result<Reply> reply = Internal("no reply yet");
  std::thread waiting([&] { reply = client->Call("pid"); });
  auto server = StartEchoServer(dir.path());
  waiting.join();
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["pid"], server->pid());
}

TEST(IpcRestartTest, ClientGivesUpWithDeadlineExceededWhenNoServerComes) {
  TempDir dir;
  Result<Client> client = Client::Create({.endpoint = *ControlEndpoint(dir.path(), "echo"),
                                          .attempt_timeout = std::chrono::milliseconds(100),
                                          .max_attempts = 2});
  ASSERT_TRUE(client.ok());
  Result<Reply> reply = client->Call("pid");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(reply.status().message(), HasSubstr("after 2 attempt(s)"));
  EXPECT_THAT(reply.status().message(), HasSubstr("is the service running?"));
  EXPECT_EQ(client->last_attempts(), 2);
}

TEST(IpcRestartTest, ShutdownCommandEndsTheProcessCleanly) {
  TempDir dir;
  auto server = StartEchoServer(dir.path());
  WaitUntilServing(dir.path());
  Result<Client> client = Client::Create({.endpoint = *ControlEndpoint(dir.path(), "echo")});
  ASSERT_TRUE(client.ok());
  Result<Reply> reply = client->Call("shutdown");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(server->Wait(), 0);
  EXPECT_EQ(ReadServiceInfo(dir.path(), "echo")->state, "stopped");
}

TEST(IpcRestartTest, LateSubscriberGetsTheModelPublishedBeforeThePublisherWasKilled) {
  TempDir dir;
  auto first = StartEchoServer(dir.path(), {"--publish"});
  WaitUntilServing(dir.path());
  Result<Client> client = Client::Create({.endpoint = *ControlEndpoint(dir.path(), "echo")});
  ASSERT_TRUE(client.ok());
  for (int version = 1; version <= 2; ++version) {
    Result<Reply> reply =
        client->Call("publish-model", {{"version", version},
                                       {"path", "/w/" + std::to_string(version)},
                                       {"checksum", "crc32c:0000000" + std::to_string(version)}});
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  }
  first->Kill();

  // A subscriber that starts while the publisher is down, then the publisher comes back.
  Result<EventSubscriber> subscriber = EventSubscriber::Create(
      {.endpoints = {*EventsEndpoint(dir.path(), "echo")}, .topics = {"model"}});
  ASSERT_TRUE(subscriber.ok());
  auto second = StartEchoServer(dir.path(), {"--publish"});
  Result<Event> event = subscriber->Next(std::chrono::seconds(20));
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  Result<ModelPublished> model = ModelPublishedFromEvent(*event);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->version, 2);
  EXPECT_EQ(model->path, "/w/2");
  EXPECT_EQ(model->checksum, "crc32c:00000002");
  EXPECT_EQ(ReadServiceInfo(dir.path(), "echo")->events_endpoint,
            *EventsEndpoint(dir.path(), "echo"));
}

}  // namespace
}  // namespace az::ipc
