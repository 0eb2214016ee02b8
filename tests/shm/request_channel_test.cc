// Request/response between real processes: answers reach the worker that asked, answers for an
// older generation (after a reset, or for a previous incarnation of a worker) are dropped, and a
// worker learns at once when a server died or left.

#include "shm/request_channel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/shm/test_processes.h"

namespace az::shm {
namespace {

using ::az::shm::testing::Child;
using ::az::shm::testing::Eventually;
using ::az::shm::testing::Shared;
using ::az::shm::testing::TestScope;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr std::uint32_t kRequestBytes = 24;
constexpr std::uint32_t kResponseBytes = 40;

ChannelSpec Spec(std::uint32_t workers = 4) {
  return {.request_bytes = kRequestBytes,
          .response_bytes = kResponseBytes,
          .max_workers = workers,
          .request_capacity = 64,
          .response_capacity = 16};
}
ClientOptions Worker(std::uint32_t id) {
  return {.worker_id = id, .request_bytes = kRequestBytes, .response_bytes = kResponseBytes};
}

std::vector<std::byte> Payload(std::uint32_t bytes, std::uint64_t value) {
  std::vector<std::byte> payload(bytes);
  for (std::uint32_t i = 0; i < bytes; i += 8) {
    const std::uint64_t word = value * 0x9e3779b97f4a7c15ULL + i;
    std::memcpy(payload.data() + i, &word, std::min<std::uint32_t>(8, bytes - i));
  }
  return payload;
}

// The "evaluation" a server applies: a function of the request, so a worker can check its answer.
std::vector<std::byte> Answer(std::span<const std::byte> request) {
  std::uint64_t value;
  std::memcpy(&value, request.data(), 8);
  return Payload(kResponseBytes, value ^ 0xabcdef);
}

TEST(RequestChannelTest, EachAnswerReachesTheWorkerThatAsked) {
  TestScope scope("route");
  constexpr int kWorkers = 3;
  constexpr std::uint64_t kRequests = 3000;
  constexpr std::uint64_t kWindow = 8;  // requests in flight per worker
  auto server = RequestServer::Create(*scope, "eval", Spec(kWorkers));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  Shared<std::atomic<int>> workers_done;
  Child evaluator = Child::Spawn([&] {
    auto handle = RequestServer::Open(*scope, "eval", kRequestBytes, kResponseBytes);
    if (!handle.ok()) return 1;
    while (workers_done->load() < kWorkers) {
      std::vector<std::pair<Envelope, std::vector<std::byte>>> batch;
      auto taken = handle->TakeRequests(32, 20ms,
                                        [&](const Envelope& e, std::span<const std::byte> payload) {
                                          batch.emplace_back(e, Answer(payload));
                                        });
      if (!taken.ok()) continue;
      for (auto& [envelope, answer] : batch) {
        if (!handle->Respond(envelope, answer, 10s).ok()) return 2;
      }
    }
    return 0;
  });
  std::vector<Child> workers;
  for (std::uint32_t w = 0; w < kWorkers; ++w) {
    workers.push_back(Child::Spawn([&, w] {
      auto client = RequestClient::Open(*scope, "eval", Worker(w));
      if (!client.ok()) return 1;
      std::uint64_t sent = 0, answered = 0;
      while (answered < kRequests) {
        while (sent < kRequests && sent - answered < kWindow) {
          const std::uint64_t value = w * 1'000'000 + sent;
          if (!client->Submit(sent, Payload(kRequestBytes, value), 10s).ok()) return 2;
          ++sent;
        }
        bool wrong = false;
        auto got = client->Receive(
            kWindow, 10s, [&](std::uint64_t id, std::span<const std::byte> payload) {
              const auto expected = Answer(Payload(kRequestBytes, w * 1'000'000 + id));
              wrong |= id >= sent || !std::equal(payload.begin(), payload.end(), expected.begin());
              ++answered;
            });
        if (!got.ok()) return 3;
        if (wrong) return 4;
      }
      workers_done->fetch_add(1);
      return client->Stats().stale_responses_dropped == 0 ? 0 : 5;
    }));
  }
  for (Child& worker : workers) EXPECT_EQ(worker.ExitCode(), 0);
  EXPECT_EQ(evaluator.ExitCode(), 0);
}

TEST(RequestChannelTest, AnswersForAnEarlierGenerationAreDroppedAndCounted) {
  TestScope scope("reset");
  auto server = RequestServer::Create(*scope, "eval", Spec());
  auto client = RequestClient::Open(*scope, "eval", Worker(1));
  ASSERT_TRUE(server.ok() && client.ok());
  const std::uint32_t first = client->generation();
  ASSERT_TRUE(client->Submit(10, Payload(kRequestBytes, 10), 1s).ok());
  std::vector<Envelope> taken;
  ASSERT_TRUE(
      server
          ->TakeRequests(8, 1s,
                         [&](const Envelope& e, std::span<const std::byte>) { taken.push_back(e); })
          .ok());
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].worker_id, 1u);
  EXPECT_EQ(taken[0].generation, first);
  EXPECT_EQ(taken[0].request_id, 10u);
  // The answer is on its way when the worker resets its search.
  ASSERT_TRUE(server->Respond(taken[0], Payload(kResponseBytes, 1), 1s).ok());
  EXPECT_EQ(client->Reset(), first + 1);
  ASSERT_TRUE(client->Submit(11, Payload(kRequestBytes, 11), 1s).ok());
  ASSERT_TRUE(server
                  ->TakeRequests(8, 1s,
                                 [&](const Envelope& e, std::span<const std::byte>) {
                                   EXPECT_EQ(e.generation, first + 1);
                                   ASSERT_TRUE(
                                       server->Respond(e, Payload(kResponseBytes, 2), 1s).ok());
                                 })
                  .ok());
  std::vector<std::uint64_t> answered;
  auto got = client->Receive(
      8, 1s, [&](std::uint64_t id, std::span<const std::byte>) { answered.push_back(id); });
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(answered, std::vector<std::uint64_t>{11});
  EXPECT_EQ(client->Stats().stale_responses_dropped, 1u);
  // An answer that comes after the reset is not even sent.
  ASSERT_TRUE(server->Respond(taken[0], Payload(kResponseBytes, 3), 1s).ok());
  EXPECT_EQ(server->Stats().stale_responses_dropped, 1u);
  EXPECT_EQ(client->TryReceive(8, [](std::uint64_t, std::span<const std::byte>) {}), 0u);
}

TEST(RequestChannelTest, ServersDropRequestsOfWorkersThatMovedOn) {
  TestScope scope("stale-requests");
  auto server = RequestServer::Create(*scope, "eval", Spec());
  auto client = RequestClient::Open(*scope, "eval", Worker(0));
  ASSERT_TRUE(server.ok() && client.ok());
  for (std::uint64_t id = 0; id < 3; ++id) {
    ASSERT_TRUE(client->Submit(id, Payload(kRequestBytes, id), 1s).ok());
  }
  client->Reset();
  ASSERT_TRUE(client->Submit(3, Payload(kRequestBytes, 3), 1s).ok());
  std::vector<std::uint64_t> ids;
  auto taken = server->TakeRequests(
      8, 1s, [&](const Envelope& e, std::span<const std::byte>) { ids.push_back(e.request_id); });
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(ids, std::vector<std::uint64_t>{3});
  EXPECT_EQ(server->Stats().stale_requests_dropped, 3u);
}

TEST(RequestChannelTest, ARestartedWorkerNeverSeesAnswersMeantForItsPredecessor) {
  TestScope scope("restart");
  auto server = RequestServer::Create(*scope, "eval", Spec());
  ASSERT_TRUE(server.ok());
  Shared<std::atomic<int>> submitted;
  Child first = Child::Spawn([&] {
    auto client = RequestClient::Open(*scope, "eval", Worker(2));
    if (!client.ok()) return 1;
    if (!client->Submit(1, Payload(kRequestBytes, 1), 1s).ok()) return 2;
    submitted->store(1);
    ::pause();  // killed with its request in flight
    return 0;
  });
  ASSERT_TRUE(Eventually([&] { return submitted->load() == 1; }));
  std::vector<Envelope> taken;
  ASSERT_TRUE(
      server
          ->TakeRequests(1, 1s,
                         [&](const Envelope& e, std::span<const std::byte>) { taken.push_back(e); })
          .ok());
  ASSERT_TRUE(server->Respond(taken[0], Payload(kResponseBytes, 1), 1s).ok());  // in its ring
  first.Kill();
  ASSERT_TRUE(first.Wait(10s));

  auto second = RequestClient::Open(*scope, "eval", Worker(2));  // a dead holder's id is free
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_GT(second->generation(), taken[0].generation);
  auto got = second->Receive(1, 50ms, [](std::uint64_t, std::span<const std::byte>) {
    ADD_FAILURE() << "received an answer meant for the previous worker";
  });
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(second->Stats().stale_responses_dropped, 1u);
}

TEST(RequestChannelTest, AWorkerIdHeldByALiveProcessIsRefused) {
  TestScope scope("in-use");
  auto server = RequestServer::Create(*scope, "eval", Spec());
  auto holder = RequestClient::Open(*scope, "eval", Worker(0));
  ASSERT_TRUE(server.ok() && holder.ok());
  auto again = RequestClient::Open(*scope, "eval", Worker(0));
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("worker id 0"));
  EXPECT_THAT(again.status().message(), HasSubstr("in use by pid " + std::to_string(::getpid())));
  auto out_of_range = RequestClient::Open(*scope, "eval", Worker(4));
  EXPECT_EQ(out_of_range.status().code(), StatusCode::kInvalidArgument);
  holder = RequestClient::Open(*scope, "eval", Worker(1));  // releases id 0
  ASSERT_TRUE(holder.ok());
  EXPECT_TRUE(RequestClient::Open(*scope, "eval", Worker(0)).ok());
}

TEST(RequestChannelTest, MismatchedSizesAreRefusedWithTheirNames) {
  TestScope scope("sizes");
  ASSERT_TRUE(RequestServer::Create(*scope, "eval", Spec()).ok());
  ClientOptions wrong_response = Worker(0);
  wrong_response.response_bytes = kResponseBytes + 8;
  auto client = RequestClient::Open(*scope, "eval", wrong_response);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("response size is 40 bytes"));
  auto server = RequestServer::Open(*scope, "eval", kRequestBytes + 8, kResponseBytes);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(server.status().message(), HasSubstr("record size is 24 bytes"));
}

TEST(RequestChannelTest, ARestartedServerTakesTheRequestsThatWereWaiting) {
  TestScope scope("server-restart");
  auto client = [&] {
    auto first = RequestServer::Create(*scope, "eval", Spec());  // created, then gone
    EXPECT_TRUE(first.ok());
    return RequestClient::Open(*scope, "eval", Worker(3));
  }();
  ASSERT_TRUE(client.ok());
  for (std::uint64_t id = 0; id < 5; ++id) {
    ASSERT_TRUE(client->Submit(id, Payload(kRequestBytes, id), 1s).ok());
  }
  auto second = RequestServer::OpenOrCreate(*scope, "eval", Spec());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  std::size_t answered = 0;
  ASSERT_TRUE(second
                  ->TakeRequests(16, 1s,
                                 [&](const Envelope& e, std::span<const std::byte> p) {
                                   ASSERT_TRUE(second->Respond(e, Answer(p), 1s).ok());
                                   ++answered;
                                 })
                  .ok());
  EXPECT_EQ(answered, 5u);
  auto got = client->Receive(16, 1s, [](std::uint64_t, std::span<const std::byte>) {});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 5u);
}

// What lets self-play resubmit at once instead of after its eval timeout: a server killed with
// SIGKILL, or one that leaves cleanly, is counted by the next ServersLost() of any worker, once.
TEST(RequestChannelTest, WorkersLearnAtOnceThatAServerDiedOrLeft) {
  TestScope scope("server-loss");
  auto staying = RequestServer::Create(*scope, "eval", Spec());
  ASSERT_TRUE(staying.ok()) << staying.status().ToString();
  EXPECT_EQ(staying->watched_index(), 0);
  auto client = RequestClient::Open(*scope, "eval", Worker(0));
  ASSERT_TRUE(client.ok());
  EXPECT_EQ(client->ServersLost(), 0u);

  Shared<std::atomic<int>> attached;
  Child evaluator = Child::Spawn([&] {
    auto server = RequestServer::Open(*scope, "eval", kRequestBytes, kResponseBytes);
    if (!server.ok() || server->watched_index() != 1) return 1;
    attached->store(1);
    for (;;) std::this_thread::sleep_for(1s);
  });
  ASSERT_TRUE(Eventually([&] { return attached->load() == 1; }));
  EXPECT_EQ(client->ServersLost(), 0u) << "a live server is not lost";
  evaluator.Kill(SIGKILL);
  ASSERT_EQ(evaluator.ExitCode(), -SIGKILL);
  EXPECT_EQ(client->ServersLost(), 1u);
  EXPECT_EQ(client->ServersLost(), 1u) << "a death is counted once";

  // A clean exit counts as well (requests it took are gone with it), and frees the entry.
  {
    auto leaving = RequestServer::Open(*scope, "eval", kRequestBytes, kResponseBytes);
    ASSERT_TRUE(leaving.ok());
    EXPECT_EQ(leaving->watched_index(), 1);
    RequestServer moved = std::move(*leaving);  // a moved-from handle releases nothing
    EXPECT_EQ(moved.watched_index(), 1);
  }
  EXPECT_EQ(client->ServersLost(), 2u);
  // A server that finds a dead one's entry takes it over and counts the loss itself.
  Child second = Child::Spawn([&]() -> int {
    auto server = RequestServer::Open(*scope, "eval", kRequestBytes, kResponseBytes);
    attached->store(server.ok() ? 2 : -1);
    for (;;) std::this_thread::sleep_for(1s);
  });
  ASSERT_TRUE(Eventually([&] { return attached->load() == 2; }));
  second.Kill(SIGKILL);
  ASSERT_EQ(second.ExitCode(), -SIGKILL);
  auto successor = RequestServer::Open(*scope, "eval", kRequestBytes, kResponseBytes);
  ASSERT_TRUE(successor.ok());
  EXPECT_EQ(successor->watched_index(), 1);
  EXPECT_EQ(client->ServersLost(), 3u);
}

}  // namespace
}  // namespace az::shm
