// az-evaluator as a real child process in a temporary run directory, driven through the real eval
// channel (shm::RequestClient), the real control socket and real model events.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/encoding/move_index.h"
#include "core/encoding/planes.h"
#include "core/encoding/position_record.h"
#include "core/games/connect4/connect_four.h"
#include "core/games/connect4/connect_four_encoder.h"
#include "ipc/discovery.h"
#include "ipc/event_publisher.h"
#include "services/common/eval_protocol.h"
#include "shm/request_channel.h"
#include "tests/services/evaluator/random_leaves.h"
#include "tests/services/evaluator/service_test_util.h"
#include "tests/services/http_get.h"

namespace az::service::testing {
namespace {

using Chess = games::Chess;
using ConnectFour = games::ConnectFour;
using std::chrono::milliseconds;
using std::chrono::seconds;

template <typename G>
using TestLeaf = RandomLeaf<G>;

std::vector<TestLeaf<Chess>> ChessLeaves(int n) { return RandomChessLeaves(n, /*seed=*/12345); }
std::vector<TestLeaf<ConnectFour>> ConnectFourLeaves(int n) {
  return RandomConnectFourLeaves(n, /*seed=*/777);
}
// `n` Connect Four positions, no two alike (so that none is a cache hit the first time).
std::vector<TestLeaf<ConnectFour>> DistinctConnectFourLeaves(std::size_t n) {
  std::vector<TestLeaf<ConnectFour>> leaves;
  for (TestLeaf<ConnectFour>& leaf : RandomConnectFourLeaves(static_cast<int>(4 * n), 4242)) {
    const bool seen = std::any_of(leaves.begin(), leaves.end(),
                                  [&](const auto& l) { return l.record == leaf.record; });
    if (!seen) leaves.push_back(std::move(leaf));
    if (leaves.size() == n) break;
  }
  AZ_CHECK(leaves.size() == n);
  return leaves;
}

template <typename G>
shm::RequestClient AttachWorker(const RunDir& run, std::uint32_t worker_id) {
  std::optional<shm::RequestClient> client;
  const bool attached = WaitFor([&] {
    Result<shm::RequestClient> opened =
        shm::RequestClient::Open(run.Scope(), EvalChannelName(GameKindOf<G>::kValue),
                                 {.worker_id = worker_id,
                                  .request_bytes = sizeof(EvalRequest<G>),
                                  .response_bytes = sizeof(EvalResponse<G>)});
    if (!opened.ok()) return false;
    client.emplace(std::move(opened).value());
    return true;
  });
  EXPECT_TRUE(attached) << "the evaluator never created its channel";
  AZ_CHECK(client.has_value());
  return std::move(*client);
}

template <typename G>
struct Answer {
  EvalResponseHeader header;
  std::vector<float> priors;
};

template <typename G>
void Submit(shm::RequestClient& client, const std::vector<TestLeaf<G>>& leaves,
            std::uint64_t first_id = 0) {
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const mcts::Leaf<G> leaf = leaves[i].Leaf();
    const Status status = client.SubmitWith(first_id + i, seconds(10), [&](std::span<std::byte> p) {
      WriteEvalRequest<G>(leaf, 1000 + i, p);
    });
    ASSERT_TRUE(status.ok()) << status.ToString();
  }
}

// Receives answers to requests first_id .. first_id + leaves.size() - 1.
template <typename G>
std::vector<Answer<G>> ReceiveAll(shm::RequestClient& client,
                                  const std::vector<TestLeaf<G>>& leaves,
                                  std::uint64_t first_id = 0) {
  std::vector<Answer<G>> answers(leaves.size());
  std::size_t received = 0;
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (received < leaves.size() && std::chrono::steady_clock::now() < deadline) {
    (void)client.Receive(
        256, milliseconds(200), [&](std::uint64_t id, std::span<const std::byte> p) {
          const std::size_t i = id - first_id;
          EXPECT_LT(i, leaves.size()) << "an answer to a request never sent";
          if (i >= leaves.size()) return;
          const int moves = static_cast<int>(leaves[i].indices.size());
          const Status status = ReadEvalResponseHeader<G>(p, moves, answers[i].header);
          EXPECT_TRUE(status.ok()) << status.ToString();
          answers[i].priors.resize(answers[i].header.num_moves);
          CopyPriors<G>(p, answers[i].priors);
          ++received;
        });
  }
  EXPECT_EQ(received, leaves.size()) << "answers missing after 30 s";
  return answers;
}

template <typename G>
void ExpectValidAnswers(const std::vector<TestLeaf<G>>& leaves,
                        const std::vector<Answer<G>>& answers, std::uint64_t model_version) {
  ASSERT_EQ(answers.size(), leaves.size());
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const Answer<G>& a = answers[i];
    ASSERT_EQ(a.header.status, static_cast<std::uint8_t>(EvalStatus::kOk)) << "request " << i;
    EXPECT_EQ(a.header.model_version, model_version);
    ASSERT_EQ(a.priors.size(), leaves[i].indices.size());
    double sum = 0;
    for (float p : a.priors) {
      EXPECT_GE(p, 0.0f);
      sum += p;
    }
    EXPECT_NEAR(sum, 1.0, 1e-4) << "priors are a softmax over the legal moves";
    double wdl = 0;
    for (float v : a.header.wdl) {
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
      wdl += v;
    }
    EXPECT_NEAR(wdl, 1.0, 1e-4);
  }
}

// The status of the evaluator once `done` holds for it (the counters are published after each
// batch's answers are written, so a reply may trail the answers by a moment).
nlohmann::json StatusWhen(const RunDir& run,
                          const std::function<bool(const nlohmann::json&)>& done) {
  nlohmann::json body;
  WaitFor(
      [&] {
        Result<ipc::Reply> status = ControlClient(run, "evaluator").Call("status");
        if (!status.ok()) return false;
        body = status->body;
        return done(body);
      },
      seconds(10));
  return body;
}

std::vector<std::string> EvaluatorArgs(const RunDir& run, const std::string& game,
                                       std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--run-dir",      run.path(), "--game",         game,
                                   "--metrics-port", "0",        "--log-interval", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(EvaluatorServiceTest, AnswersWithTheNetworksPriorsOverTheLegalMovesAndItsWdl) {
  RunDir run;
  const std::string model = run.File("chess.azw");
  const nn::NetConfig net = TinyNet(nn::NetConfig::ChessSmall());
  WriteNetwork(model, net, 5, 3);
  // fp32 on every CPU: the comparison below is to 1e-4, which bf16 (cpu-bf16's default "auto" on
  // a CPU with bf16 dot products) does not keep.
  Service evaluator(run, "az-evaluator", "evaluator",
                    EvaluatorArgs(run, "chess", {"--model", model, "--cpu-bf16", "off"}));
  shm::RequestClient client = AttachWorker<Chess>(run, 0);
  const std::vector<TestLeaf<Chess>> leaves = ChessLeaves(40);
  Submit<Chess>(client, leaves);
  const std::vector<Answer<Chess>> answers = ReceiveAll<Chess>(client, leaves);
  ExpectValidAnswers<Chess>(leaves, answers, 3);

  // The same file run in this process gives the same numbers: the evaluator encodes the records
  // and masks the policy exactly as the network's own Forward does.
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kCpu;
  runtime.input_layout = nn::InputLayout::kNhwc;
  Result<std::unique_ptr<nn::Network>> network = nn::Network::FromFile(model, runtime);
  ASSERT_TRUE(network.ok()) << network.status().ToString();
  std::vector<std::int32_t> offsets = {0};
  std::vector<std::int32_t> actions;
  for (const TestLeaf<Chess>& leaf : leaves) {
    actions.insert(actions.end(), leaf.indices.begin(), leaf.indices.end());
    offsets.push_back(static_cast<std::int32_t>(actions.size()));
  }
  std::vector<float> priors(actions.size());
  std::vector<float> wdl(leaves.size() * 3);
  nn::BatchInput input;
  input.n = static_cast<int>(leaves.size());
  input.encode = [&](int i, float* dst) {
    encoding::EncodePlanes(leaves[i].record, std::span<float>(dst, encoding::kInputFloats));
  };
  const nn::LegalMovesView legal{offsets, actions};
  ASSERT_TRUE(
      (*network)->Forward(input, {.priors = priors.data(), .wdl = wdl.data()}, &legal).ok());
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    for (std::size_t m = 0; m < answers[i].priors.size(); ++m) {
      EXPECT_NEAR(answers[i].priors[m], priors[offsets[i] + m], 1e-4);
    }
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(answers[i].header.wdl[k], wdl[3 * i + k], 1e-4);
  }
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, RequestsThatWaitTogetherAreEvaluatedInOneBatch) {
  RunDir run;
  Service evaluator(run, "az-evaluator", "evaluator", EvaluatorArgs(run, "connect4"));
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 3);
  ASSERT_FALSE(WaitForStatus(run, "evaluator").empty()) << evaluator.Log();
  ipc::Client control = ControlClient(run, "evaluator");
  // Paused, the evaluator takes nothing: the requests pile up in the ring.
  ASSERT_TRUE(control.Call("pause").ok());
  const std::vector<TestLeaf<ConnectFour>> leaves = ConnectFourLeaves(64);
  Submit<ConnectFour>(client, leaves);
  ASSERT_TRUE(control.Call("resume").ok());
  ExpectValidAnswers<ConnectFour>(leaves, ReceiveAll<ConnectFour>(client, leaves), 0);
  const nlohmann::json status =
      StatusWhen(run, [&](const nlohmann::json& s) { return s["requests"] == leaves.size(); });
  const std::uint64_t requests = status["requests"];
  const std::uint64_t batches = status["batches"];
  EXPECT_EQ(requests, leaves.size());
  EXPECT_LT(batches, requests) << "some batch held more than one request";
  EXPECT_GT(status["mean_batch"].get<double>(), 1.0);
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

// Publishes "model" events as the learner does.
std::unique_ptr<ipc::EventPublisher> Learner(const RunDir& run) {
  Result<std::unique_ptr<ipc::EventPublisher>> publisher =
      ipc::EventPublisher::Create({.service = "learner", .run_dir = run.path()});
  EXPECT_TRUE(publisher.ok()) << publisher.status().ToString();
  return publisher.ok() ? std::move(publisher).value() : nullptr;
}

void PublishModel(ipc::EventPublisher& learner, std::int64_t version, const std::string& path) {
  const Result<ipc::Event> event =
      learner.Publish(ipc::kModelTopic, ipc::ModelPublishedToJson({version, path, "xxh64:test"}));
  ASSERT_TRUE(event.ok()) << event.status().ToString();
}

// Sends one request again and again until its answer carries `version` (or 30 s pass).
bool AnswersComeFromVersion(shm::RequestClient& client, std::uint64_t version,
                            std::uint64_t& next_id) {
  const std::vector<TestLeaf<ConnectFour>> leaves = ConnectFourLeaves(1);
  return WaitFor(
      [&] {
        Submit<ConnectFour>(client, leaves, next_id);
        const auto answers = ReceiveAll<ConnectFour>(client, leaves, next_id);
        ++next_id;
        return answers[0].header.status == 0 && answers[0].header.model_version == version;
      },
      seconds(30));
}

TEST(EvaluatorServiceTest, HotSwapsAModelThatTheLearnerPublishes) {
  RunDir run;
  const nn::NetConfig net = TinyNet(nn::NetConfig::ConnectFour());
  WriteNetwork(run.File("m1.azw"), net, 1, 1);
  WriteNetwork(run.File("m2.azw"), net, 2, 2);
  std::unique_ptr<ipc::EventPublisher> learner = Learner(run);
  ASSERT_NE(learner, nullptr);
  Service evaluator(run, "az-evaluator", "evaluator",
                    EvaluatorArgs(run, "connect4", {"--model", run.File("m1.azw")}));
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 0);
  std::uint64_t id = 0;
  ASSERT_TRUE(AnswersComeFromVersion(client, 1, id)) << evaluator.Log();
  const std::vector<TestLeaf<ConnectFour>> leaves = ConnectFourLeaves(8);
  Submit<ConnectFour>(client, leaves, 1000);
  const auto before = ReceiveAll<ConnectFour>(client, leaves, 1000);

  PublishModel(*learner, 2, run.File("m2.azw"));
  ASSERT_TRUE(AnswersComeFromVersion(client, 2, id)) << evaluator.Log();
  Submit<ConnectFour>(client, leaves, 2000);
  const auto after = ReceiveAll<ConnectFour>(client, leaves, 2000);
  ExpectValidAnswers<ConnectFour>(leaves, after, 2);
  // Other weights, other answers.
  bool differ = false;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    for (std::size_t m = 0; m < after[i].priors.size(); ++m) {
      differ |= std::fabs(after[i].priors[m] - before[i].priors[m]) > 1e-6f;
    }
  }
  EXPECT_TRUE(differ);
  const nlohmann::json status = ControlClient(run, "evaluator").Call("status")->body;
  EXPECT_EQ(status["model_version"], 2);
  EXPECT_EQ(status["model_path"], run.File("m2.azw"));
  EXPECT_EQ(status["model_loads"], 1);
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, ACorruptPublishedModelKeepsTheOldOneServing) {
  RunDir run;
  const nn::NetConfig net = TinyNet(nn::NetConfig::ConnectFour());
  WriteNetwork(run.File("m1.azw"), net, 1, 1);
  WriteNetwork(run.File("m6.azw"), net, 6, 6);
  {
    // A weights file with a flipped byte in its payload: the checksum catches it.
    std::string bytes = ReadFile(run.File("m6.azw"));
    bytes[bytes.size() / 2] ^= 0x5A;
    std::ofstream(run.File("m5.azw"), std::ios::binary) << bytes;
  }
  std::unique_ptr<ipc::EventPublisher> learner = Learner(run);
  ASSERT_NE(learner, nullptr);
  Service evaluator(run, "az-evaluator", "evaluator",
                    EvaluatorArgs(run, "connect4", {"--model", run.File("m1.azw")}));
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 0);
  std::uint64_t id = 0;
  ASSERT_TRUE(AnswersComeFromVersion(client, 1, id)) << evaluator.Log();

  PublishModel(*learner, 5, run.File("m5.azw"));
  ipc::Client control = ControlClient(run, "evaluator");
  ASSERT_TRUE(WaitFor([&] {
    Result<ipc::Reply> status = control.Call("status");
    return status.ok() && status->body["model_load_failures"] == 1;
  })) << evaluator.Log();
  // Still serving, with the old weights.
  const std::vector<TestLeaf<ConnectFour>> leaves = ConnectFourLeaves(16);
  Submit<ConnectFour>(client, leaves, 1000);
  ExpectValidAnswers<ConnectFour>(leaves, ReceiveAll<ConnectFour>(client, leaves, 1000), 1);
  EXPECT_NE(evaluator.Log().find("m5.azw"), std::string::npos) << "the refusal is logged";
  // And it still follows the learner.
  PublishModel(*learner, 6, run.File("m6.azw"));
  EXPECT_TRUE(AnswersComeFromVersion(client, 6, id)) << evaluator.Log();
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, LoadModelCommandSwapsWeightsOrSaysWhyNot) {
  RunDir run;
  // The evaluator starts with the default Connect Four network; a file of the same shapes is
  // copied into it, one of other shapes (tiny) replaces it, one of another game is refused.
  WriteNetwork(run.File("c4.azw"), nn::NetConfig::ConnectFour(), 4, 4);
  WriteNetwork(run.File("tiny.azw"), TinyNet(nn::NetConfig::ConnectFour()), 4, 7);
  WriteNetwork(run.File("chess.azw"), TinyNet(nn::NetConfig::ChessSmall()), 4, 9);
  Service evaluator(run, "az-evaluator", "evaluator",
                    EvaluatorArgs(run, "connect4", {"--model-events-from", ""}));
  ASSERT_FALSE(WaitForStatus(run, "evaluator").empty()) << evaluator.Log();
  ipc::Client control = ControlClient(run, "evaluator");
  Result<ipc::Reply> loaded = control.Call("load-model", {{"path", run.File("c4.azw")}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->body["model_version"], 4);
  loaded = control.Call("load-model", {{"path", run.File("tiny.azw")}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->body["model_version"], 7);
  Result<ipc::Reply> missing = control.Call("load-model", {{"path", run.File("nope.azw")}});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  Result<ipc::Reply> other_game = control.Call("load-model", {{"path", run.File("chess.azw")}});
  EXPECT_EQ(other_game.status().code(), StatusCode::kFailedPrecondition)
      << other_game.status().ToString();
  // The refusals changed nothing.
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 1);
  const std::vector<TestLeaf<ConnectFour>> leaves = ConnectFourLeaves(4);
  Submit<ConnectFour>(client, leaves);
  ExpectValidAnswers<ConnectFour>(leaves, ReceiveAll<ConnectFour>(client, leaves), 7);
  const nlohmann::json status = control.Call("status")->body;
  EXPECT_EQ(status["model_loads"], 2);
  EXPECT_EQ(status["net"], TinyNet(nn::NetConfig::ConnectFour()).ToString());
  EXPECT_EQ(status["model_load_failures"], 2);
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, MalformedControlRequestsGetErrorRepliesAndServingGoesOn) {
  RunDir run;
  Service evaluator(run, "az-evaluator", "evaluator", EvaluatorArgs(run, "connect4"));
  ASSERT_FALSE(WaitForStatus(run, "evaluator").empty()) << evaluator.Log();
  ipc::Client control = ControlClient(run, "evaluator");
  const auto code_of = [&](nlohmann::json request) {
    Result<ipc::Reply> reply = control.Exchange(std::move(request));
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    return reply.ok() ? ipc::ReplyStatus(reply->body).code() : StatusCode::kInternal;
  };
  EXPECT_EQ(code_of({{"cmd", "no-such-command"}}), StatusCode::kNotFound);
  EXPECT_EQ(code_of({{"cmd", "load-model"}}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code_of({{"cmd", "load-model"}, {"path", 12}}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code_of({{"cmd", "load-model"}, {"path", ""}}), StatusCode::kInvalidArgument);
  // Bytes that are not JSON at all, and JSON that is not a request, on a raw socket.
  for (std::string_view bytes : {"{not json", "[1, 2]", "{\"cmd\": 5}"}) {
    const nlohmann::json error = RawRequest(run, "evaluator", bytes);
    EXPECT_EQ(error["ok"], false) << bytes;
    EXPECT_EQ(error["error"]["code"], "INVALID_ARGUMENT") << bytes;
  }
  // Still serving both the control socket and the channel.
  EXPECT_TRUE(control.Call("status").ok());
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 0);
  const std::vector<TestLeaf<ConnectFour>> leaves = ConnectFourLeaves(3);
  Submit<ConnectFour>(client, leaves);
  ExpectValidAnswers<ConnectFour>(leaves, ReceiveAll<ConnectFour>(client, leaves), 0);
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, MalformedEvalRequestsAreAnsweredAsInvalid) {
  RunDir run;
  Service evaluator(run, "az-evaluator", "evaluator", EvaluatorArgs(run, "connect4"));
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 0);
  std::vector<TestLeaf<ConnectFour>> leaves = ConnectFourLeaves(3);
  leaves[1].record.own |= 1ull << 17;  // column 3, row 4: a floating stone
  Submit<ConnectFour>(client, leaves);
  const auto answers = ReceiveAll<ConnectFour>(client, leaves);
  EXPECT_EQ(answers[0].header.status, static_cast<std::uint8_t>(EvalStatus::kOk));
  EXPECT_EQ(answers[1].header.status, static_cast<std::uint8_t>(EvalStatus::kInvalidRequest));
  EXPECT_EQ(answers[2].header.status, static_cast<std::uint8_t>(EvalStatus::kOk));
  const nlohmann::json status =
      StatusWhen(run, [](const nlohmann::json& s) { return s["requests"] == 3; });
  EXPECT_EQ(status["invalid_requests"], 1);
  EXPECT_NE(evaluator.Log().find("floating"), std::string::npos) << evaluator.Log();
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

template <typename G>
bool SameBits(const Answer<G>& a, const Answer<G>& b) {
  return a.priors.size() == b.priors.size() &&
         std::memcmp(a.priors.data(), b.priors.data(), a.priors.size() * sizeof(float)) == 0 &&
         std::memcmp(a.header.wdl.data(), b.header.wdl.data(), sizeof a.header.wdl) == 0 &&
         a.header.model_version == b.header.model_version;
}

TEST(EvaluatorServiceTest, RepeatedPositionsAreAnsweredFromTheCacheWithTheNetworksNumbers) {
  RunDir run;
  WriteNetwork(run.File("m3.azw"), TinyNet(nn::NetConfig::ConnectFour()), 3, 3);
  Service evaluator(run, "az-evaluator", "evaluator",
                    EvaluatorArgs(run, "connect4", {"--model", run.File("m3.azw")}));
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 0);
  const std::vector<TestLeaf<ConnectFour>> leaves = DistinctConnectFourLeaves(12);
  Submit<ConnectFour>(client, leaves, 0);
  const auto first = ReceiveAll<ConnectFour>(client, leaves, 0);
  ExpectValidAnswers<ConnectFour>(leaves, first, 3);
  Submit<ConnectFour>(client, leaves, 100);
  const auto again = ReceiveAll<ConnectFour>(client, leaves, 100);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_TRUE(SameBits(again[i], first[i])) << "leaf " << i;
  }
  nlohmann::json status =
      StatusWhen(run, [](const nlohmann::json& s) { return s["requests"] == 24; });
  EXPECT_EQ(status["positions_evaluated"], 12) << "the second time, none reached the network";
  EXPECT_EQ(status["cache_lookups"], 24);
  EXPECT_EQ(status["cache_hits"], 12);
  EXPECT_DOUBLE_EQ(status["cache_hit_rate"].get<double>(), 0.5);
  EXPECT_EQ(status["cache_size"], 262144);
  EXPECT_EQ(status["cache_entries"], 12);

  // The same positions with another legal list (backwards): misses, answered by the network.
  std::vector<TestLeaf<ConnectFour>> reversed = leaves;
  for (auto& leaf : reversed) {
    std::reverse(leaf.moves.begin(), leaf.moves.end());
    std::reverse(leaf.indices.begin(), leaf.indices.end());
  }
  const std::size_t palindromes = std::count_if(
      leaves.begin(), leaves.end(), [](const auto& l) { return l.indices.size() == 1; });
  Submit<ConnectFour>(client, reversed, 200);
  ExpectValidAnswers<ConnectFour>(reversed, ReceiveAll<ConnectFour>(client, reversed, 200), 3);
  status = StatusWhen(run, [](const nlohmann::json& s) { return s["requests"] == 36; });
  EXPECT_EQ(status["cache_hits"], 12 + palindromes);
  EXPECT_EQ(status["positions_evaluated"], 24 - palindromes);

  // The metrics say the same.
  Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(run.path(), "evaluator");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  // Counters move with each batch, gauges a few times a second.
  const std::vector<std::string> lines = {
      "az_evaluator_cache_hits_total " + std::to_string(12 + palindromes),
      "az_evaluator_cache_lookups_total 36", "az_evaluator_cache_capacity 262144",
      "az_evaluator_cache_entries 12"};  // a record asked with another list replaces its entry
  std::string metrics;
  EXPECT_TRUE(WaitFor([&] {
    metrics = ipc::testing::HttpGet(info->metrics_port, "/metrics");
    return std::all_of(lines.begin(), lines.end(), [&](const std::string& line) {
      return metrics.find("\n" + line + "\n") != std::string::npos;
    });
  })) << metrics;
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, ALoadedModelIsNeverAnsweredFromTheOldOnesCache) {
  RunDir run;
  // Two files with the same model version and other weights: the version alone cannot tell them
  // apart, the load does.
  WriteNetwork(run.File("a.azw"), TinyNet(nn::NetConfig::ConnectFour()), 4, 4);
  WriteNetwork(run.File("b.azw"), TinyNet(nn::NetConfig::ConnectFour()), 5, 4);
  Service evaluator(
      run, "az-evaluator", "evaluator",
      EvaluatorArgs(run, "connect4", {"--model", run.File("a.azw"), "--model-events-from", ""}));
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 0);
  const std::vector<TestLeaf<ConnectFour>> leaves = DistinctConnectFourLeaves(10);
  Submit<ConnectFour>(client, leaves, 0);
  const auto from_a = ReceiveAll<ConnectFour>(client, leaves, 0);
  Submit<ConnectFour>(client, leaves, 100);
  (void)ReceiveAll<ConnectFour>(client, leaves, 100);
  StatusWhen(run, [](const nlohmann::json& s) { return s["cache_hits"] == 10; });

  ipc::Client control = ControlClient(run, "evaluator");
  Result<ipc::Reply> loaded = control.Call("load-model", {{"path", run.File("b.azw")}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->body["model_version"], 4);
  Submit<ConnectFour>(client, leaves, 200);
  const auto from_b = ReceiveAll<ConnectFour>(client, leaves, 200);
  ExpectValidAnswers<ConnectFour>(leaves, from_b, 4);
  bool differ = false;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    for (std::size_t m = 0; m < from_b[i].priors.size(); ++m) {
      differ |= std::fabs(from_b[i].priors[m] - from_a[i].priors[m]) > 1e-6f;
    }
  }
  EXPECT_TRUE(differ) << "b's answers, not a's cached ones";
  const nlohmann::json status =
      StatusWhen(run, [](const nlohmann::json& s) { return s["requests"] == 30; });
  EXPECT_EQ(status["cache_hits"], 10);
  EXPECT_EQ(status["positions_evaluated"], 20);
  EXPECT_GE(status["cache_invalidations"].get<int>(), 1);
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, WithCacheSizeZeroEveryRequestGoesThroughTheNetwork) {
  RunDir run;
  Service evaluator(run, "az-evaluator", "evaluator",
                    EvaluatorArgs(run, "connect4", {"--cache-size", "0"}));
  shm::RequestClient client = AttachWorker<ConnectFour>(run, 0);
  const std::vector<TestLeaf<ConnectFour>> leaves = DistinctConnectFourLeaves(12);
  Submit<ConnectFour>(client, leaves, 0);
  const auto first = ReceiveAll<ConnectFour>(client, leaves, 0);
  Submit<ConnectFour>(client, leaves, 100);
  const auto again = ReceiveAll<ConnectFour>(client, leaves, 100);
  ExpectValidAnswers<ConnectFour>(leaves, again, 0);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    for (std::size_t m = 0; m < first[i].priors.size(); ++m) {
      EXPECT_NEAR(again[i].priors[m], first[i].priors[m], 1e-5);
    }
  }
  const nlohmann::json status =
      StatusWhen(run, [](const nlohmann::json& s) { return s["requests"] == 24; });
  EXPECT_EQ(status["positions_evaluated"], 24);
  EXPECT_EQ(status["cache_lookups"], 0);
  EXPECT_EQ(status["cache_hits"], 0);
  EXPECT_EQ(status["cache_size"], 0);
  EXPECT_EQ(status["cache_hit_rate"], 0.0);
  EXPECT_NE(evaluator.Log().find("cache of answers: off"), std::string::npos) << evaluator.Log();
  EXPECT_EQ(evaluator.Terminate(), 0) << evaluator.Log();
}

TEST(EvaluatorServiceTest, BadConfigurationsExitWithCode2AndSayWhy) {
  RunDir run;
  WriteNetwork(run.File("chess.azw"), TinyNet(nn::NetConfig::ChessSmall()), 1, 1);
  std::ofstream(run.File("junk.azw")) << "not a network";
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {EvaluatorArgs(run, "go"), "--game"},
      {EvaluatorArgs(run, "connect4", {"--request-capacity", "1000"}), "power of two"},
      {EvaluatorArgs(run, "connect4", {"--cache-size", "1000"}), "--cache-size"},
      {EvaluatorArgs(run, "connect4", {"--model", run.File("missing.azw")}), "missing.azw"},
      {EvaluatorArgs(run, "connect4", {"--model", run.File("junk.azw")}), "junk.azw"},
      {EvaluatorArgs(run, "connect4", {"--model", run.File("chess.azw")}), "not a connect4"},
  };
  for (const Case& c : cases) {
    Service evaluator(run, "az-evaluator", "bad", c.args);
    EXPECT_EQ(evaluator.WaitExit(), 2) << evaluator.Log();
    EXPECT_NE(evaluator.Log().find(c.expected), std::string::npos) << evaluator.Log();
  }
}

}  // namespace
}  // namespace az::service::testing
