// The learner's costs: decoding a sampled batch (validation included), one training step, and the
// real az-learner against the real az-replay, to see what the service adds to the training step.
//
//   build/bin/learner_bench                                    # about 2 minutes
//   build/bin/learner_bench --benchmark_filter=Service
//
// BM_Decode/game/batch and BM_TrainStep/game/batch run in process (game 0 = chess 6x64 net,
// 1 = Connect Four's preset, 2 = chess's full 15x192 net: GPU rows only). BM_Service/game/batch
// starts az-replay with 20,000 random well-formed samples (chess: 4,000) and az-learner (1 thread),
// lets it warm up, then times `kSteps` steps from the learner's `status`: the iteration time is
// wall time per step; counters: samples/s, and the learner's and the daemon's CPU seconds per step
// (from /proc), so the service's overhead over BM_TrainStep shows as a ratio of numbers taken on
// the same box.
// With AZ_BENCH_DEVICE=cuda (tests/bench/bench_options.h) the training steps and the service run on
// the GPU in fp16 with loss scaling, on batches of 256 and 1024 of all three networks:
//   AZ_BENCH_DEVICE=cuda build/bin/learner_bench --benchmark_filter='TrainStep|Service'

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/nn/trainer.h"
#include "ipc/client.h"
#include "ipc/endpoint.h"
#include "services/learner/loop/training_batch.h"
#include "services/replay/random_samples.h"
#include "services/replay/replay_client.h"
#include "shm/scope.h"
#include "shm/segment.h"
#include "tests/bench/bench_options.h"
#include "tests/ipc/test_util.h"
#include "tests/services/learner/connect_four_samples.h"

namespace az::learner {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kSteps = 30;

service::GameKind Game(const benchmark::State& state) {
  return state.range(0) == 1 ? games::ConnectFour::kId : games::Chess::kId;
}

// `n` well-formed records of the game, back to back.
std::vector<std::byte> Records(service::GameKind game, std::size_t n) {
  if (game == games::ConnectFour::kId) {
    const auto samples = testing::RandomConnectFourSamples(n, 1, 0);
    const auto bytes = testing::Bytes(samples);
    return {bytes.begin(), bytes.end()};
  }
  const auto samples = replayd::RandomChessSamples(n, {.seed = 1});
  const auto bytes = std::as_bytes(std::span(samples));
  return {bytes.begin(), bytes.end()};
}

void BM_Decode(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(1));
  auto decoder = BatchDecoder::Create(Game(state));
  const std::vector<std::byte> records = Records(Game(state), n);
  const std::vector<double> weights(n, 1.0);
  DecodedBatch batch;
  for (auto _ : state) {
    const Status status = decoder->Decode(records, decoder->record_bytes(), weights, batch);
    benchmark::DoNotOptimize(status);
    benchmark::DoNotOptimize(batch.samples.data());
  }
  state.counters["samples/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Decode)->Args({0, 256})->Args({1, 256})->Unit(benchmark::kMicrosecond);

void BM_TrainStep(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(1));
  auto decoder = BatchDecoder::Create(Game(state));
  nn::TrainerOptions options;
  options.net = bench::BenchNet(state.range(0));
  options.runtime.device = bench::BenchDevice();
  options.runtime.input_layout = decoder->input_layout();
  auto trainer = nn::Trainer::Create(options);
  AZ_CHECK(trainer.ok(), trainer.status().ToString());
  const std::vector<std::byte> records = Records(Game(state), n);
  DecodedBatch batch;
  AZ_CHECK(
      decoder->Decode(records, decoder->record_bytes(), std::vector<double>(n, 1.0), batch).ok());
  // Warm-up: the first step sets up the kernels (on CUDA, cuDNN's choice of algorithms).
  AZ_CHECK((*trainer)->TrainStep(batch.samples, decoder->Encoder()).ok());
  for (auto _ : state) {
    auto result = (*trainer)->TrainStep(batch.samples, decoder->Encoder());
    AZ_CHECK(result.ok(), result.status().ToString());
  }
  state.counters["samples/s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// utime + stime of a process, in seconds.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::uint64_t LearnerStep(const std::string& run_dir) {
  Result<ipc::Client> client = ipc::Client::Create({.endpoint = "ipc://" + run_dir + "/learner.ctl",
                                                    .attempt_timeout = milliseconds(2000),
                                                    .max_attempts = 1});
  if (!client.ok()) return 0;
  Result<ipc::Reply> reply = client->Call("status");
  return reply.ok() ? reply->body.value("step", std::uint64_t{0}) : 0;
}

void BM_Service(benchmark::State& state) {
  const service::GameKind game = Game(state);
  const std::string batch = std::to_string(state.range(1));
  const bool chess = game == games::Chess::kId;
  double learner_cpu = 0, replay_cpu = 0, steps = 0;
  for (auto _ : state) {
    ipc::testing::TempDir dir;
    // A scope of its own for the daemon's sample ring, removed afterwards.
    static int runs = 0;
    const std::string scope =
        "shm:azlb-" + std::to_string(::getpid()) + "-" + std::to_string(runs++);
    ipc::testing::ChildProcess replay(
        {ipc::testing::BinaryPath("az-replay"), "--run-dir", dir.path(), "--record-layout",
         chess ? "chess" : "bytes", "--record-bytes", chess ? "1160" : "80", "--capacity", "20000",
         "--shm-scope", scope, "--metrics-port", "-1", "--model-events-from", ""},
        dir.path() + "/replay.log", dir.path() + "/replay.log");
    Result<replayd::ReplayClient> client = replayd::ReplayClient::Create(
        {.run_dir = dir.path(), .attempt_timeout = seconds(30), .max_attempts = 1});
    AZ_CHECK(client.ok());
    AZ_CHECK(ipc::testing::WaitFor([&] { return client->Status().ok(); }, seconds(60)),
             ReadAll(dir.path() + "/replay.log"));
    const std::vector<std::byte> records = Records(game, chess ? 4000 : 20000);
    AZ_CHECK(client->Insert(records).ok());
    ipc::testing::ChildProcess learner(
        {ipc::testing::BinaryPath("az-learner"), "--run-dir", dir.path(), "--game",
         chess ? "chess" : "connect4", "--net", state.range(0) == 2 ? "full" : "default", "--batch",
         batch, "--device", bench::BenchDeviceFlag(), "--metrics-port", "-1", "--log-interval", "0",
         "--publish-every", "1000000", "--checkpoint-every", "0"},
        "/dev/null", "/dev/null");
    // Warm-up: LibTorch's start and the first steps.
    AZ_CHECK(ipc::testing::WaitFor([&] { return LearnerStep(dir.path()) >= 5; }, seconds(120)));
    const std::uint64_t first = LearnerStep(dir.path());
    const double learner0 = CpuSeconds(learner.pid()), replay0 = CpuSeconds(replay.pid());
    const auto start = std::chrono::steady_clock::now();
    AZ_CHECK(ipc::testing::WaitFor([&] { return LearnerStep(dir.path()) >= first + kSteps; },
                                   seconds(600)));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double done = static_cast<double>(LearnerStep(dir.path()) - first);
    learner_cpu += CpuSeconds(learner.pid()) - learner0;
    replay_cpu += CpuSeconds(replay.pid()) - replay0;
    steps += done;
    state.SetIterationTime(wall / done);
    learner.Signal(SIGTERM);
    learner.Wait();
    replay.Signal(SIGTERM);
    replay.Wait();
    if (Result<shm::Scope> parsed = shm::Scope::Parse(scope); parsed.ok()) {
      (void)shm::Segment::RemoveAll(*parsed);
    }
  }
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(state.range(1)),
                                                   benchmark::Counter::kIsIterationInvariantRate);
  state.counters["learner_cpu_ms/step"] = 1000 * learner_cpu / steps;
  state.counters["replay_cpu_ms/step"] = 1000 * replay_cpu / steps;
}
// The CPU rows are those of docs/PERFORMANCE.md; the GPU rows add the full network and batch 1024.
void RegisterRows() {
  const bool cuda = bench::BenchOnCuda();
  using Rows = std::vector<std::vector<std::int64_t>>;
  const Rows train = cuda ? Rows{{0, 256}, {0, 1024}, {1, 256}, {1, 1024}, {2, 256}, {2, 1024}}
                          : Rows{{0, 64}, {0, 256}, {1, 256}};
  for (const std::vector<std::int64_t>& row : train) {
    benchmark::RegisterBenchmark("BM_TrainStep", BM_TrainStep)
        ->Args(row)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  const Rows service = cuda ? Rows{{0, 1024}, {1, 1024}, {2, 1024}} : Rows{{0, 256}, {1, 256}};
  for (const std::vector<std::int64_t>& row : service) {
    benchmark::RegisterBenchmark("BM_Service", BM_Service)
        ->Args(row)
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime()
        ->Iterations(1);
  }
}

}  // namespace
}  // namespace az::learner

int main(int argc, char** argv) {
  return az::bench::RunBenchmarks(argc, argv, az::learner::RegisterRows);
}
