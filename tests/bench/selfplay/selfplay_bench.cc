// Self-play throughput of the real processes: az-evaluator (fresh default network, CPU) and one
// az-selfplay worker in a temporary run directory, on this machine's cores.
//
//   build/bin/selfplay_bench                    # about 3 minutes
//   build/bin/selfplay_bench --benchmark_filter=game:1
//
// BM_SelfPlay/game/games/simulations/leaves/groups/stall_us/tiny/fraction%/cache: after a warm-up,
// the worker's counters (its `status`) are read twice, `kWindow` apart; the rates are the
// differences over the window. game 0 = chess (6x64 network), 1 = Connect Four (4x32); tiny 1 = a
// 1x8 network instead; cache = the evaluator's --cache-size (0: off). Counters: games/s, moves/s,
// sims/s (playouts backed up), evals/s (positions through the network), answered/s (leaves the
// evaluator answered, from the network or its cache), hit% (of the cache's lookups), mean_batch
// (the evaluator's network batches).
//
//   build/bin/selfplay_bench --benchmark_filter='cache:'   # the cache off and on, ~3 minutes

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/nn/network.h"
#include "core/sample/chess_sample.h"
#include "core/games/connect4/connect_four_sample.h"
#include "ipc/client.h"
#include "ipc/endpoint.h"
#include "services/common/service_util.h"
#include "services/replay/sample_ring.h"
#include "shm/segment.h"
#include "tests/ipc/test_util.h"

namespace az::service {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr auto kWarmUp = seconds(5);
constexpr auto kWindow = seconds(20);

Result<nlohmann::json> ServiceStatus(const std::string& run_dir, const std::string& service) {
  AZ_ASSIGN_OR_RETURN(std::string endpoint, ipc::ControlEndpoint(run_dir, service));
  AZ_ASSIGN_OR_RETURN(
      ipc::Client client,
      ipc::Client::Create(
          {.endpoint = endpoint, .attempt_timeout = milliseconds(2000), .max_attempts = 2}));
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply, client.Call("status"));
  return reply.body;
}

void BM_SelfPlay(benchmark::State& state) {
  const std::string game = state.range(0) == 0 ? "chess" : "connect4";
  const std::string games = std::to_string(state.range(1));
  const std::string simulations = std::to_string(state.range(2));
  const std::string leaves = std::to_string(state.range(3));
  const std::string groups = std::to_string(state.range(4));
  const std::string stall_us = std::to_string(state.range(5));
  const bool tiny = state.range(6) != 0;
  // range(7): the stall fraction in percent.
  const std::string fraction = std::to_string(state.range(7) / 100.0);
  const std::string cache_size = std::to_string(state.range(8));
  for (auto _ : state) {
    ipc::testing::TempDir dir;
    std::vector<std::string> evaluator_args = {ipc::testing::BinaryPath("az-evaluator"),
                                               "--run-dir",
                                               dir.path(),
                                               "--game",
                                               game,
                                               "--stall-us",
                                               stall_us,
                                               "--stall-fraction",
                                               fraction,
                                               "--cache-size",
                                               cache_size,
                                               "--metrics-port",
                                               "-1",
                                               "--log-interval",
                                               "0",
                                               "--model-events-from",
                                               ""};
    if (tiny) {
      // A 1x8 network: an evaluator many times faster, as a GPU would be, so that the worker's
      // own time shows.
      nn::NetConfig net =
          game == "chess" ? nn::NetConfig::ChessSmall() : nn::NetConfig::ConnectFour();
      net.blocks = 1;
      net.filters = 8;
      net.value_hidden = 16;
      nn::NetworkOptions options{.net = net};
      options.runtime.device = nn::DeviceChoice::kCpu;
      const Status saved =
          (*nn::Network::Create(options))->SaveWeights(dir.path() + "/tiny.azw", 1);
      if (!saved.ok()) state.SkipWithError(saved.ToString().c_str());
      evaluator_args.push_back("--model");
      evaluator_args.push_back(dir.path() + "/tiny.azw");
    }
    ipc::testing::ChildProcess evaluator(evaluator_args, dir.path() + "/evaluator.log",
                                         dir.path() + "/evaluator.log");
    // The replay daemon's part: take the samples out of the ring, or the worker waits for room.
    const std::uint32_t sample_bytes =
        game == "chess" ? sizeof(sample::ChessSample) : sizeof(sample::ConnectFourSample);
    Result<shm::Ring> ring =
        replayd::OpenSampleRing({.run_dir = dir.path(), .record_bytes = sample_bytes});
    if (!ring.ok()) {
      state.SkipWithError(ring.status().ToString().c_str());
      break;
    }
    std::atomic<bool> done{false};
    std::thread drain([&] {
      std::vector<std::byte> buffer(64 * sample_bytes);
      while (!done.load()) (void)ring->Pop(buffer, milliseconds(100));
    });
    ipc::testing::ChildProcess worker(
        {ipc::testing::BinaryPath("az-selfplay"), "--run-dir", dir.path(), "--game", game,
         "--games", games, "--simulations", simulations, "--leaves-per-game", leaves, "--groups",
         groups, "--metrics-port", "-1", "--log-interval", "0", "--seed", "1"},
        dir.path() + "/selfplay.log", dir.path() + "/selfplay.log");
    const bool playing = ipc::testing::WaitFor(
        [&] {
          Result<nlohmann::json> s = ServiceStatus(dir.path(), "selfplay-0");
          return s.ok() && (*s)["phase"] == "playing";
        },
        seconds(60));
    if (!playing) {
      state.SkipWithError("the worker never started playing");
      done.store(true);
      drain.join();
      break;
    }
    std::this_thread::sleep_for(kWarmUp);
    const Result<nlohmann::json> w0 = ServiceStatus(dir.path(), "selfplay-0");
    const Result<nlohmann::json> e0 = ServiceStatus(dir.path(), "evaluator");
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kWindow);
    const Result<nlohmann::json> w1 = ServiceStatus(dir.path(), "selfplay-0");
    const Result<nlohmann::json> e1 = ServiceStatus(dir.path(), "evaluator");
    const double seconds_elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!w0.ok() || !w1.ok() || !e0.ok() || !e1.ok()) {
      state.SkipWithError("status failed");
      done.store(true);
      drain.join();
      break;
    }
    state.SetIterationTime(seconds_elapsed);
    const auto rate = [&](const nlohmann::json& a, const nlohmann::json& b, const char* key) {
      return (b[key].get<double>() - a[key].get<double>()) / seconds_elapsed;
    };
    state.counters["games/s"] = rate(*w0, *w1, "games_finished");
    state.counters["moves/s"] = rate(*w0, *w1, "moves");
    state.counters["sims/s"] = rate(*w0, *w1, "simulations_total");
    state.counters["evals/s"] = rate(*e0, *e1, "positions_evaluated");
    state.counters["answered/s"] = rate(*e0, *e1, "requests");
    const double lookups = rate(*e0, *e1, "cache_lookups");
    state.counters["hit%"] = lookups > 0 ? 100 * rate(*e0, *e1, "cache_hits") / lookups : 0;
    // The share of the worker's thread spent searching (the rest: waiting for answers).
    state.counters["search%"] = 100 * rate(*w0, *w1, "search_seconds");
    const double batches = (*e1)["batches"].get<double>() - (*e0)["batches"].get<double>();
    const double batched = ((*e1)["requests"].get<double>() - (*e1)["cache_hits"].get<double>()) -
                           ((*e0)["requests"].get<double>() - (*e0)["cache_hits"].get<double>());
    state.counters["mean_batch"] = batches > 0 ? batched / batches : 0;
    worker.Signal(SIGTERM);
    evaluator.Signal(SIGTERM);
    worker.Wait();
    evaluator.Wait();
    done.store(true);
    drain.join();
    (void)shm::Segment::RemoveAll(*RunShmScope(dir.path(), ""));
  }
}

void Args(benchmark::internal::Benchmark* b) {
  b->ArgNames(
       {"game", "games", "sims", "leaves", "groups", "stall_us", "tiny", "fraction%", "cache"})
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
}

// Connect Four: the default (64 games, 64 simulations, 1 leaf a game, 2 groups), then one knob at
// a time: groups, leaves per game, games, the evaluator's stall.
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 300, 0, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 1, 300, 0, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 2, 2, 300, 0, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 4, 2, 300, 0, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 256, 64, 1, 2, 300, 0, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 30, 0, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 3000, 0, 0, 0});
// With a 1x8 network (a fast evaluator): groups and leaves per game again.
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 300, 1, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 1, 300, 1, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 2, 2, 300, 1, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 256, 64, 1, 2, 300, 1, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 30, 1, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 100, 1, 0, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 1000, 1, 0, 0});
// The default adaptive stall, both networks, and chess's default (64 games, 100 simulations).
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 300, 0, 5, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 300, 1, 5, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 256, 64, 1, 2, 300, 1, 5, 0});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({0, 64, 100, 1, 2, 300, 0, 5, 0});
// The evaluator's cache of answers (its default size, 2^18 entries) against none, on the defaults:
// Connect Four with both networks, and chess.
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 300, 0, 5, 262144});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({1, 64, 64, 1, 2, 300, 1, 5, 262144});
BENCHMARK(BM_SelfPlay)->Apply(Args)->Args({0, 64, 100, 1, 2, 300, 0, 5, 262144});

}  // namespace
}  // namespace az::service
