// Self-play throughput of the real processes: az-evaluator (fresh default network, CPU) and
// az-selfplay workers in a temporary run directory, on this machine's cores.
//
//   build/bin/selfplay_bench                    # about 3 minutes
//   build/bin/selfplay_bench --benchmark_filter=game:1
//
// BM_SelfPlay/game/games/simulations/leaves/groups/stall_us/tiny/fraction%/cache/workers/max_batch:
// after a warm-up, the workers' counters (their `status`) are read twice, `kWindow` apart; the
// rates are the differences over the window, summed over the workers. game 0 = chess (6x64
// network), 1 = Connect Four (its preset); tiny 1 = a 1x8 network instead, 2 = chess's full 15x192
// network (GPU rows); cache = the evaluator's --cache-size (0: off); workers = az-selfplay
// processes, each with `games` games; max_batch = the evaluator's --max-batch. Counters: games/s,
// moves/s, sims/s (playouts backed up), evals/s (positions through the network), answered/s (leaves
// the evaluator answered, from the network or its cache), hit% (of the cache's lookups), mean_batch
// (the evaluator's network batches).
//
//   build/bin/selfplay_bench --benchmark_filter='cache:'   # the cache off and on, ~3 minutes
//
// With AZ_BENCH_DEVICE=cuda (tests/bench/bench_options.h) the evaluator runs on the GPU and the
// rows are a GPU box's: chess with 1, 4 and 12 workers, the full network, Connect Four, two
// --max-batch:
//   AZ_BENCH_DEVICE=cuda build/bin/selfplay_bench

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/games/connect4/connect_four_sample.h"
#include "core/nn/network.h"
#include "core/sample/chess_sample.h"
#include "ipc/client.h"
#include "ipc/endpoint.h"
#include "services/common/service_util.h"
#include "services/replay/sample_ring.h"
#include "shm/segment.h"
#include "tests/bench/bench_options.h"
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
  // range(6): 0 the game's preset network, 1 a 1x8 network, 2 chess's 15x192.
  const std::int64_t net_choice = state.range(6);
  // range(7): the stall fraction in percent.
  const std::string fraction = std::to_string(state.range(7) / 100.0);
  const std::string cache_size = std::to_string(state.range(8));
  const int workers = static_cast<int>(state.range(9));
  const std::string max_batch = std::to_string(state.range(10));
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
                                               "",
                                               "--device",
                                               bench::BenchDeviceFlag(),
                                               "--max-batch",
                                               max_batch};
    if (net_choice != 0) {
      nn::NetConfig net =
          game == "chess" ? nn::NetConfig::ChessSmall() : nn::NetConfig::ConnectFour();
      if (net_choice == 1) {
        // A 1x8 network: an evaluator many times faster, as a GPU would be, so that the worker's
        // own time shows.
        net.blocks = 1;
        net.filters = 8;
        net.value_hidden = 16;
      } else {
        net = nn::NetConfig::ChessFull();
      }
      const Status saved = bench::WriteFreshNetwork(net, dir.path() + "/net.azw", 1);
      if (!saved.ok()) state.SkipWithError(saved.ToString().c_str());
      evaluator_args.push_back("--model");
      evaluator_args.push_back(dir.path() + "/net.azw");
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
    std::vector<std::unique_ptr<ipc::testing::ChildProcess>> worker_processes;
    for (int w = 0; w < workers; ++w) {
      const std::string log = dir.path() + "/selfplay-" + std::to_string(w) + ".log";
      const std::vector<std::string> args = {ipc::testing::BinaryPath("az-selfplay"),
                                             "--run-dir",
                                             dir.path(),
                                             "--game",
                                             game,
                                             "--games",
                                             games,
                                             "--simulations",
                                             simulations,
                                             "--leaves-per-game",
                                             leaves,
                                             "--groups",
                                             groups,
                                             "--metrics-port",
                                             "-1",
                                             "--log-interval",
                                             "0",
                                             "--seed",
                                             std::to_string(1 + w),
                                             "--worker-id",
                                             std::to_string(w)};
      worker_processes.push_back(std::make_unique<ipc::testing::ChildProcess>(args, log, log));
    }
    // The workers' statuses, or an error if any is missing.
    const auto worker_statuses = [&]() -> Result<std::vector<nlohmann::json>> {
      std::vector<nlohmann::json> statuses;
      for (int w = 0; w < workers; ++w) {
        AZ_ASSIGN_OR_RETURN(nlohmann::json status,
                            ServiceStatus(dir.path(), "selfplay-" + std::to_string(w)));
        statuses.push_back(std::move(status));
      }
      return statuses;
    };
    const bool playing = ipc::testing::WaitFor(
        [&] {
          Result<std::vector<nlohmann::json>> s = worker_statuses();
          if (!s.ok()) return false;
          for (const nlohmann::json& status : *s) {
            if (status["phase"] != "playing") return false;
          }
          return true;
        },
        seconds(120));
    if (!playing) {
      state.SkipWithError("the workers never started playing");
      done.store(true);
      drain.join();
      break;
    }
    std::this_thread::sleep_for(kWarmUp);
    const Result<std::vector<nlohmann::json>> w0 = worker_statuses();
    const Result<nlohmann::json> e0 = ServiceStatus(dir.path(), "evaluator");
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kWindow);
    const Result<std::vector<nlohmann::json>> w1 = worker_statuses();
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
    // Summed over the workers.
    const auto worker_rate = [&](const char* key) {
      double sum = 0;
      for (int w = 0; w < workers; ++w) sum += rate((*w0)[w], (*w1)[w], key);
      return sum;
    };
    state.counters["games/s"] = worker_rate("games_finished");
    state.counters["moves/s"] = worker_rate("moves");
    state.counters["sims/s"] = worker_rate("simulations_total");
    state.counters["evals/s"] = rate(*e0, *e1, "positions_evaluated");
    state.counters["answered/s"] = rate(*e0, *e1, "requests");
    const double lookups = rate(*e0, *e1, "cache_lookups");
    state.counters["hit%"] = lookups > 0 ? 100 * rate(*e0, *e1, "cache_hits") / lookups : 0;
    // The share of a worker's thread spent searching (the rest: waiting for answers), the mean
    // over the workers.
    state.counters["search%"] = 100 * worker_rate("search_seconds") / workers;
    const double batches = (*e1)["batches"].get<double>() - (*e0)["batches"].get<double>();
    const double batched = ((*e1)["requests"].get<double>() - (*e1)["cache_hits"].get<double>()) -
                           ((*e0)["requests"].get<double>() - (*e0)["cache_hits"].get<double>());
    state.counters["mean_batch"] = batches > 0 ? batched / batches : 0;
    for (auto& worker : worker_processes) worker->Signal(SIGTERM);
    evaluator.Signal(SIGTERM);
    for (auto& worker : worker_processes) worker->Wait();
    evaluator.Wait();
    done.store(true);
    drain.join();
    (void)shm::Segment::RemoveAll(*RunShmScope(dir.path(), ""));
  }
}

void Args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"game", "games", "sims", "leaves", "groups", "stall_us", "tiny", "fraction%",
               "cache", "workers", "max_batch"})
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kSecond);
}

// The CPU rows (docs/PERFORMANCE.md), or with AZ_BENCH_DEVICE=cuda a GPU box's: chess's default
// (64 games a worker, 100 simulations, adaptive stall, the cache) with 1, 4 and 12 workers, and
// with 12 workers at max-batch 256 and 1024 for chess, chess's full network and Connect Four.
void RegisterRows() {
  const auto row = [](std::vector<std::int64_t> args) {
    benchmark::RegisterBenchmark("BM_SelfPlay", BM_SelfPlay)->Apply(Args)->Args(args);
  };
  if (bench::BenchOnCuda()) {
    for (std::int64_t workers : {1, 4, 12}) {
      row({0, 64, 100, 1, 2, 300, 0, 5, 262144, workers, 256});
    }
    row({0, 64, 100, 1, 2, 300, 0, 5, 262144, 12, 1024});
    row({0, 64, 100, 1, 2, 300, 2, 5, 262144, 12, 256});
    row({0, 64, 100, 1, 2, 300, 2, 5, 262144, 12, 1024});
    row({1, 64, 64, 1, 2, 300, 0, 5, 262144, 12, 256});
    row({1, 64, 64, 1, 2, 300, 0, 5, 262144, 12, 1024});
    return;
  }
  // Connect Four: the default (64 games, 64 simulations, 1 leaf a game, 2 groups), then one knob at
  // a time: groups, leaves per game, games, the evaluator's stall.
  row({1, 64, 64, 1, 2, 300, 0, 0, 0, 1, 256});
  row({1, 64, 64, 1, 1, 300, 0, 0, 0, 1, 256});
  row({1, 64, 64, 2, 2, 300, 0, 0, 0, 1, 256});
  row({1, 64, 64, 4, 2, 300, 0, 0, 0, 1, 256});
  row({1, 256, 64, 1, 2, 300, 0, 0, 0, 1, 256});
  row({1, 64, 64, 1, 2, 30, 0, 0, 0, 1, 256});
  row({1, 64, 64, 1, 2, 3000, 0, 0, 0, 1, 256});
  // With a 1x8 network (a fast evaluator): groups and leaves per game again.
  row({1, 64, 64, 1, 2, 300, 1, 0, 0, 1, 256});
  row({1, 64, 64, 1, 1, 300, 1, 0, 0, 1, 256});
  row({1, 64, 64, 2, 2, 300, 1, 0, 0, 1, 256});
  row({1, 256, 64, 1, 2, 300, 1, 0, 0, 1, 256});
  row({1, 64, 64, 1, 2, 30, 1, 0, 0, 1, 256});
  row({1, 64, 64, 1, 2, 100, 1, 0, 0, 1, 256});
  row({1, 64, 64, 1, 2, 1000, 1, 0, 0, 1, 256});
  // The default adaptive stall, both networks, and chess's default (64 games, 100 simulations).
  row({1, 64, 64, 1, 2, 300, 0, 5, 0, 1, 256});
  row({1, 64, 64, 1, 2, 300, 1, 5, 0, 1, 256});
  row({1, 256, 64, 1, 2, 300, 1, 5, 0, 1, 256});
  row({0, 64, 100, 1, 2, 300, 0, 5, 0, 1, 256});
  // The evaluator's cache of answers (its default size, 2^18 entries) against none, on the
  // defaults: Connect Four with both networks, and chess.
  row({1, 64, 64, 1, 2, 300, 0, 5, 262144, 1, 256});
  row({1, 64, 64, 1, 2, 300, 1, 5, 262144, 1, 256});
  row({0, 64, 100, 1, 2, 300, 0, 5, 262144, 1, 256});
}

}  // namespace
}  // namespace az::service

int main(int argc, char** argv) {
  return az::bench::RunBenchmarks(argc, argv, az::service::RegisterRows);
}
