// Deferred replies (Server::RegisterDeferred, Responder): a handler that keeps its request and
// answers later from another thread, while the serving thread goes on answering other requests.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "ipc/args.h"
#include "ipc/client.h"
#include "ipc/server.h"
#include "tests/ipc/test_util.h"

namespace az::ipc {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// Keeps the responders of "later" requests until the test releases them.
class Parked {
 public:
  void Park(Responder responder) {
    std::lock_guard lock(mutex_);
    parked_.push_back(std::move(responder));
    changed_.notify_all();
  }
  bool WaitForCount(size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20),
                             [&] { return parked_.size() >= count; });
  }
  std::vector<Responder> TakeAll() {
    std::lock_guard lock(mutex_);
    return std::move(parked_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Responder> parked_;
};

Client MakeClient(const std::string& endpoint, int attempts = 1) {
  Result<Client> client = Client::Create({.endpoint = endpoint,
                                          .attempt_timeout = std::chrono::seconds(20),
                                          .max_attempts = attempts});
  AZ_CHECK(client.ok(), client.status().ToString());
  return std::move(client).value();
}

std::unique_ptr<Server> MakeServer(const TempDir& dir, Parked& parked) {
  Result<std::unique_ptr<Server>> made =
      Server::Create({.service = "later", .run_dir = dir.path()});
  AZ_CHECK(made.ok(), made.status().ToString());
  std::unique_ptr<Server> server = std::move(made).value();
  server->Register("ping", [](Request&) -> Result<Reply> { return Reply{{{"pong", true}}, {}}; });
  server->RegisterDeferred("later", [&parked](Request& request, Responder& responder) {
    parked.Park(std::move(responder));
    (void)request;
  });
  server->RegisterDeferred("now", [](Request& request, Responder& responder) {
    const int n = request.args.value("n", 0);
    Reply reply{{{"n", n + 1}}, {}};
    reply.frames = std::move(request.frames);
    responder.Send(std::move(reply));
  });
  server->RegisterDeferred("forget", [](Request&, Responder&) {});
  server->RegisterDeferred("throw", [](Request&, Responder&) { throw std::runtime_error("boom"); });
  return server;
}

TEST(IpcDeferredReplyTest, AReplySentLaterFromAnotherThreadReachesTheClientWhileOthersAreServed) {
  TempDir dir;
  Parked parked;
  std::unique_ptr<Server> server = MakeServer(dir, parked);
  ASSERT_TRUE(server->Start().ok());

  std::optional<Result<Reply>> later;
  std::thread waiter([&] {
    Client client = MakeClient(server->endpoint());
    later.emplace(client.Call("later", {{"x", 1}}));
  });
  ASSERT_TRUE(parked.WaitForCount(1));
  // The serving thread is free while the first request waits.
  Client client = MakeClient(server->endpoint());
  for (int i = 0; i < 3; ++i) {
    Result<Reply> ping = client.Call("ping");
    ASSERT_TRUE(ping.ok()) << ping.status().ToString();
  }
  std::vector<Responder> responders = parked.TakeAll();
  ASSERT_EQ(responders.size(), 1u);
  std::thread sender([responder = std::move(responders[0])]() mutable {
    std::vector<zmq::message_t> frames;
    frames.push_back(MakeFrame("abc", 3));
    responder.Send(Reply{{{"answered", "later"}}, std::move(frames)});
  });
  sender.join();
  waiter.join();
  ASSERT_TRUE(later.has_value());
  ASSERT_TRUE(later->ok()) << later->status().ToString();
  EXPECT_EQ((*later)->body["answered"], "later");
  ASSERT_EQ((*later)->frames.size(), 1u);
  EXPECT_EQ((*later)->frames[0].to_string(), "abc");
}

TEST(IpcDeferredReplyTest, ErrorsDroppedRespondersAndForgottenRequestsAreAnswered) {
  TempDir dir;
  Parked parked;
  std::unique_ptr<Server> server = MakeServer(dir, parked);
  ASSERT_TRUE(server->Start().ok());
  Client client = MakeClient(server->endpoint());

  // Answered before the handler returns, frames moved through.
  std::vector<zmq::message_t> frames;
  frames.push_back(MakeFrame("xyz", 3));
  Result<Reply> now = client.Call("now", {{"n", 41}}, std::move(frames));
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(now->body["n"], 42);
  ASSERT_EQ(now->frames.size(), 1u);

  Result<Reply> forgot = client.Call("forget");
  EXPECT_EQ(forgot.status().code(), StatusCode::kInternal);
  EXPECT_THAT(forgot.status().message(), HasSubstr("neither answered nor kept"));

  Result<Reply> threw = client.Call("throw");
  EXPECT_EQ(threw.status().code(), StatusCode::kInternal);
  EXPECT_THAT(threw.status().message(), HasSubstr("boom"));

  // A kept responder answered with an error, and one destroyed without an answer.
  std::optional<Result<Reply>> first;
  std::optional<Result<Reply>> second;
  std::thread a([&] {
    Client c = MakeClient(server->endpoint());
    first.emplace(c.Call("later", {{"which", 1}}));
  });
  ASSERT_TRUE(parked.WaitForCount(1));
  std::thread b([&] {
    Client c = MakeClient(server->endpoint());
    second.emplace(c.Call("later", {{"which", 2}}));
  });
  ASSERT_TRUE(parked.WaitForCount(2));
  {
    std::vector<Responder> responders = parked.TakeAll();
    responders[0].Send(DeadlineExceeded("the limiter said wait"));
    EXPECT_FALSE(responders[0].pending());
  }  // responders[1] dropped here
  a.join();
  b.join();
  EXPECT_EQ(first->status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(first->status().message(), HasSubstr("limiter"));
  EXPECT_EQ(second->status().code(), StatusCode::kCancelled);
  EXPECT_EQ(server->stats().request_errors_total, 4u);
}

TEST(IpcDeferredReplyTest, ServeOnTheCallersThreadDeliversDeferredReplies) {
  TempDir dir;
  Parked parked;
  std::unique_ptr<Server> server = MakeServer(dir, parked);
  std::optional<Result<Reply>> later;  // read only after `answered` (or the join)
  std::atomic<bool> answered{false};
  const std::string endpoint = server->endpoint();
  std::thread waiter([&] {
    Client client = MakeClient(endpoint);
    later.emplace(client.Call("later"));
    answered.store(true, std::memory_order_release);
  });
  std::vector<Responder> responders;
  for (int i = 0; i < 2000 && responders.empty(); ++i) {
    ASSERT_TRUE(server->Serve(std::chrono::milliseconds(10)).ok());
    responders = parked.TakeAll();
  }
  ASSERT_EQ(responders.size(), 1u);
  responders[0].Send(Reply{{{"served", true}}, {}});
  for (int i = 0; i < 2000 && !answered.load(std::memory_order_acquire); ++i) {
    ASSERT_TRUE(server->Serve(std::chrono::milliseconds(10)).ok());
  }
  waiter.join();
  ASSERT_TRUE(later.has_value());
  ASSERT_TRUE(later->ok()) << later->status().ToString();
  EXPECT_EQ((*later)->body["served"], true);
}

TEST(IpcDeferredReplyTest, AResponderThatOutlivesItsServerDropsTheReplyQuietly) {
  TempDir dir;
  Parked parked;
  std::unique_ptr<Server> server = MakeServer(dir, parked);
  ASSERT_TRUE(server->Start().ok());
  // Copied before the thread starts: the main thread destroys the server while the client waits.
  const std::string endpoint = server->endpoint();
  std::thread waiter([&] {
    Result<Client> client = Client::Create({.endpoint = endpoint,
                                            .attempt_timeout = std::chrono::milliseconds(500),
                                            .max_attempts = 1});
    AZ_CHECK(client.ok());
    (void)client->Call("later");
  });
  ASSERT_TRUE(parked.WaitForCount(1));
  std::vector<Responder> responders = parked.TakeAll();
  server.reset();
  responders[0].Send(Reply{});  // no server: nothing to do, no crash
  EXPECT_FALSE(responders[0].pending());
  waiter.join();
}

}  // namespace
}  // namespace az::ipc
