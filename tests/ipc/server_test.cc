// The control server over real ZeroMQ sockets in this process: round trips, binary frames, every
// kind of bad request (each answered with an error while the server keeps serving), the built-in
// commands, and the client's handling of late replies.

#include "ipc/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "ipc/args.h"
#include "ipc/client.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "ipc/zmq_context.h"
#include "tests/ipc/test_util.h"

namespace az::ipc {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// Sends `frames` after an empty delimiter on a raw DEALER socket and returns the reply's JSON
// frame, or null when nothing came within `timeout`.
nlohmann::json RawRequest(const std::string& endpoint, const std::vector<std::string>& frames,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto context = SharedContext();
  zmq::socket_t socket(*context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(endpoint);
  socket.send(zmq::message_t(), zmq::send_flags::sndmore);
  for (size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i]),
                i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
  if (zmq::poll(items, 1, timeout) == 0) return nullptr;
  zmq::message_t delimiter;
  zmq::message_t body;
  (void)socket.recv(delimiter);
  EXPECT_EQ(delimiter.size(), 0u);
  EXPECT_TRUE(delimiter.more());
  (void)socket.recv(body);
  return nlohmann::json::parse(body.to_string_view());
}

std::string ErrorCode(const nlohmann::json& reply) {
  EXPECT_TRUE(reply.is_object()) << reply.dump();
  EXPECT_EQ(reply.value("ok", true), false) << reply.dump();
  return reply["error"].value("code", "");
}

class IpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.path().empty()); }

  // Creates and starts a server named "svc" with a few handlers.
  void StartServer(ServerOptions options = {}) {
    options.service = "svc";
    options.run_dir = dir_.path();
    if (!options.status) options.status = [] { return nlohmann::json{{"widgets", 7}}; };
    Result<std::unique_ptr<Server>> made = Server::Create(std::move(options));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    server_ = std::move(made).value();
    server_->Register("add", [](Request& request) -> Result<Reply> {
      AZ_ASSIGN_OR_RETURN(int a, GetArg<int>(request.args, "a"));
      AZ_ASSIGN_OR_RETURN(int b, GetArg<int>(request.args, "b", 0));
      return Reply{{{"sum", a + b}}, {}};
    });
    server_->Register("sum-floats", [](Request& request) -> Result<Reply> {
      // Sums each float frame and returns the frames in reverse order.
      nlohmann::json sums = nlohmann::json::array();
      for (const zmq::message_t& frame : request.frames) {
        AZ_ASSIGN_OR_RETURN(std::span<const float> values, FrameAs<float>(frame, "floats"));
        sums.push_back(std::accumulate(values.begin(), values.end(), 0.0));
      }
      Reply reply;
      reply.body = {{"sums", sums}};
      for (auto it = request.frames.rbegin(); it != request.frames.rend(); ++it) {
        reply.frames.push_back(std::move(*it));
      }
      return reply;
    });
    server_->Register("throw", [](Request&) -> Result<Reply> { throw std::runtime_error("boom"); });
    server_->Register("mistyped", [](Request& request) -> Result<Reply> {
      // Unchecked access to a field of the wrong type throws nlohmann::json::type_error.
      return Reply{{{"n", request.args.at("n").get<int>() + 1}}, {}};
    });
    server_->Register("refuse",
                      [](Request&) -> Result<Reply> { return FailedPrecondition("not now"); });
    server_->Register("scalar", [](Request&) -> Result<Reply> { return Reply{42, {}}; });
    server_->Register("slow", [this](Request& request) -> Result<Reply> {
      AZ_ASSIGN_OR_RETURN(int ms, GetArg<int>(request.args, "ms"));
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      slow_done_.fetch_add(1);
      return Reply{{{"slept", ms}}, {}};
    });
    ASSERT_TRUE(server_->Start().ok());
  }

  Client MakeClient(int attempts = 3, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    Result<Client> client = Client::Create(
        {.endpoint = server_->endpoint(), .attempt_timeout = timeout, .max_attempts = attempts});
    AZ_CHECK(client.ok(), client.status().ToString());
    return std::move(client).value();
  }

  // Whether the server still answers a well-formed request.
  void ExpectServing() {
    Client client = MakeClient();
    Result<Reply> reply = client.Call("add", {{"a", 2}, {"b", 3}});
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(reply->body["sum"], 5);
  }

  TempDir dir_;
  std::unique_ptr<Server> server_;
  std::atomic<int> slow_done_{0};
};

TEST_F(IpcServerTest, RoundTripReturnsHandlerFieldsWithOkAndTheRequestId) {
  StartServer();
  EXPECT_EQ(server_->endpoint(), "ipc://" + dir_.path() + "/svc.ctl");
  nlohmann::json reply = RawRequest(server_->endpoint(), {R"({"cmd":"add","a":40,"b":2,"id":77})"});
  EXPECT_EQ(reply, nlohmann::json({{"ok", true}, {"id", 77}, {"sum", 42}}));
  // Without an id the reply carries "id": null.
  reply = RawRequest(server_->endpoint(), {R"({"cmd":"add","a":1})"});
  EXPECT_EQ(reply["sum"], 1);
  EXPECT_TRUE(reply["id"].is_null());

  Client client = MakeClient();
  Result<Reply> called = client.Call("add", {{"a", 1}, {"b", 2}});
  ASSERT_TRUE(called.ok()) << called.status().ToString();
  EXPECT_EQ(called->body["sum"], 3);
  EXPECT_EQ(called->body["ok"], true);
  EXPECT_EQ(client.last_attempts(), 1);
}

TEST_F(IpcServerTest, NonObjectHandlerResultIsSentAsResult) {
  StartServer();
  Client client = MakeClient();
  Result<Reply> reply = client.Call("scalar");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["result"], 42);
}

TEST_F(IpcServerTest, BinaryFramesTravelBothWaysUnchanged) {
  StartServer();
  std::vector<float> big(256 * 1024);  // 1 MiB
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 100);
  const std::vector<float> small = {1.5f, 2.5f};
  std::vector<zmq::message_t> frames;
  frames.push_back(MakeFrame(big.data(), big.size() * sizeof(float)));
  frames.push_back(MakeFrame(small.data(), small.size() * sizeof(float)));

  Client client = MakeClient();
  Result<Reply> reply = client.Call("sum-floats", {}, std::move(frames));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  const double big_sum = std::accumulate(big.begin(), big.end(), 0.0);
  EXPECT_EQ(reply->body["sums"], nlohmann::json({big_sum, 4.0}));
  ASSERT_EQ(reply->frames.size(), 2u);
  ASSERT_EQ(reply->frames[0].size(), small.size() * sizeof(float));
  ASSERT_EQ(reply->frames[1].size(), big.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(reply->frames[0].data(), small.data(), reply->frames[0].size()), 0);
  EXPECT_EQ(std::memcmp(reply->frames[1].data(), big.data(), reply->frames[1].size()), 0);
}

TEST(IpcServerFramesTest, HandlerCanReplyWithABufferItOwnsWithoutCopyingIt) {
  TempDir dir;
  static std::atomic<int> freed{0};
  freed = 0;
  auto buffer = std::make_shared<std::vector<std::uint8_t>>(1 << 20);
  for (size_t i = 0; i < buffer->size(); ++i) (*buffer)[i] = static_cast<std::uint8_t>(i * 7);
  Result<std::unique_ptr<Server>> made = Server::Create({.service = "own", .run_dir = dir.path()});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Server& server = **made;
  server.Register("blob", [buffer](Request&) -> Result<Reply> {
    Reply reply;
    // ZeroMQ calls the free function once the kernel has the bytes; no copy in between.
    auto* keep = new std::shared_ptr<std::vector<std::uint8_t>>(buffer);
    reply.frames.emplace_back(
        buffer->data(), buffer->size(),
        [](void*, void* hint) {
          delete static_cast<std::shared_ptr<std::vector<std::uint8_t>>*>(hint);
          freed.fetch_add(1);
        },
        keep);
    return reply;
  });
  ASSERT_TRUE(server.Start().ok());
  Result<Client> client = Client::Create({.endpoint = server.endpoint()});
  ASSERT_TRUE(client.ok());
  Result<Reply> reply = client->Call("blob");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->frames.size(), 1u);
  ASSERT_EQ(reply->frames[0].size(), buffer->size());
  EXPECT_EQ(std::memcmp(reply->frames[0].data(), buffer->data(), buffer->size()), 0);
  EXPECT_TRUE(testing::WaitFor([] { return freed.load() == 1; }));
}

TEST_F(IpcServerTest, MalformedJsonGetsInvalidArgumentAndServerKeepsServing) {
  StartServer();
  for (const char* bad : {"{\"cmd\": ", "not json at all", "{\"cmd\":\"add\",}", "\xff\xfe"}) {
    nlohmann::json reply = RawRequest(server_->endpoint(), {bad});
    EXPECT_EQ(ErrorCode(reply), "INVALID_ARGUMENT") << bad;
    EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("not valid JSON"));
  }
  ExpectServing();
}

TEST_F(IpcServerTest, DeeplyNestedJsonIsRefusedBeforeParsing) {
  StartServer();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  nlohmann::json reply = RawRequest(server_->endpoint(), {deep});
  EXPECT_EQ(ErrorCode(reply), "INVALID_ARGUMENT");
  EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("nested deeper"));
  ExpectServing();
}

TEST_F(IpcServerTest, NonObjectJsonGetsInvalidArgument) {
  StartServer();
  for (const char* bad : {"[1,2,3]", "42", "\"status\"", "null", "true"}) {
    nlohmann::json reply = RawRequest(server_->endpoint(), {bad});
    EXPECT_EQ(ErrorCode(reply), "INVALID_ARGUMENT") << bad;
    EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("must be a JSON object"));
  }
  ExpectServing();
}

TEST_F(IpcServerTest, MissingOrMistypedCmdGetsInvalidArgument) {
  StartServer();
  nlohmann::json reply = RawRequest(server_->endpoint(), {R"({"id": 5, "a": 1})"});
  EXPECT_EQ(ErrorCode(reply), "INVALID_ARGUMENT");
  EXPECT_EQ(reply["id"], 5);
  EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("no \"cmd\""));
  for (const char* bad : {R"({"cmd": 7})", R"({"cmd": ["add"]})", R"({"cmd": null})"}) {
    reply = RawRequest(server_->endpoint(), {bad});
    EXPECT_EQ(ErrorCode(reply), "INVALID_ARGUMENT") << bad;
    EXPECT_THAT(reply["error"]["message"].get<std::string>(), HasSubstr("must be a string"));
  }
  ExpectServing();
}

TEST_F(IpcServerTest, EmptyRequestGetsInvalidArgument) {
  StartServer();
  // A DEALER message that is only the delimiter: no JSON frame at all.
  auto context = SharedContext();
  zmq::socket_t socket(*context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(server_->endpoint());
  socket.send(zmq::message_t(), zmq::send_flags::none);
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
  ASSERT_EQ(zmq::poll(items, 1, std::chrono::seconds(10)), 1);
  zmq::message_t delimiter, body;
  (void)socket.recv(delimiter);
  (void)socket.recv(body);
  EXPECT_EQ(ErrorCode(nlohmann::json::parse(body.to_string_view())), "INVALID_ARGUMENT");
  ExpectServing();
}

TEST_F(IpcServerTest, UnknownCommandGetsNotFoundListingTheCommands) {
  StartServer();
  Client client = MakeClient();
  Result<Reply> reply = client.Call("frobnicate");
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(reply.status().message(), HasSubstr("unknown command 'frobnicate'"));
  EXPECT_THAT(reply.status().message(), HasSubstr("add"));
  EXPECT_THAT(reply.status().message(), HasSubstr("status"));
  ExpectServing();
}

TEST_F(IpcServerTest, WrongArgumentTypeGetsInvalidArgumentNamingTheField) {
  StartServer();
  Client client = MakeClient();
  Result<Reply> reply = client.Call("add", {{"a", "forty"}});
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(reply.status().message(), HasSubstr("\"a\" must be an integer"));
  reply = client.Call("add", {{"b", 1}});
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(reply.status().message(), HasSubstr("missing argument \"a\""));
  reply = client.Call("add", {{"a", 1.5}});
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  reply = client.Call("add", {{"a", std::int64_t{1} << 40}});
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(reply.status().message(), HasSubstr("in range"));
  // A float frame whose size is not a multiple of 4 bytes.
  std::vector<zmq::message_t> frames;
  frames.push_back(MakeFrame("abcde", 5));
  reply = client.Call("sum-floats", {}, std::move(frames));
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(reply.status().message(), HasSubstr("not a whole number"));
  ExpectServing();
}

TEST_F(IpcServerTest, OversizeRequestGetsResourceExhausted) {
  StartServer({.max_request_bytes = 4096});
  Client client = MakeClient();
  std::vector<zmq::message_t> frames;
  std::vector<float> values(2048, 1.0f);  // 8 KiB
  frames.push_back(MakeFrame(values.data(), values.size() * sizeof(float)));
  Result<Reply> reply = client.Call("sum-floats", {}, std::move(frames));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(reply.status().message(), HasSubstr("exceeds the limit of 4096 bytes"));
  // Several frames that are each small but together too large.
  frames.clear();
  for (int i = 0; i < 3; ++i) frames.push_back(MakeFrame(values.data(), 2000));
  reply = client.Call("sum-floats", {}, std::move(frames));
  EXPECT_EQ(reply.status().code(), StatusCode::kResourceExhausted);
  ExpectServing();
}

TEST_F(IpcServerTest, FrameBeyondTheSocketLimitDropsOnlyThatConnection) {
  // Soft limit 4 KiB, so ZMQ_MAXMSGSIZE is 4 KiB + 1 MiB; a 2 MiB frame never reaches the server.
  StartServer({.max_request_bytes = 4096});
  nlohmann::json reply =
      RawRequest(server_->endpoint(), {R"({"cmd":"add","a":1})", std::string(2 << 20, 'x')},
                 std::chrono::milliseconds(300));
  EXPECT_TRUE(reply.is_null()) << reply.dump();
  ExpectServing();
}

TEST_F(IpcServerTest, ClientRefusesOversizeRequestLocally) {
  StartServer();
  Result<Client> client =
      Client::Create({.endpoint = server_->endpoint(), .max_request_bytes = 1000});
  ASSERT_TRUE(client.ok());
  std::vector<zmq::message_t> frames;
  frames.push_back(zmq::message_t(2000));
  Result<Reply> reply = client->Call("sum-floats", {}, std::move(frames));
  EXPECT_EQ(reply.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(server_->stats().requests_total, 0u);
}

TEST_F(IpcServerTest, HandlerThatThrowsGetsAnErrorReplyAndServerKeepsServing) {
  StartServer();
  Client client = MakeClient();
  Result<Reply> reply = client.Call("throw");
  EXPECT_EQ(reply.status().code(), StatusCode::kInternal);
  EXPECT_THAT(reply.status().message(), HasSubstr("boom"));
  reply = client.Call("mistyped", {{"n", "seven"}});
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  reply = client.Call("mistyped", {});
  EXPECT_EQ(reply.status().code(), StatusCode::kInvalidArgument);
  ExpectServing();
}

TEST_F(IpcServerTest, HandlerStatusIsAnsweredWithItsCode) {
  StartServer();
  Client client = MakeClient();
  Result<Reply> reply = client.Call("refuse");
  EXPECT_EQ(reply.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(reply.status().message(), "not now");
  // Exchange returns the error reply itself.
  Result<Reply> raw = client.Exchange({{"cmd", "refuse"}});
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->body["ok"], false);
  EXPECT_EQ(raw->body["error"]["code"], "FAILED_PRECONDITION");
  EXPECT_EQ(server_->stats().request_errors_total, 2u);
}

TEST_F(IpcServerTest, StatusReportsIdentityStateCountersAndServiceFields) {
  StartServer();
  Client client = MakeClient();
  ASSERT_TRUE(client.Call("add", {{"a", 1}}).ok());
  ASSERT_FALSE(client.Call("refuse").ok());
  Result<Reply> reply = client.Call("status");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  const nlohmann::json& body = reply->body;
  EXPECT_EQ(body["service"], "svc");
  EXPECT_EQ(body["pid"], ::getpid());
  EXPECT_EQ(body["state"], "running");
  EXPECT_EQ(body["paused"], false);
  EXPECT_EQ(body["widgets"], 7);
  EXPECT_EQ(body["protocol"], kProtocolVersion);
  EXPECT_EQ(body["requests_total"], 3);  // this status request included
  EXPECT_EQ(body["request_errors_total"], 1);
  EXPECT_TRUE(body["uptime_seconds"].is_number());
}

TEST_F(IpcServerTest, StatusSurvivesAThrowingStatusProvider) {
  StartServer({.status = []() -> nlohmann::json { throw std::runtime_error("no stats"); }});
  Client client = MakeClient();
  Result<Reply> reply = client.Call("status");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["status_error"], "no stats");
  EXPECT_EQ(reply->body["service"], "svc");
}

TEST_F(IpcServerTest, PauseAndResumeToggleTheFlagAndCallTheService) {
  std::atomic<int> pauses{0}, resumes{0};
  StartServer({.on_pause = [&] { ++pauses; }, .on_resume = [&] { ++resumes; }});
  Client client = MakeClient();
  EXPECT_FALSE(server_->paused());
  Result<Reply> reply = client.Call("pause");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->body["paused"], true);
  EXPECT_EQ(reply->body["changed"], true);
  EXPECT_TRUE(server_->paused());
  EXPECT_EQ(client.Call("status")->body["state"], "paused");
  // Pausing twice changes nothing and does not call the service again.
  EXPECT_EQ(client.Call("pause")->body["changed"], false);
  EXPECT_EQ(pauses.load(), 1);
  reply = client.Call("resume");
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->body["paused"], false);
  EXPECT_FALSE(server_->paused());
  EXPECT_EQ(resumes.load(), 1);
}

TEST_F(IpcServerTest, ShutdownRepliesThenSignalsTheService) {
  std::atomic<bool> called{false};
  StartServer({.on_shutdown = [&] { called = true; }});
  EXPECT_FALSE(server_->WaitForShutdown(std::chrono::milliseconds(1)));
  Client client = MakeClient();
  Result<Reply> reply = client.Call("shutdown");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["shutting_down"], true);
  EXPECT_TRUE(server_->WaitForShutdown(std::chrono::seconds(10)));
  EXPECT_TRUE(server_->shutdown_requested());
  EXPECT_TRUE(testing::WaitFor([&] { return called.load(); }));
  // It keeps answering until the service destroys it.
  EXPECT_EQ(client.Call("status")->body["state"], "stopping");
}

TEST_F(IpcServerTest, CommandsListsBuiltinsAndRegisteredCommands) {
  StartServer();
  Client client = MakeClient();
  Result<Reply> reply = client.Call("commands");
  ASSERT_TRUE(reply.ok());
  for (const char* name : {"status", "pause", "resume", "shutdown", "commands", "add", "slow"}) {
    EXPECT_TRUE(reply->body["commands"].contains(name)) << name;
  }
}

TEST_F(IpcServerTest, LateReplyToATimedOutRequestIsNotTakenForTheNextOne) {
  StartServer();
  Client client = MakeClient(/*attempts=*/1, std::chrono::milliseconds(100));
  Result<Reply> slow = client.Call("slow", {{"ms", 400}});
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
  // The next call waits behind the slow handler; the slow reply that comes first is not its answer.
  Result<Reply> next =
      client.Call("add", {{"a", 5}}, {}, {.attempt_timeout = std::chrono::seconds(10)});
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->body["sum"], 5);
  EXPECT_FALSE(next->body.contains("slept"));
  EXPECT_EQ(slow_done_.load(), 1);
}

TEST_F(IpcServerTest, ReqSocketClientsAreAnswered) {
  StartServer();
  auto context = SharedContext();
  zmq::socket_t req(*context, zmq::socket_type::req);
  req.set(zmq::sockopt::linger, 0);
  req.connect(server_->endpoint());
  for (int i = 0; i < 3; ++i) {
    req.send(zmq::buffer(nlohmann::json({{"cmd", "add"}, {"a", i}}).dump()));
    zmq::pollitem_t items[] = {{req.handle(), 0, ZMQ_POLLIN, 0}};
    ASSERT_EQ(zmq::poll(items, 1, std::chrono::seconds(10)), 1);
    zmq::message_t reply;
    ASSERT_TRUE(req.recv(reply));
    EXPECT_EQ(nlohmann::json::parse(reply.to_string_view())["sum"], i);
  }
}

TEST(IpcServerServeTest, ServeAnswersOnTheCallersThread) {
  TempDir dir;
  Result<std::unique_ptr<Server>> made =
      Server::Create({.service = "polled", .run_dir = dir.path()});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Server& server = **made;
  const std::thread::id main_thread = std::this_thread::get_id();
  std::atomic<bool> on_main{false};
  server.Register("where", [&](Request&) -> Result<Reply> {
    on_main = std::this_thread::get_id() == main_thread;
    return Reply{};
  });
  std::atomic<bool> done{false};
  Status result;
  std::thread caller([&] {
    Result<Client> client = Client::Create({.endpoint = server.endpoint()});
    result = client->Call("where").status();
    done = true;
  });
  while (!done) ASSERT_TRUE(server.Serve(std::chrono::milliseconds(20)).ok());
  caller.join();
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_TRUE(on_main.load());
}

TEST(IpcServerCreateTest, SecondServerForTheSameServiceIsRefused) {
  TempDir dir;
  Result<std::unique_ptr<Server>> first = Server::Create({.service = "one", .run_dir = dir.path()});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<Server>> second =
      Server::Create({.service = "one", .run_dir = dir.path()});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(second.status().message(), HasSubstr("pid " + std::to_string(::getpid())));
  // Without a run directory, the ipc probe notices the live listener.
  Result<std::unique_ptr<Server>> third =
      Server::Create({.service = "other", .endpoint = (*first)->endpoint()});
  EXPECT_EQ(third.status().code(), StatusCode::kAlreadyExists);
  // Once the first is gone, the service can start again.
  first = Status(StatusCode::kCancelled, "released");
  EXPECT_TRUE(Server::Create({.service = "one", .run_dir = dir.path()}).ok());
}

TEST(IpcServerCreateTest, BadOptionsAreRefusedWithAReason) {
  TempDir dir;
  EXPECT_EQ(Server::Create({.service = "Bad Name", .run_dir = dir.path()}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Server::Create({.service = "x"}).status().code(), StatusCode::kInvalidArgument);
  Result<std::unique_ptr<Server>> bad = Server::Create({.service = "x", .endpoint = "bogus://x"});
  EXPECT_EQ(bad.status().code(), StatusCode::kUnavailable);
}

TEST(IpcServerCreateTest, TcpWildcardPortIsResolved) {
  TempDir dir;  // the CURVE keys of the tcp:// endpoint (ipc/curve.h)
  Result<std::unique_ptr<Server>> made =
      Server::Create({.service = "tcp", .run_dir = dir.path(), .endpoint = "tcp://127.0.0.1:*"});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE((*made)->Start().ok());
  EXPECT_THAT((*made)->endpoint(), ::testing::StartsWith("tcp://127.0.0.1:"));
  EXPECT_THAT((*made)->endpoint(), ::testing::Not(HasSubstr("*")));
  Result<Client> client = Client::Create({.endpoint = (*made)->endpoint(), .run_dir = dir.path()});
  ASSERT_TRUE(client.ok());
  Result<Reply> reply = client->Call("status");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->body["service"], "tcp");
}

TEST(IpcServerCreateTest, DiscoveryRecordIsWrittenAndMarkedStoppedOnDestruction) {
  TempDir dir;
  {
    Result<std::unique_ptr<Server>> made =
        Server::Create({.service = "disc", .run_dir = dir.path(), .metrics_port = 9123});
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    Result<ServiceInfo> info = ReadServiceInfo(dir.path(), "disc");
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->pid, ::getpid());
    EXPECT_EQ(info->control_endpoint, (*made)->endpoint());
    EXPECT_EQ(info->metrics_port, 9123);
    EXPECT_EQ(info->state, "running");
  }
  Result<ServiceInfo> info = ReadServiceInfo(dir.path(), "disc");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, "stopped");
  // Nothing listens there any more.
  EXPECT_FALSE(IpcEndpointInUse("ipc://" + dir.path() + "/disc.ctl"));
}

}  // namespace
}  // namespace az::ipc
