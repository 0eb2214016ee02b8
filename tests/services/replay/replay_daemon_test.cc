// az-replay as a user runs it: the real binary in a child process, driven over its control socket
// with the client library and with azctl. What it serves, what it refuses, how it stops.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/replay/sampling.h"
#include "ipc/discovery.h"
#include "ipc/zmq_context.h"
#include "services/replay/random_samples.h"
#include "services/replay/sample_ring.h"
#include "tests/services/http_get.h"
#include "tests/services/replay/replay_test_util.h"

namespace az::replayd {
namespace {

using ipc::testing::Scrape;
using testing::Client;
using testing::Daemon;
using ::testing::HasSubstr;
using testing::IdRecords;
using testing::ShmScope;
using testing::TempDir;
using testing::WaitFor;

class ReplayDaemonTest : public ::testing::Test {
 protected:
  // Starts az-replay in the test's run directory with its own shm scope and no fixed ports.
  std::unique_ptr<Daemon> Start(std::vector<std::string> args) {
    args.insert(args.end(),
                {"--shm-scope", shm_.spec(), "--metrics-port", "0", "--model-events-from", ""});
    auto daemon = std::make_unique<Daemon>(dir_.path(), args);
    EXPECT_TRUE(daemon->WaitReady()) << daemon->LogText();
    return daemon;
  }

  // Small opaque records: the tests choose their contents.
  std::vector<std::string> BytesLayout(int capacity, int record_bytes = 32) {
    return {"--record-layout", "bytes",
            "--record-bytes",  std::to_string(record_bytes),
            "--capacity",      std::to_string(capacity)};
  }

  TempDir dir_;
  ShmScope shm_;
};

TEST_F(ReplayDaemonTest, SamplesInProportionToPriorityThroughTheService) {
  std::vector<std::string> args = BytesLayout(4);
  args.insert(args.end(), {"--alpha", "1", "--epsilon", "0"});
  auto daemon = Start(args);
  ReplayClient replay = Client(dir_.path());
  Result<InsertResult> inserted = replay.Insert(IdRecords(0, 4, 32));
  ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
  ASSERT_EQ(inserted->generations.size(), 4u);
  // With alpha 1 and epsilon 0 the priorities are the losses: 1, 2, 3, 4 -> 10%, 20%, 30%, 40%.
  std::vector<replay::PriorityUpdate> updates;
  for (std::uint64_t g : inserted->generations) updates.push_back({g % 4, g, double(g % 4 + 1)});
  Result<replay::UpdateCounts> counts = replay.UpdatePriorities(updates);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->applied, 4u);

  std::map<std::uint64_t, int> hits;
  const int kBatches = 100;
  const int kBatch = 1000;
  for (int b = 0; b < kBatches; ++b) {
    Result<SampledBatch> batch = replay.Sample({.batch = kBatch, .beta = 1.0});
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_EQ(batch->size(), static_cast<std::size_t>(kBatch));
    ASSERT_TRUE(batch->prioritized());
    for (std::size_t i = 0; i < batch->size(); ++i) {
      const replay::SampledSlot& draw = batch->draws()[i];
      ++hits[draw.slot];
      // The record is the one in that slot, its probability P(i), its weight (P_min / P(i))^beta.
      EXPECT_EQ(testing::RecordId(batch->record(i)), draw.slot);
      EXPECT_NEAR(draw.probability, (draw.slot + 1) / 10.0, 1e-6);
    }
  }
  const double total = kBatches * kBatch;
  for (std::uint64_t slot = 0; slot < 4; ++slot) {
    // Stratified draws: the share is within a fraction of a point of P(i).
    EXPECT_NEAR(hits[slot] / total, (slot + 1) / 10.0, 0.005) << "slot " << slot;
  }
  EXPECT_EQ(daemon->Terminate(), 0);
}

TEST_F(ReplayDaemonTest, AStaleUpdateIsDroppedAndANanIsRejectedWithTheDaemonStillUp) {
  std::vector<std::string> args = BytesLayout(4);
  args.insert(args.end(), {"--alpha", "1", "--epsilon", "0"});
  auto daemon = Start(args);
  ReplayClient replay = Client(dir_.path());
  ASSERT_TRUE(replay.Insert(IdRecords(0, 4, 32)).ok());
  Result<SampledBatch> drawn = replay.Sample({.batch = 1, .beta = 0.5, .with_records = false});
  ASSERT_TRUE(drawn.ok()) << drawn.status().ToString();
  const replay::SampledSlot old = drawn->draws()[0];

  // Four more inserts overwrite every slot: the draw's generation is gone.
  ASSERT_TRUE(replay.Insert(IdRecords(4, 4, 32)).ok());
  Result<std::vector<ReadRecord>> before = replay.Read(std::vector<std::uint64_t>{old.slot});
  ASSERT_TRUE(before.ok());
  std::vector<replay::PriorityUpdate> stale = {{old.slot, old.generation, 123.0}};
  Result<replay::UpdateCounts> counts = replay.UpdatePriorities(stale);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->stale, 1u);
  EXPECT_EQ(counts->applied, 0u);
  Result<std::vector<ReadRecord>> after = replay.Read(std::vector<std::uint64_t>{old.slot});
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)[0].generation, old.generation + 4);
  EXPECT_EQ((*after)[0].priority, (*before)[0].priority) << "the new record kept its priority";

  // NaN, infinity and a negative loss are rejected and counted; nothing changes.
  const std::uint64_t slot = old.slot;
  const std::uint64_t generation = old.generation + 4;
  std::vector<replay::PriorityUpdate> bad = {
      {slot, generation, std::nan("")}, {slot, generation, INFINITY}, {slot, generation, -1.0}};
  counts = replay.UpdatePriorities(bad);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->rejected, 3u);
  Result<std::vector<ReadRecord>> unchanged = replay.Read(std::vector<std::uint64_t>{slot});
  ASSERT_TRUE(unchanged.ok());
  EXPECT_EQ((*unchanged)[0].priority, (*before)[0].priority);
  Result<nlohmann::json> status = replay.Status();
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ((*status)["updates_rejected"], 3);
  EXPECT_EQ((*status)["updates_stale"], 1);
  EXPECT_EQ((*status)["state"], "running");
  EXPECT_TRUE(std::isfinite((*status)["priority_sum"].get<double>()));
  // And it still samples.
  EXPECT_TRUE(replay.Sample({.batch = 8, .beta = 1.0}).ok());
}

// Sends raw frames on a DEALER socket and returns the reply's JSON (null on timeout).
nlohmann::json Raw(const std::string& endpoint, const std::vector<std::string>& frames) {
  auto context = ipc::SharedContext();
  zmq::socket_t socket(*context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(endpoint);
  socket.send(zmq::message_t(), zmq::send_flags::sndmore);
  for (size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i]),
                i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
  if (zmq::poll(items, 1, std::chrono::seconds(20)) == 0) return nullptr;
  zmq::message_t delimiter;
  zmq::message_t body;
  (void)socket.recv(delimiter);
  (void)socket.recv(body);
  return nlohmann::json::parse(body.to_string_view());
}

std::string Code(const nlohmann::json& reply) {
  if (!reply.is_object() || reply.value("ok", true)) return "OK";
  return reply["error"].value("code", "");
}

TEST_F(ReplayDaemonTest, MalformedRequestsAndUnknownCommandsGetErrorsAndTheDaemonKeepsServing) {
  auto daemon = Start({"--capacity", "100"});  // the chess layout: inserts are validated
  const std::string endpoint = "ipc://" + dir_.path() + "/replay.ctl";
  EXPECT_EQ(Code(Raw(endpoint, {"{not json"})), "INVALID_ARGUMENT");
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "sample"})"})), "INVALID_ARGUMENT");
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "sample", "batch": 0, "beta": 0.5})"})),
            "INVALID_ARGUMENT");
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "sample", "batch": 4, "beta": 7})"})),
            "INVALID_ARGUMENT");
  const nlohmann::json unknown = Raw(endpoint, {R"({"cmd": "defragment"})"});
  EXPECT_EQ(Code(unknown), "NOT_FOUND");
  EXPECT_THAT(unknown["error"]["message"].get<std::string>(), HasSubstr("update-priorities"));
  // Frames of the wrong size.
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "insert"})", "12345"})), "INVALID_ARGUMENT");
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "update-priorities"})", "1234567"})),
            "INVALID_ARGUMENT");
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "read", "slots": [1000]})"})), "INVALID_ARGUMENT");
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "set", "key": "capacity", "value": 5})"})),
            "FAILED_PRECONDITION");
  EXPECT_EQ(Code(Raw(endpoint, {R"({"cmd": "set", "key": "nope", "value": 5})"})),
            "INVALID_ARGUMENT");

  // A batch of chess samples with one broken record: nothing is stored, the reply says which.
  ReplayClient replay = Client(dir_.path());
  std::vector<sample::ChessSample> samples = RandomChessSamples(5, {.seed = 3});
  samples[3].num_moves = 0;
  Result<InsertResult> refused =
      replay.Insert(std::as_bytes(std::span(samples.data(), samples.size())));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("record 3"));
  EXPECT_THAT(refused.status().message(), HasSubstr("nothing was inserted"));
  Result<nlohmann::json> status = replay.Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["size"], 0);
  EXPECT_EQ((*status)["rejected_control"], 1);

  // Well-formed samples go in; the daemon served every one of these requests and still runs.
  samples = RandomChessSamples(5, {.seed = 4});
  Result<InsertResult> accepted =
      replay.Insert(std::as_bytes(std::span(samples.data(), samples.size())));
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(accepted->generations.size(), 5u);
  EXPECT_FALSE(daemon->process().Exited());
  EXPECT_EQ(daemon->Terminate(), 0);
}

TEST_F(ReplayDaemonTest, RateLimiterBlocksSamplesUntilInsertsCatchUpAndTimesOutWithItsState) {
  std::vector<std::string> args = BytesLayout(100);
  args.insert(args.end(), {"--min-size-to-sample", "10", "--samples-per-insert", "1",
                           "--error-buffer", "4", "--prefetch", "false"});
  auto daemon = Start(args);
  ReplayClient replay = Client(dir_.path());
  ReplayClient observer = Client(dir_.path());
  ASSERT_TRUE(replay.Insert(IdRecords(0, 9, 32)).ok());

  // Below min_size_to_sample: the request waits, and the server answers others meanwhile.
  std::optional<Result<SampledBatch>> waited;
  std::thread learner([&] {
    ReplayClient own = Client(dir_.path());
    waited.emplace(own.Sample({.batch = 4, .beta = 0.5, .timeout = std::chrono::seconds(60)}));
  });
  ASSERT_TRUE(WaitFor([&] {
    Result<nlohmann::json> s = observer.Status();
    return s.ok() && (*s)["sample_waiting"] == 1;
  }));
  ASSERT_TRUE(replay.Insert(IdRecords(9, 1, 32)).ok());  // the 10th record releases it
  learner.join();
  ASSERT_TRUE(waited->ok()) << waited->status().ToString();
  EXPECT_GT((*waited)->body()["waited_ms"].get<double>(), 0.0);

  // One draw per insert, 4 of slack: after 4 draws of 10 inserts' credit (offset 10, minimum 6),
  // the next 4 must wait for 4 more inserts.
  Result<SampledBatch> timed_out =
      replay.Sample({.batch = 4, .beta = 0.5, .timeout = std::chrono::milliseconds(300)});
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(timed_out.status().message(), HasSubstr("samples_per_insert"));
  EXPECT_THAT(timed_out.status().message(), HasSubstr("\"inserts\":10"));

  std::optional<Result<SampledBatch>> released;
  std::thread second([&] {
    ReplayClient own = Client(dir_.path());
    released.emplace(own.Sample({.batch = 4, .beta = 0.5, .timeout = std::chrono::seconds(60)}));
  });
  ASSERT_TRUE(WaitFor([&] {
    Result<nlohmann::json> s = observer.Status();
    return s.ok() && (*s)["sample_waiting"] == 1;
  }));
  ASSERT_TRUE(replay.Insert(IdRecords(10, 4, 32)).ok());
  second.join();
  ASSERT_TRUE(released->ok()) << released->status().ToString();

  // A batch larger than the error buffer could never be served: refused at once.
  Result<SampledBatch> too_big = replay.Sample({.batch = 5, .beta = 0.5});
  EXPECT_EQ(too_big.status().code(), StatusCode::kFailedPrecondition);
  // Lifting the limit at run time releases sampling without a restart.
  ASSERT_TRUE(replay.Set("samples_per_insert", 0).ok());
  EXPECT_TRUE(replay.Sample({.batch = 64, .beta = 0.5}).ok());
}

TEST_F(ReplayDaemonTest, ASnapshotRestoresIntoAFreshStoreWithRecordsPrioritiesAndGenerations) {
  std::vector<std::string> args = BytesLayout(64, 48);
  args.insert(args.end(), {"--alpha", "0.5"});
  auto first = Start(args);
  ReplayClient replay = Client(dir_.path());
  ASSERT_TRUE(replay.Insert(IdRecords(0, 100, 48)).ok());  // wraps: the newest 64 stay
  std::vector<replay::PriorityUpdate> updates;
  for (std::uint64_t g = 40; g < 100; g += 3) updates.push_back({g % 64, g, double(g) / 10});
  ASSERT_EQ(replay.UpdatePriorities(updates)->applied, updates.size());
  std::vector<std::uint64_t> slots(64);
  for (std::uint64_t s = 0; s < 64; ++s) slots[s] = s;
  Result<std::vector<ReadRecord>> original = replay.Read(slots);
  ASSERT_TRUE(original.ok());
  Result<nlohmann::json> snapshot = replay.Snapshot();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)["records"], 64);
  const std::string path = (*snapshot)["path"];
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(first->Terminate(), 0);

  // A fresh store elsewhere, restored from the snapshot.
  args.insert(args.end(), {"--store", dir_.path() + "/fresh.store", "--restore", path});
  auto second = Start(args);
  ReplayClient restored = Client(dir_.path());
  Result<std::vector<ReadRecord>> back = restored.Read(slots);
  ASSERT_TRUE(back.ok());
  for (std::uint64_t s = 0; s < 64; ++s) {
    ASSERT_TRUE((*back)[s].found) << s;
    EXPECT_EQ((*back)[s].generation, (*original)[s].generation) << s;
    EXPECT_EQ((*back)[s].priority, (*original)[s].priority) << s;
    EXPECT_EQ((*back)[s].bytes, (*original)[s].bytes) << s;
  }
  Result<nlohmann::json> status = restored.Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["restored"]["generations_preserved"], true);
  // The next insert continues the generations where the snapshot left them.
  Result<InsertResult> next = restored.Insert(IdRecords(100, 1, 48));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->generations[0], 100u);
  EXPECT_EQ(second->Terminate(), 0);

  // --restore into a store that holds records is refused, and the records stay.
  auto refused = std::make_unique<Daemon>(
      dir_.path(), std::vector<std::string>{"--record-layout", "bytes", "--record-bytes", "48",
                                            "--capacity", "64", "--alpha", "0.5", "--store",
                                            dir_.path() + "/fresh.store", "--restore", path,
                                            "--shm-scope", shm_.spec(), "--metrics-port", "-1"});
  EXPECT_EQ(refused->process().Wait(), 2);
  EXPECT_THAT(refused->LogText(), HasSubstr("only into an empty store"));
}

TEST_F(ReplayDaemonTest, AConfigThatContradictsTheStoreIsRefusedAndTheStoreIsLeftAlone) {
  auto daemon = Start(BytesLayout(100));
  ASSERT_TRUE(Client(dir_.path()).Insert(IdRecords(0, 10, 32)).ok());
  EXPECT_EQ(daemon->Terminate(), 0);
  const std::string store = dir_.path() + "/replay.store";
  const std::string before = testing::ReadFile(store);

  for (const std::vector<std::string>& wrong : {BytesLayout(200), BytesLayout(100, 64)}) {
    std::vector<std::string> args = wrong;
    args.insert(args.end(), {"--shm-scope", shm_.spec(), "--metrics-port", "-1"});
    Daemon refused(dir_.path(), args);
    EXPECT_EQ(refused.process().Wait(), 2);
    const std::string log = refused.LogText();
    EXPECT_THAT(log, HasSubstr("left untouched"));
    EXPECT_THAT(log, HasSubstr("--store"));
    EXPECT_TRUE(log.find("capacity") != std::string::npos ||
                log.find("record size") != std::string::npos)
        << log;
  }
  EXPECT_EQ(testing::ReadFile(store), before);
  auto again = Start(BytesLayout(100));
  Result<nlohmann::json> status = Client(dir_.path()).Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["size"], 10);
}

TEST_F(ReplayDaemonTest, SigtermAndShutdownStopCleanlyAndKeepEveryRecord) {
  auto daemon = Start(BytesLayout(100));
  ASSERT_TRUE(Client(dir_.path()).Insert(IdRecords(0, 30, 32)).ok());
  EXPECT_EQ(daemon->Terminate(), 0);
  EXPECT_THAT(daemon->LogText(), HasSubstr("stopped cleanly with 30 records"));
  Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(dir_.path(), "replay");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->state, "stopped");

  auto again = Start(BytesLayout(100));
  ReplayClient replay = Client(dir_.path());
  ASSERT_TRUE(replay.Insert(IdRecords(30, 5, 32)).ok());
  ASSERT_TRUE(replay.raw().Call("shutdown").ok());
  EXPECT_EQ(again->process().Wait(), 0);
  auto third = Start(BytesLayout(100));
  Result<nlohmann::json> status = Client(dir_.path()).Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["size"], 35);
  EXPECT_EQ((*status)["open_report"]["discarded_uncommitted"], 0);
}

TEST_F(ReplayDaemonTest, TheRingFeedsTheBufferWithValidSamplesOnlyAndPauseHoldsItBack) {
  auto daemon = Start({"--capacity", "100"});  // chess samples, validated
  Result<shm::Ring> ring =
      OpenSampleRing({.scope = shm_.spec(), .record_bytes = sizeof(sample::ChessSample)});
  ASSERT_TRUE(ring.ok()) << ring.status().ToString();
  std::vector<sample::ChessSample> samples = RandomChessSamples(4, {.seed = 8, .model_version = 6});
  samples[2].policy[0].index = 9999;  // not a move index
  for (const sample::ChessSample& s : samples) {
    ASSERT_TRUE(ring->Push(std::as_bytes(std::span(&s, 1)), std::chrono::seconds(10)).ok());
  }
  ReplayClient replay = Client(dir_.path());
  nlohmann::json status;
  ASSERT_TRUE(WaitFor([&] {
    Result<nlohmann::json> s = replay.Status();
    if (s.ok()) status = *s;
    return s.ok() && status["ring"]["ingested"] == 3 && status["ring"]["rejected"] == 1;
  })) << status.dump();
  EXPECT_EQ(status["size"], 3);
  EXPECT_THAT(status["ring"]["last_rejection"].get<std::string>(), HasSubstr("index"));
  // The newest provenance seen on the ring is the model version, for staleness.
  ASSERT_TRUE(WaitFor([&] {
    Result<nlohmann::json> s = replay.Status();
    return s.ok() && (*s)["model_version"] == 6;
  }));

  // Paused, the daemon leaves records in the ring; resumed, it takes them.
  ASSERT_TRUE(replay.raw().Call("pause").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a take in flight finishes
  std::vector<sample::ChessSample> more = RandomChessSamples(2, {.seed = 9});
  for (const sample::ChessSample& s : more) {
    ASSERT_TRUE(ring->Push(std::as_bytes(std::span(&s, 1)), std::chrono::seconds(10)).ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Result<nlohmann::json> paused = replay.Status();
  ASSERT_TRUE(paused.ok());
  EXPECT_EQ((*paused)["size"], 3);
  EXPECT_EQ((*paused)["ring"]["occupancy"], 2);
  ASSERT_TRUE(replay.raw().Call("resume").ok());
  ASSERT_TRUE(WaitFor([&] {
    Result<nlohmann::json> s = replay.Status();
    return s.ok() && (*s)["size"] == 5;
  }));
}

// The learner withdraws what it cannot decode. With uniform sampling (alpha 0, Connect Four's
// default) a priority would change nothing, so `withdraw` is what keeps such a record out of every
// later batch; the sample reply says the daemon samples uniformly, so the learner sends no losses.
TEST_F(ReplayDaemonTest, WithdrawnRecordsAreNeverServedAgainWithUniformSampling) {
  std::vector<std::string> args = BytesLayout(8);
  args.insert(args.end(), {"--alpha", "0"});
  auto daemon = Start(args);
  ReplayClient replay = Client(dir_.path());
  Result<InsertResult> inserted = replay.Insert(IdRecords(0, 8, 32));
  ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
  const std::vector<std::uint64_t>& generations = inserted->generations;
  Result<SampledBatch> first = replay.Sample({.batch = 4, .beta = 1.0});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->prioritized());

  // Binary: slot 2 withdrawn, a stale generation and a slot beyond the capacity counted.
  std::vector<replay::RecordKey> keys = {{2, generations[2]}, {3, generations[3] + 8}, {99, 0}};
  Result<replay::UpdateCounts> counts = replay.Withdraw(keys);
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(counts->applied, 1u);
  EXPECT_EQ(counts->stale, 1u);
  EXPECT_EQ(counts->rejected, 1u);
  // JSON, as a script would: slot 6.
  Result<ipc::Reply> json =
      replay.raw().Call("withdraw", {{"slots", {6}}, {"generations", {generations[6]}}});
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->body["withdrawn"], 1);
  // A frame that is not whole RecordKeys, or arrays of different lengths: refused, nothing lost.
  std::vector<zmq::message_t> frames;
  frames.emplace_back(std::string(20, '\0'));
  Result<ipc::Reply> ragged =
      replay.raw().Call("withdraw", nlohmann::json::object(), std::move(frames));
  EXPECT_EQ(ragged.status().code(), StatusCode::kInvalidArgument) << ragged.status().ToString();
  Result<ipc::Reply> uneven =
      replay.raw().Call("withdraw", {{"slots", {1, 2}}, {"generations", {1}}});
  EXPECT_EQ(uneven.status().code(), StatusCode::kInvalidArgument) << uneven.status().ToString();

  for (int b = 0; b < 20; ++b) {
    Result<SampledBatch> batch = replay.Sample({.batch = 64, .beta = 1.0});
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    for (std::size_t i = 0; i < batch->size(); ++i) {
      const replay::SampledSlot& draw = batch->draws()[i];
      ASSERT_NE(draw.slot, 2u);
      ASSERT_NE(draw.slot, 6u);
      EXPECT_EQ(testing::RecordId(batch->record(i)), draw.slot);
      EXPECT_DOUBLE_EQ(draw.probability, 1.0 / 6);
    }
  }
  // Still held (a snapshot keeps them), read with priority 0; status and metrics count them.
  Result<std::vector<ReadRecord>> read = replay.Read(std::vector<std::uint64_t>{2, 4});
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE((*read)[0].found);
  EXPECT_EQ((*read)[0].priority, 0.0);
  EXPECT_EQ((*read)[1].priority, 1.0);
  Result<nlohmann::json> status = replay.Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ((*status)["size"], 8);
  EXPECT_EQ((*status)["withdrawn"], 2);
  EXPECT_EQ((*status)["priority_sum"], 6.0);
  const int port = (*status)["metrics_port"];
  std::string text;
  EXPECT_TRUE(WaitFor([&] {
    text = Scrape(port);
    return text.find("az_replay_withdrawn_records 2") != std::string::npos;
  })) << text;
  EXPECT_THAT(daemon->LogText(), HasSubstr("withdrew 1 records"));
  EXPECT_EQ(daemon->Terminate(), 0);
}

TEST_F(ReplayDaemonTest, ASecondDaemonOnTheSameStoreIsRefusedAndTheFirstKeepsServing) {
  auto first = Start(BytesLayout(100));
  std::vector<std::string> args = BytesLayout(100);
  args.insert(args.end(), {"--shm-scope", shm_.spec(), "--metrics-port", "-1"});
  Daemon second(dir_.path(), args);
  EXPECT_EQ(second.process().Wait(), 1);
  EXPECT_THAT(second.LogText(), HasSubstr("another az-replay is using this store"));
  Result<nlohmann::json> status = Client(dir_.path()).Status();
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ((*status)["pid"], first->process().pid());
}

TEST_F(ReplayDaemonTest, MetricsReportTheBufferTheRequestsAndTheStaleness) {
  auto daemon = Start({"--capacity", "500"});
  ReplayClient replay = Client(dir_.path());
  std::vector<sample::ChessSample> samples =
      RandomChessSamples(200, {.seed = 9, .model_version = 3});
  ASSERT_TRUE(replay.Insert(std::as_bytes(std::span(samples))).ok());
  // The learner says it is at model 5: every record is 2 versions old.
  ASSERT_TRUE(replay.Sample({.batch = 32, .beta = 0.5, .model_version = 5}).ok());
  Result<nlohmann::json> status = replay.Status();
  ASSERT_TRUE(status.ok());
  const int port = (*status)["metrics_port"];
  ASSERT_GT(port, 0);
  // The daemon refreshes its series every 500 ms, one after another, and a scrape can land in the
  // middle of a refresh: wait until one scrape shows every expected line.
  const std::vector<std::string> expected = {
      "az_replay_records 200",
      "az_replay_beta 0.5",
      "az_replay_capacity_records 500",
      "az_replay_inserted_records_total{source=\"control\"} 200",
      "az_replay_sampled_records_total 32",
      "az_replay_model_version 5",
      "az_replay_sample_staleness_model_versions_count 32",
      "az_replay_sample_staleness_model_versions_bucket{le=\"1\"} 0",
      "az_replay_sample_staleness_model_versions_bucket{le=\"2\"} 32",
      "az_replay_priority_max",
      "az_replay_ring_capacity_records",
      "az_replay_snapshot_age_seconds -1",
  };
  std::string text;
  const bool all_seen = WaitFor([&] {
    text = Scrape(port);
    return std::ranges::all_of(
        expected, [&](const std::string& line) { return text.find(line) != std::string::npos; });
  });
  for (const std::string& line : expected) EXPECT_THAT(text, HasSubstr(line));
  ASSERT_TRUE(all_seen);
  // The discovery record names the port, for azctl and the Prometheus file discovery.
  Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(dir_.path(), "replay");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->metrics_port, port);
}

}  // namespace
}  // namespace az::replayd
