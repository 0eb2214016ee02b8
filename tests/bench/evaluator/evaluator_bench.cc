// The evaluator's throughput against the network's own, and what the eval channel costs.
//
//   build/bin/evaluator_bench                                   # about 2 minutes
//   build/bin/evaluator_bench --benchmark_filter=ChannelRoundTrip
//
// BM_NetworkForward/game/batch: nn::Network::Forward (the facade the evaluator calls) on `batch`
//   records of real positions, encoded by the callback straight into the batch tensor, with the
//   legal-move lists: the network's own rate in this process (1 intra-op thread, the evaluator's
//   default). game 0 = chess (6x64), 1 = Connect Four (its preset), 2 = chess's full 15x192
//   network (GPU rows only); fresh networks.
// BM_EvaluatorRing/game/batch: the real az-evaluator as a child process (--max-batch batch, the
//   same default network) answering through the eval channel. This process keeps two batches in
//   flight (it submits batch k+1, then waits for batch k), so the evaluator always has a full batch
//   waiting, as it has with many workers. positions/s over positions/s of BM_NetworkForward is
//   the share of the network's rate that survives the ring path (requests, validation, answers).
// With AZ_BENCH_DEVICE=cuda (tests/bench/bench_options.h) both run on the GPU (fp16 autocast, the
// evaluator's
//   default there), on batches of 256 and 1024 of all three networks, each for at least 3 s:
//   AZ_BENCH_DEVICE=cuda build/bin/evaluator_bench --benchmark_filter='Network|Evaluator'
// BM_ChannelRoundTrip/game: the channel alone, one thread: submit 256 requests, take them as the
//   evaluator does, answer them, receive the answers. game 0 = chess-sized records (704 + 904 B),
//   1 = Connect Four-sized (56 + 64 B), 2 = Connect Four leaves in a chess-sized channel (what one
//   shared channel would cost Connect Four).

#include <benchmark/benchmark.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
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
#include "core/nn/network.h"
#include "services/common/eval_protocol.h"
#include "services/common/service_util.h"
#include "shm/request_channel.h"
#include "shm/segment.h"
#include "tests/bench/bench_options.h"
#include "tests/ipc/test_util.h"
#include "tests/services/evaluator/random_leaves.h"

namespace az::service {
namespace {

using Chess = games::Chess;
using ConnectFour = games::ConnectFour;
using std::chrono::milliseconds;
using std::chrono::seconds;

template <typename G>
std::vector<testing::RandomLeaf<G>> Leaves(int n) {
  if constexpr (std::is_same_v<G, Chess>) {
    return testing::RandomChessLeaves(n, /*seed=*/1, /*max_ply=*/120);
  } else {
    return testing::RandomConnectFourLeaves(n, /*seed=*/1);
  }
}

template <typename G>
void Encode(const typename G::Record& record, float* dst) {
  if constexpr (std::is_same_v<G, Chess>) {
    encoding::EncodePlanes(record, std::span<float>(dst, encoding::kInputFloats));
  } else {
    games::EncodeConnectFour(record, std::span<float>(dst, games::kConnectFourInputSize));
  }
}

template <typename G>
void NetworkForward(benchmark::State& state, int batch, const nn::NetConfig& net) {
  nn::NetworkOptions options;
  options.net = net;
  options.runtime.device = bench::BenchDevice();
  options.runtime.input_layout =
      std::is_same_v<G, Chess> ? nn::InputLayout::kNhwc : nn::InputLayout::kNchw;
  std::unique_ptr<nn::Network> network = std::move(nn::Network::Create(options)).value();
  const std::vector<testing::RandomLeaf<G>> leaves = Leaves<G>(batch);
  std::vector<std::int32_t> offsets = {0};
  std::vector<std::int32_t> actions;
  for (const testing::RandomLeaf<G>& leaf : leaves) {
    actions.insert(actions.end(), leaf.indices.begin(), leaf.indices.end());
    offsets.push_back(static_cast<std::int32_t>(actions.size()));
  }
  std::vector<float> priors(actions.size());
  std::vector<float> wdl(static_cast<std::size_t>(batch) * 3);
  nn::BatchInput input;
  input.n = batch;
  input.encode = [&](int i, float* dst) { Encode<G>(leaves[i].record, dst); };
  const nn::LegalMovesView legal{offsets, actions};
  (void)network->Forward(input, {.priors = priors.data(), .wdl = wdl.data()}, &legal);  // warm-up
  for (auto _ : state) {
    const Status status =
        network->Forward(input, {.priors = priors.data(), .wdl = wdl.data()}, &legal);
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_NetworkForward(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(1));
  if (state.range(0) == 1) {
    NetworkForward<ConnectFour>(state, batch, bench::BenchNet(1));
  } else {
    NetworkForward<Chess>(state, batch, bench::BenchNet(state.range(0)));
  }
}

// `full`: chess's 15x192 network, which the evaluator loads from a weights file (a fresh
// evaluator's network is the game's preset).
template <typename G>
void EvaluatorRing(benchmark::State& state, int batch, bool full) {
  ipc::testing::TempDir dir;
  const shm::Scope scope = *RunShmScope(dir.path(), "");
  std::vector<std::string> args = {
      ipc::testing::BinaryPath("az-evaluator"), "--run-dir", dir.path(), "--game",
      std::string(GameKindName(GameKindOf<G>::kValue)), "--max-batch", std::to_string(batch),
      "--device", bench::BenchDeviceFlag(), "--metrics-port", "-1", "--log-interval", "2",
      "--model-events-from", "",
      // The same leaves go round every iteration: with the cache of answers every batch after the
      // first would be answered from it, not by the network.
      "--cache-size", "0"};
  if (batch > 256) {
    // Two batches in flight must fit the worker's response ring and the shared request ring.
    args.insert(args.end(), {"--response-capacity", std::to_string(std::bit_ceil(2U * batch)),
                             "--request-capacity", std::to_string(std::bit_ceil(4U * batch))});
  }
  if (full) {
    const std::string model = dir.path() + "/full.azw";
    const Status saved = bench::WriteFreshNetwork(nn::NetConfig::ChessFull(), model, 0);
    if (!saved.ok()) {
      state.SkipWithError(saved.ToString().c_str());
      return;
    }
    args.insert(args.end(), {"--model", model});
  }
  ipc::testing::ChildProcess evaluator(args, dir.path() + "/evaluator.log",
                                       dir.path() + "/evaluator.log");
  std::optional<shm::RequestClient> client;
  ipc::testing::WaitFor([&] {
    Result<shm::RequestClient> opened =
        shm::RequestClient::Open(scope, EvalChannelName(GameKindOf<G>::kValue),
                                 {.worker_id = 0,
                                  .request_bytes = sizeof(EvalRequest<G>),
                                  .response_bytes = sizeof(EvalResponse<G>)});
    if (opened.ok()) client.emplace(std::move(opened).value());
    return opened.ok();
  });
  if (!client) {
    state.SkipWithError("az-evaluator did not start");
    return;
  }
  const std::vector<testing::RandomLeaf<G>> leaves = Leaves<G>(batch);
  std::uint64_t next_id = 0;
  std::uint64_t received = 0;
  const auto submit = [&] {
    for (const testing::RandomLeaf<G>& leaf : leaves) {
      const mcts::Leaf<G> l = leaf.Leaf();
      (void)client->SubmitWith(next_id++, seconds(30),
                               [&](std::span<std::byte> p) { WriteEvalRequest<G>(l, 1, p); });
    }
  };
  const auto receive = [&](std::uint64_t until) {
    while (received < until) {
      Result<std::size_t> got =
          client->Receive(1024, seconds(60), [](std::uint64_t, std::span<const std::byte>) {});
      if (!got.ok()) return false;
      received += *got;
    }
    return true;
  };
  // Warm-up: the first batches build oneDNN's primitives.
  submit();
  receive(next_id);
  submit();  // one batch in flight ahead
  for (auto _ : state) {
    const std::uint64_t due = next_id;
    submit();
    if (!receive(due)) {
      state.SkipWithError("no answer in 60 s");
      break;
    }
  }
  receive(next_id);
  state.SetItemsProcessed(state.iterations() * batch);
  evaluator.Signal(SIGTERM);
  evaluator.Wait();
  if (std::getenv("AZ_BENCH_LOGS") != nullptr) {
    std::ifstream log(dir.path() + "/evaluator.log");
    std::cerr << log.rdbuf();
  }
  (void)shm::Segment::RemoveAll(scope);
}

void BM_EvaluatorRing(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(1));
  if (state.range(0) == 1) {
    EvaluatorRing<ConnectFour>(state, batch, false);
  } else {
    EvaluatorRing<Chess>(state, batch, state.range(0) == 2);
  }
}

// One thread plays both sides: 256 requests submitted, taken, answered and received.
template <typename G, typename Channel>
void ChannelRoundTrip(benchmark::State& state) {
  constexpr int kBatch = 256;
  ipc::testing::TempDir dir;
  const shm::Scope scope = *RunShmScope(dir.path(), "");
  const shm::ChannelSpec spec = EvalChannelSpec<Channel>(
      {.max_workers = 1, .request_capacity = 1024, .response_capacity = 1024});
  shm::RequestServer server = std::move(shm::RequestServer::Create(scope, "bench", spec)).value();
  shm::RequestClient client =
      std::move(shm::RequestClient::Open(scope, "bench",
                                         {.worker_id = 0,
                                          .request_bytes = spec.request_bytes,
                                          .response_bytes = spec.response_bytes}))
          .value();
  const std::vector<testing::RandomLeaf<G>> leaves = Leaves<G>(kBatch);
  std::vector<shm::Envelope> taken;
  std::vector<float> priors(kEvalMaxMoves<Channel>, 1.0f / 7);
  const float wdl[3] = {0.4f, 0.2f, 0.4f};
  std::uint64_t id = 0;
  for (auto _ : state) {
    for (const testing::RandomLeaf<G>& leaf : leaves) {
      const mcts::Leaf<G> l = leaf.Leaf();
      (void)client.SubmitWith(id++, seconds(1), [&](std::span<std::byte> p) {
        // A Connect Four leaf written into whatever slot size the channel has.
        WriteEvalRequest<G>(l, 1, p.first(sizeof(EvalRequest<G>)));
      });
    }
    taken.clear();
    while (taken.size() < kBatch) {
      server.TryTakeRequests(kBatch, [&](const shm::Envelope& e, std::span<const std::byte> p) {
        EvalRequest<G> request;
        benchmark::DoNotOptimize(ReadEvalRequest<G>(p.first(sizeof request), request).ok());
        taken.push_back(e);
      });
    }
    for (std::size_t i = 0; i < taken.size(); ++i) {
      const std::size_t n = leaves[i].indices.size();
      (void)server.RespondWith(taken[i], seconds(1), [&](std::span<std::byte> p) {
        WriteEvalResponse<G>(EvalStatus::kOk, 1, wdl, std::span<const float>(priors.data(), n),
                             p.first(sizeof(EvalResponse<G>)));
      });
    }
    std::size_t received = 0;
    while (received < kBatch) {
      received += client.TryReceive(kBatch, [&](std::uint64_t, std::span<const std::byte> p) {
        benchmark::DoNotOptimize(p.data());
      });
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["request_bytes"] = spec.request_bytes;
  state.counters["response_bytes"] = spec.response_bytes;
  (void)shm::Segment::RemoveAll(scope);
}

void BM_ChannelRoundTrip(benchmark::State& state) {
  switch (state.range(0)) {
    case 0: ChannelRoundTrip<Chess, Chess>(state); break;
    case 1: ChannelRoundTrip<ConnectFour, ConnectFour>(state); break;
    default: ChannelRoundTrip<ConnectFour, Chess>(state); break;
  }
}

void NetworkArgs(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
  b->ArgNames({"game", "batch"});
}

// The CPU rows keep fixed iteration counts (the figures of docs/PERFORMANCE.md); the GPU rows run
// each for at least 3 s.
void RegisterNetworkRows(const char* name, void (*function)(benchmark::State&)) {
  if (bench::BenchOnCuda()) {
    for (int game : {0, 1, 2}) {
      for (int batch : {256, 1024}) {
        benchmark::RegisterBenchmark(name, function)
            ->Apply(NetworkArgs)
            ->Args({game, batch})
            ->MinTime(3.0);
      }
    }
    return;
  }
  struct Row {
    int game, batch, iterations;
  };
  for (const Row& row : {Row{0, 64, 20}, Row{0, 256, 6}, Row{1, 64, 200}, Row{1, 256, 60}}) {
    benchmark::RegisterBenchmark(name, function)
        ->Apply(NetworkArgs)
        ->Args({row.game, row.batch})
        ->Iterations(row.iterations);
  }
}

BENCHMARK(BM_ChannelRoundTrip)->ArgName("game")->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace az::service

int main(int argc, char** argv) {
  return az::bench::RunBenchmarks(argc, argv, [] {
    az::service::RegisterNetworkRows("BM_NetworkForward", az::service::BM_NetworkForward);
    az::service::RegisterNetworkRows("BM_EvaluatorRing", az::service::BM_EvaluatorRing);
  });
}
