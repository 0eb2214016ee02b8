// CURVE on tcp:// endpoints (ipc/curve.h): a run's keys are made once, with secrets only the owner
// may read; the run's own clients are let in, and a client with another key, with the wrong server
// key, or without CURVE is refused, with an error that says which key to check. Real sockets on
// 127.0.0.1 throughout.

#include "ipc/curve.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "ipc/client.h"
#include "ipc/event_publisher.h"
#include "ipc/event_subscriber.h"
#include "ipc/file_util.h"
#include "ipc/server.h"
#include "ipc/zmq_context.h"
#include "tests/ipc/test_util.h"

namespace az::ipc {
namespace {

using ::az::ipc::testing::TempDir;
using ::az::ipc::testing::WaitFor;
using ::testing::HasSubstr;

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

std::unique_ptr<Server> StartTcpServer(const std::string& run_dir) {
  Result<std::unique_ptr<Server>> server =
      Server::Create({.service = "svc", .run_dir = run_dir, .endpoint = "tcp://127.0.0.1:*"});
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!server.ok()) return nullptr;
  EXPECT_TRUE((*server)->Start().ok());
  return std::move(server).value();
}

Result<Reply> StatusOver(const std::string& endpoint, CurveClientKeys keys) {
  AZ_ASSIGN_OR_RETURN(Client client,
                      Client::Create({.endpoint = endpoint,
                                      .curve = std::move(keys),
                                      .attempt_timeout = std::chrono::milliseconds(1500),
                                      .max_attempts = 2}));
  return client.Call("status");
}

TEST(CurveKeysTest, ARunsKeysAreMadeOnceWithSecretsOnlyTheOwnerMayRead) {
  TempDir dir;
  ASSERT_TRUE(EnsureRunKeys(dir.path()).ok());
  const std::string keys = RunKeysDir(dir.path());
  EXPECT_EQ(ModeOf(keys), 0700u);
  EXPECT_EQ(ModeOf(keys + "/server.secret"), 0600u);
  EXPECT_EQ(ModeOf(keys + "/client.secret"), 0600u);

  Result<CurveServerKeys> server = LoadServerKeys(dir.path());
  Result<CurveClientKeys> client = LoadClientKeys(dir.path());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_TRUE(IsZ85Key(server->server.public_key));
  EXPECT_NE(server->server.public_key, client->client.public_key);
  EXPECT_EQ(client->server_public_key, server->server.public_key);
  EXPECT_THAT(server->authorized_clients, ::testing::ElementsAre(client->client.public_key));

  // A second call keeps them.
  ASSERT_TRUE(EnsureRunKeys(dir.path()).ok());
  EXPECT_EQ(LoadServerKeys(dir.path())->server.secret_key, server->server.secret_key);
}

TEST(CurveKeysTest, ProcessesMakingTheKeysAtOnceAllGetTheSameOnes) {
  TempDir dir;
  std::vector<std::string> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      Result<CurveServerKeys> keys = LoadServerKeys(dir.path());
      if (keys.ok()) seen[i] = keys->server.public_key;
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& key : seen) EXPECT_EQ(key, seen.front());
  EXPECT_TRUE(IsZ85Key(seen.front()));
  // No half-made directories are left beside keys/.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(CurveKeysTest, ASecretOthersMayReadOrAFileWithoutAKeyIsRefusedNamingTheFile) {
  TempDir dir;
  ASSERT_TRUE(EnsureRunKeys(dir.path()).ok());
  const std::string keys = RunKeysDir(dir.path());
  ASSERT_EQ(::chmod((keys + "/server.secret").c_str(), 0644), 0);
  Result<CurveServerKeys> open = LoadServerKeys(dir.path());
  EXPECT_EQ(open.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(open.status().message(), HasSubstr("server.secret"));
  EXPECT_THAT(open.status().message(), HasSubstr("chmod 600"));

  ASSERT_TRUE(WriteFileAtomically(keys + "/authorized_clients", "# ok\nnot a key\n").ok());
  ASSERT_EQ(::chmod((keys + "/server.secret").c_str(), 0600), 0);
  Result<CurveServerKeys> bad = LoadServerKeys(dir.path());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(bad.status().message(), HasSubstr("authorized_clients line 2"));
}

TEST(CurveServerTest, ATcpEndpointWithoutKeysOrARunDirectoryIsRefused) {
  Result<std::unique_ptr<Server>> server =
      Server::Create({.service = "svc", .endpoint = "tcp://127.0.0.1:*"});
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("CURVE"));
  Result<Client> client = Client::Create({.endpoint = "tcp://127.0.0.1:5555"});
  EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument);
  Result<EventSubscriber> subscriber =
      EventSubscriber::Create({.endpoints = {"tcp://127.0.0.1:5555"}});
  EXPECT_EQ(subscriber.status().code(), StatusCode::kInvalidArgument);
}

TEST(CurveServerTest, TheRunsOwnClientsAreAnsweredOverTcp) {
  TempDir dir;
  std::unique_ptr<Server> server = StartTcpServer(dir.path());
  ASSERT_NE(server, nullptr);
  Result<Client> client = Client::Create({.endpoint = server->endpoint(), .run_dir = dir.path()});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  Result<Reply> reply = client->Call("status");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["service"], "svc");
  EXPECT_EQ(reply->body["curve_refused"], 0);
}

TEST(CurveServerTest, AClientWithAnotherKeyIsRefusedAndToldWhichKeyToAdd) {
  TempDir dir;
  std::unique_ptr<Server> server = StartTcpServer(dir.path());
  ASSERT_NE(server, nullptr);
  Result<CurveClientKeys> own = LoadClientKeys(dir.path());
  ASSERT_TRUE(own.ok());
  CurveClientKeys stranger = *own;
  stranger.client = *GenerateCurveKeyPair();

  const auto start = std::chrono::steady_clock::now();
  Result<Reply> refused = StatusOver(server->endpoint(), stranger);
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("refused this client's CURVE key"));
  EXPECT_THAT(refused.status().message(), HasSubstr("authorized_clients"));
  // Told after the first attempt, not after every retry.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2900));

  // The server counts it and goes on answering the run's own clients.
  Result<Reply> status = StatusOver(server->endpoint(), *own);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_GE(status->body["curve_refused"].get<int>(), 1);
}

TEST(CurveServerTest, AKeyAddedToAuthorizedClientsIsLetInAfterARestart) {
  TempDir dir;
  const CurveKeyPair other = *GenerateCurveKeyPair();
  CurveClientKeys guest = *LoadClientKeys(dir.path());
  guest.client = other;
  {
    std::unique_ptr<Server> server = StartTcpServer(dir.path());
    ASSERT_NE(server, nullptr);
    EXPECT_EQ(StatusOver(server->endpoint(), guest).status().code(),
              StatusCode::kPermissionDenied);
  }
  std::ofstream(RunKeysDir(dir.path()) + "/authorized_clients", std::ios::app)
      << other.public_key << "\n";
  std::unique_ptr<Server> server = StartTcpServer(dir.path());
  ASSERT_NE(server, nullptr);
  Result<Reply> reply = StatusOver(server->endpoint(), guest);
  EXPECT_TRUE(reply.ok()) << reply.status().ToString();
}

TEST(CurveServerTest, AClientWithTheWrongServerKeyIsToldItsHandshakeNeverCompleted) {
  TempDir dir;
  std::unique_ptr<Server> server = StartTcpServer(dir.path());
  ASSERT_NE(server, nullptr);
  CurveClientKeys wrong = *LoadClientKeys(dir.path());
  wrong.server_public_key = GenerateCurveKeyPair()->public_key;
  Result<Reply> reply = StatusOver(server->endpoint(), wrong);
  EXPECT_EQ(reply.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(reply.status().message(), HasSubstr("no CURVE handshake completed"));
}

TEST(CurveServerTest, APlainTextPeerGetsNoAnswer) {
  TempDir dir;
  std::unique_ptr<Server> server = StartTcpServer(dir.path());
  ASSERT_NE(server, nullptr);
  std::shared_ptr<zmq::context_t> context = SharedContext();
  zmq::socket_t plain(*context, zmq::socket_type::dealer);
  plain.set(zmq::sockopt::linger, 0);
  plain.connect(server->endpoint());
  plain.send(zmq::message_t(), zmq::send_flags::sndmore);
  plain.send(zmq::buffer(std::string_view(R"({"cmd":"status","id":1})")));
  zmq::pollitem_t items[] = {{plain.handle(), 0, ZMQ_POLLIN, 0}};
  EXPECT_EQ(zmq::poll(items, 1, std::chrono::milliseconds(1500)), 0);
  EXPECT_EQ(server->stats().requests_total, 0u);
}

TEST(CurveEventsTest, ATcpPublisherReachesTheRunsSubscribersAndRefusesOthers) {
  TempDir dir;
  Result<std::unique_ptr<EventPublisher>> publisher = EventPublisher::Create(
      {.service = "learner", .run_dir = dir.path(), .endpoint = "tcp://127.0.0.1:*"});
  ASSERT_TRUE(publisher.ok()) << publisher.status().ToString();
  const std::string endpoint = (*publisher)->endpoint();
  ASSERT_TRUE((*publisher)->Publish("model", {{"version", 7}}).ok());

  Result<EventSubscriber> own =
      EventSubscriber::Create({.endpoints = {endpoint}, .topics = {"model"}, .run_dir = dir.path()});
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  Result<Event> event = own->Next(std::chrono::seconds(10));
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  EXPECT_EQ(event->data["version"], 7);

  CurveClientKeys stranger = *LoadClientKeys(dir.path());
  stranger.client = *GenerateCurveKeyPair();
  Result<EventSubscriber> other =
      EventSubscriber::Create({.endpoints = {endpoint}, .topics = {"model"}, .curve = stranger});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  Result<Event> refused = other->Next(std::chrono::seconds(2));
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied)
      << refused.status().ToString();
}

}  // namespace
}  // namespace az::ipc
