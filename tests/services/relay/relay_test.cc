// az-relay between a self-play host's sample ring and a real az-replay, as on two machines: two run
// directories with their own shared-memory scopes, talking over ZeroMQ TCP on 127.0.0.1 with the
// run's CURVE keys (the host has a copy of the central run's keys/, as docs/scaling.md says).
// Protects: every sample a host's workers publish reaches the central store exactly once, through
// SIGKILLs of the relay and of the daemon (one of them inside the window between storing a pushed
// sample and its journal commit); the host follows the learner's models, file and checksum, and
// announces them to its evaluator; a relay without the central keys, or with other keys, stores
// nothing and says why.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "core/games/connect4/connect_four_sample.h"
#include "core/nn/checksum.h"
#include "core/replay/replay_store.h"
#include "ipc/client.h"
#include "ipc/event.h"
#include "ipc/event_publisher.h"
#include "ipc/event_subscriber.h"
#include "services/replay/sample_ring.h"
#include "tests/services/learner/connect_four_samples.h"
#include "tests/services/replay/replay_test_util.h"

namespace az::relay {
namespace {

namespace fs = std::filesystem;
using replayd::testing::ChildProcess;
using replayd::testing::Daemon;
using replayd::testing::ReadFile;
using replayd::testing::ShmScope;
using replayd::testing::TempDir;
using replayd::testing::WaitFor;
using ::testing::HasSubstr;

constexpr std::uint64_t kCapacity = 20000;
constexpr std::size_t kSampleBytes = sizeof(sample::ConnectFourSample);
// Small, so that the host's workers wait while the relay is down, as they would in a real run.
constexpr std::uint64_t kRingCapacity = 256;

class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = ipc::testing::FreeTcpPort();
    ASSERT_GT(port_, 0);
    central_endpoint_ = "tcp://127.0.0.1:" + std::to_string(port_);
  }

  std::unique_ptr<Daemon> StartDaemon(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--record-layout",     "connect4",
                                     "--record-bytes",      std::to_string(kSampleBytes),
                                     "--capacity",          std::to_string(kCapacity),
                                     "--shm-scope",         central_shm_.spec(),
                                     "--remote-endpoint",   central_endpoint_,
                                     "--metrics-port",      "-1",
                                     "--snapshot-interval", "0",
                                     "--log-interval",      "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto daemon = std::make_unique<Daemon>(central_.path(), args);
    return daemon;
  }

  // The host gets a copy of the central run's keys (made by the daemon's first start).
  void CopyKeys() {
    fs::copy(central_.path() + "/keys", host_.path() + "/keys", fs::copy_options::recursive);
  }

  std::unique_ptr<ChildProcess> StartRelay(std::vector<std::string> extra = {},
                                           std::string central = "") {
    std::vector<std::string> argv = {AZ_RELAY_BINARY,
                                     "--run-dir",
                                     host_.path(),
                                     "--central",
                                     central.empty() ? central_endpoint_ : central,
                                     "--host",
                                     "host-a",
                                     "--game",
                                     "connect4",
                                     "--shm-scope",
                                     host_shm_.spec(),
                                     "--metrics-port",
                                     "-1",
                                     "--push-batch",
                                     "64",
                                     "--retry-max",
                                     "0.2",
                                     "--push-timeout",
                                     "2",
                                     "--model-poll-interval",
                                     "0.2",
                                     "--log-interval",
                                     "1",
                                     "--ring-capacity",
                                     std::to_string(kRingCapacity)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const std::string log = host_.path() + "/relay-" + std::to_string(relay_starts_++) + ".log";
    relay_logs_.push_back(log);
    return std::make_unique<ChildProcess>(argv, log, log);
  }

  // Whether the relay answers on its control socket (its signal handling is in place then).
  bool RelayReady() {
    Result<ipc::Client> client =
        ipc::Client::Create({.endpoint = "ipc://" + host_.path() + "/relay.ctl",
                             .attempt_timeout = std::chrono::milliseconds(300),
                             .max_attempts = 1});
    return client.ok() && client->Call("status").ok();
  }

  std::string RelayLogs() const {
    std::string text;
    for (const std::string& log : relay_logs_) text += ReadFile(log);
    return text;
  }

  // The host's sample ring, as its self-play workers open it.
  shm::Ring HostRing() {
    Result<shm::Ring> ring = replayd::OpenSampleRing({.run_dir = host_.path(),
                                                      .scope = host_shm_.spec(),
                                                      .record_bytes = kSampleBytes,
                                                      .capacity = kRingCapacity});
    AZ_CHECK(ring.ok(), ring.status().ToString());
    return std::move(ring).value();
  }

  // The central daemon's status; null when it does not answer.
  nlohmann::json CentralStatus() {
    Result<ipc::Client> client =
        ipc::Client::Create({.endpoint = "ipc://" + central_.path() + "/replay.ctl",
                             .attempt_timeout = std::chrono::milliseconds(500),
                             .max_attempts = 1});
    if (!client.ok()) return nullptr;
    Result<ipc::Reply> reply = client->Call("status");
    return reply.ok() ? reply->body : nlohmann::json(nullptr);
  }
  std::uint64_t CommittedThrough() {
    const nlohmann::json status = CentralStatus();
    if (!status.is_object() || !status["remote"].is_object()) return 0;
    const nlohmann::json& hosts = status["remote"]["hosts"];
    return hosts.contains("host-a") ? hosts["host-a"]["committed_through"].get<std::uint64_t>() : 0;
  }

  // (game id, ply) -> copies, of every record in the central store (read from its file, after the
  // daemon stopped).
  std::map<std::pair<std::uint64_t, std::uint32_t>, int> StoredSamples() {
    replay::ReplayStoreOptions options;
    options.path = central_.path() + "/replay.store";
    options.capacity = kCapacity;
    options.record_size = kSampleBytes;
    options.alpha = 0.6;
    options.mode = replay::ReplayStoreOptions::OpenMode::kOpen;
    Result<std::unique_ptr<replay::ReplayStore>> store = replay::ReplayStore::Open(options);
    AZ_CHECK(store.ok(), store.status().ToString());
    std::map<std::pair<std::uint64_t, std::uint32_t>, int> seen;
    std::vector<std::byte> bytes(kSampleBytes);
    for (std::uint64_t slot = 0; slot < kCapacity; ++slot) {
      if (!(*store)->ReadRecord(slot, bytes).ok()) continue;
      sample::ConnectFourSample s;
      std::memcpy(&s, bytes.data(), sizeof s);
      ++seen[{s.game_id, s.ply}];
    }
    return seen;
  }

  static void ExpectEachOnce(const std::map<std::pair<std::uint64_t, std::uint32_t>, int>& seen,
                             const std::vector<sample::ConnectFourSample>& sent) {
    EXPECT_EQ(seen.size(), sent.size());
    int doubled = 0, missing = 0;
    for (const auto& s : sent) {
      auto it = seen.find({s.game_id, s.ply});
      if (it == seen.end()) {
        ++missing;
      } else if (it->second != 1) {
        ++doubled;
      }
    }
    EXPECT_EQ(missing, 0);
    EXPECT_EQ(doubled, 0);
  }

  TempDir central_, host_;
  ShmScope central_shm_, host_shm_;
  int port_ = 0;
  std::string central_endpoint_;
  int relay_starts_ = 0;
  std::vector<std::string> relay_logs_;
};

TEST_F(RelayTest, DeliversEverySampleOnceAndFollowsTheLearnersModels) {
  auto daemon = StartDaemon();
  ASSERT_TRUE(daemon->WaitReady()) << daemon->LogText();
  CopyKeys();
  auto relay = StartRelay();

  const auto samples = learner::testing::RandomConnectFourSamples(600, 11, 4);
  shm::Ring ring = HostRing();
  for (const auto& s : samples) {
    ASSERT_TRUE(ring.Push(std::as_bytes(std::span(&s, 1)), std::chrono::seconds(10)).ok());
  }
  ASSERT_TRUE(
      WaitFor([&] { return CommittedThrough() == samples.size(); }, std::chrono::seconds(60)))
      << "committed " << CommittedThrough() << "\n"
      << RelayLogs();

  // The learner publishes a model on the central host; the relay brings it over.
  const std::string model_path = central_.path() + "/models/model-3.azw";
  fs::create_directories(central_.path() + "/models");
  const std::string weights(200000, 'w');
  {
    std::ofstream out(model_path, std::ios::binary);
    out << weights;
  }
  const std::string checksum =
      nn::Xxh64Text(std::as_bytes(std::span(weights.data(), weights.size())));
  Result<std::unique_ptr<ipc::EventPublisher>> learner =
      ipc::EventPublisher::Create({.service = "learner", .run_dir = central_.path()});
  ASSERT_TRUE(learner.ok()) << learner.status().ToString();
  Result<ipc::EventSubscriber> evaluator = ipc::EventSubscriber::Create(
      {.endpoints = {"ipc://" + host_.path() + "/relay.pub"}, .topics = {"model"}});
  ASSERT_TRUE(evaluator.ok());
  ASSERT_TRUE(
      (*learner)
          ->Publish(ipc::kModelTopic, ipc::ModelPublishedToJson(
                                          {.version = 3, .path = model_path, .checksum = checksum}))
          .ok());
  const std::string fetched = host_.path() + "/models/model-3.azw";
  std::optional<ipc::ModelPublished> announced;
  ASSERT_TRUE(WaitFor(
      [&] {
        Result<ipc::Event> event = evaluator->Next(std::chrono::milliseconds(100));
        if (!event.ok()) return false;
        Result<ipc::ModelPublished> model = ipc::ModelPublishedFromEvent(*event);
        if (model.ok() && model->version == 3) announced = *model;
        return announced.has_value();
      },
      std::chrono::seconds(30)))
      << RelayLogs();
  EXPECT_EQ(announced->path, fetched);
  EXPECT_EQ(announced->checksum, checksum);
  EXPECT_EQ(ReadFile(fetched), weights);

  // The relay's own view.
  Result<ipc::Client> client =
      ipc::Client::Create({.endpoint = "ipc://" + host_.path() + "/relay.ctl", .max_attempts = 1});
  ASSERT_TRUE(client.ok());
  Result<ipc::Reply> status = client->Call("status");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->body["taken"], samples.size());
  EXPECT_EQ(status->body["stored"], samples.size());
  EXPECT_EQ(status->body["spool"]["pending"], 0);
  EXPECT_EQ(status->body["model_version"], 3);
  EXPECT_EQ(status->body["connected"], true);

  relay->Signal(SIGTERM);
  EXPECT_EQ(relay->Wait(), 0) << RelayLogs();
  EXPECT_EQ(daemon->Terminate(), 0) << daemon->LogText();
  ExpectEachOnce(StoredSamples(), samples);
}

TEST_F(RelayTest, NothingIsLostOrStoredTwiceWhenEitherEndIsKilled) {
  auto daemon = StartDaemon();
  ASSERT_TRUE(daemon->WaitReady()) << daemon->LogText();
  CopyKeys();
  auto relay = StartRelay();

  const auto samples = learner::testing::RandomConnectFourSamples(3000, 12, 1);
  std::atomic<std::size_t> published{0};
  std::thread workers([&] {
    shm::Ring ring = HostRing();
    for (const auto& s : samples) {
      AZ_CHECK(ring.Push(std::as_bytes(std::span(&s, 1)), std::chrono::seconds(60)).ok(), "push");
      published.fetch_add(1);
      if (published % 25 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  auto wait_published = [&](std::size_t n) {
    ASSERT_TRUE(WaitFor([&] { return published.load() >= n; }, std::chrono::seconds(60)));
  };

  wait_published(300);
  relay->Kill();  // the relay, at any instruction
  relay = StartRelay();
  wait_published(800);
  daemon->Kill();  // the central daemon: the relay spools and retries
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Back, but dying again right after storing its 100th pushed sample, before that sample's
  // journal commit: the relay pushes the batch again and the next daemon finds it by its bytes.
  daemon = StartDaemon({"--crash-after-remote", "100"});
  ASSERT_TRUE(WaitFor([&] { return daemon->process().Exited(); }, std::chrono::seconds(60)))
      << daemon->LogText();
  EXPECT_THAT(daemon->LogText(), HasSubstr("test hook"));
  daemon = StartDaemon();
  ASSERT_TRUE(daemon->WaitReady()) << daemon->LogText();
  EXPECT_THAT(daemon->LogText(), HasSubstr("was being stored when the daemon stopped"));
  wait_published(2000);
  relay->Kill();
  relay = StartRelay();
  workers.join();

  ASSERT_TRUE(
      WaitFor([&] { return CommittedThrough() == samples.size(); }, std::chrono::seconds(120)))
      << "committed " << CommittedThrough() << " of " << samples.size() << "\n"
      << RelayLogs();
  const nlohmann::json host = CentralStatus()["remote"]["hosts"]["host-a"];
  EXPECT_EQ(host["gaps"], 0) << host.dump();
  EXPECT_EQ(host["rejected"], 0) << host.dump();
  EXPECT_GT(host["duplicates"].get<int>(), 0) << "the batch cut by the crash came again";
  ASSERT_TRUE(WaitFor([&] { return RelayReady(); }));
  relay->Signal(SIGTERM);
  EXPECT_EQ(relay->Wait(), 0);
  EXPECT_EQ(daemon->Terminate(), 0) << daemon->LogText();
  ExpectEachOnce(StoredSamples(), samples);
}

TEST_F(RelayTest, ARelayWithoutTheCentralKeysStoresNothingAndSaysWhy) {
  auto daemon = StartDaemon();
  ASSERT_TRUE(daemon->WaitReady()) << daemon->LogText();

  // No keys at all: a configuration problem, exit 2, naming what to copy.
  auto keyless = StartRelay();
  EXPECT_EQ(keyless->Wait(), 2);
  EXPECT_THAT(RelayLogs(), HasSubstr("copy the central run's keys directory"));

  // Keys of another run: the daemon refuses the handshake; samples stay in the spool.
  TempDir other;
  ASSERT_TRUE(ipc::EnsureRunKeys(other.path()).ok());
  fs::copy(other.path() + "/keys", host_.path() + "/keys", fs::copy_options::recursive);
  auto stranger = StartRelay();
  const auto samples = learner::testing::RandomConnectFourSamples(10, 13, 1);
  shm::Ring ring = HostRing();
  for (const auto& s : samples) {
    ASSERT_TRUE(ring.Push(std::as_bytes(std::span(&s, 1)), std::chrono::seconds(10)).ok());
  }
  Result<ipc::Client> client =
      ipc::Client::Create({.endpoint = "ipc://" + host_.path() + "/relay.ctl", .max_attempts = 1});
  ASSERT_TRUE(client.ok());
  nlohmann::json status;
  ASSERT_TRUE(WaitFor(
      [&] {
        Result<ipc::Reply> reply = client->Call("status");
        if (!reply.ok()) return false;
        status = reply->body;
        return status["spool"]["pending"] == samples.size() &&
               status["last_error"].get<std::string>().find("PERMISSION_DENIED") !=
                   std::string::npos;
      },
      std::chrono::seconds(30)))
      << status.dump() << "\n"
      << RelayLogs();
  EXPECT_EQ(CommittedThrough(), 0u);
  stranger->Signal(SIGTERM);
  EXPECT_EQ(stranger->Wait(), 0);
  EXPECT_EQ(daemon->Terminate(), 0);

  // A --central that is not tcp://: exit 2 before anything starts.
  auto bad = StartRelay({}, "ipc:///tmp/nowhere");
  EXPECT_EQ(bad->Wait(), 2);
}

}  // namespace
}  // namespace az::relay
