// Training-step throughput through the Trainer facade (samples per second): batch building,
// forward, per-sample loss, backward, Adam, on this CPU with 1 intra-op thread.
//
//   build-nn/bin/nn_bench --benchmark_filter=TrainStep
//
// Argument: /net/batch; net 0 = 6x64 chess, 2 = Connect Four (4x32).
//
// BM_SaveCheckpoint: what the learner pays before every published model (docs/learner.md): model,
// Adam moments and counters, checksummed, written to a temporary file, fsynced and renamed, in
// the system's temporary directory. /net/ema: net 0 = chess small (6x64), 1 = chess full
// (15x192), 2 = Connect Four; ema 1 adds the weights' moving average (--ema-decay).

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/nn/trainer.h"

namespace az::nn {
namespace {

// A batch of synthetic samples for `c`: 30 policy entries each, outcomes cycling W/D/L.
struct SyntheticBatch {
  std::vector<std::vector<PolicyEntry>> policies;
  std::vector<TrainSample> samples;
  EncodeFn encode;
};

SyntheticBatch MakeBatch(const NetConfig& c, int batch) {
  SyntheticBatch b;
  const int moves = std::min(30, c.policy_size);
  b.policies.resize(batch);
  b.samples.resize(batch);
  for (int i = 0; i < batch; ++i) {
    for (int k = 0; k < moves; ++k) {
      b.policies[i].push_back({(k * 131 + i) % c.policy_size, static_cast<float>(k + 1)});
    }
    b.samples[i].policy = b.policies[i];
    b.samples[i].wdl = WdlFromOutcome(static_cast<float>(i % 3 - 1));
  }
  b.encode = [floats = c.InputFloatsPerPosition()](int i, float* dst) {
    for (std::int64_t k = 0; k < floats; ++k) dst[k] = ((k + i) % 7 == 0);
  };
  return b;
}

// Times TrainStep on a synthetic batch of `batch` samples for `options` (after one warm-up step);
// false, with the benchmark marked skipped, when the trainer cannot be created.
bool TimeTrainSteps(benchmark::State& state, const TrainerOptions& options, int batch) {
  auto trainer = Trainer::Create(options);
  if (!trainer.ok()) {
    state.SkipWithError(trainer.status().ToString().c_str());
    return false;
  }
  const SyntheticBatch synthetic = MakeBatch(options.net, batch);
  (void)(*trainer)->TrainStep(synthetic.samples, synthetic.encode);  // warm-up
  for (auto _ : state) {
    Result<TrainStepResult> r = (*trainer)->TrainStep(synthetic.samples, synthetic.encode);
    benchmark::DoNotOptimize(r.ok());
  }
  state.SetItemsProcessed(state.iterations() * batch);
  return true;
}

void BM_TrainStep(benchmark::State& state) {
  TrainerOptions options;
  options.net = state.range(0) == 0 ? NetConfig::ChessSmall() : NetConfig::ConnectFour();
  options.runtime.device = DeviceChoice::kCpu;
  TimeTrainSteps(state, options, static_cast<int>(state.range(1)));
}
BENCHMARK(BM_TrainStep)
    ->Args({2, 64})
    ->Args({2, 128})
    ->Args({2, 256})
    ->Args({2, 512})
    ->Args({0, 64})
    ->Args({0, 256})
    ->ArgNames({"net", "batch"})
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// cpu-bf16 against fp32 on the learner's Connect Four step (3x32, batch 256): the ratio to compare,
// measured in one run. Pays only on a CPU with bf16 dot products (nn::CpuHasNativeBf16()).
// A learner's step on Connect Four's network, batch 256, on a CPU; BM_TrainStepTowerCpuBf16 the
// same for other residual towers (blocks x filters, bf16).
void ConnectFourTrainStep(benchmark::State& state, bool bf16, int blocks, int filters) {
  TrainerOptions options;
  options.net = NetConfig::ConnectFour();
  if (blocks > 0) {
    options.net.blocks = blocks;
    options.net.filters = filters;
  }
  options.runtime.device = DeviceChoice::kCpu;
  options.runtime.cpu_bf16 = bf16;
  if (!TimeTrainSteps(state, options, 256)) return;
  state.SetLabel(CpuHasNativeBf16() ? "native bf16" : "no native bf16");
}
void BM_TrainStepCpuBf16(benchmark::State& state) {
  ConnectFourTrainStep(state, state.range(0) != 0, 0, 0);
}
void BM_TrainStepTowerCpuBf16(benchmark::State& state) {
  ConnectFourTrainStep(state, true, static_cast<int>(state.range(0)),
                       static_cast<int>(state.range(1)));
}
BENCHMARK(BM_TrainStepTowerCpuBf16)
    ->ArgNames({"blocks", "filters"})
    ->ArgsProduct({{3, 4, 5, 6, 8}, {16, 24, 32}})
    ->Iterations(40)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_TrainStepCpuBf16)
    ->ArgName("bf16")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(40)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// The learner's step as scripts/run configures it for Connect Four: 3x32, batch 256, bf16 autocast
// where the CPU has it, SGD with Nesterov momentum, the weights' moving average (0.998).
void BM_TrainStepConnectFourPreset(benchmark::State& state) {
  TrainerOptions options;
  options.net = NetConfig::ConnectFour();
  options.runtime.device = DeviceChoice::kCpu;
  options.runtime.cpu_bf16 = CpuHasNativeBf16();
  options.optimizer = OptimizerKind::kSgd;
  options.learning_rate = 0.1;
  options.ema_decay = 0.998;
  TimeTrainSteps(state, options, 256);
}
BENCHMARK(BM_TrainStepConnectFourPreset)
    ->Iterations(200)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

void BM_SaveCheckpoint(benchmark::State& state) {
  TrainerOptions options;
  options.net = state.range(0) == 0   ? NetConfig::ChessSmall()
                : state.range(0) == 1 ? NetConfig::ChessFull()
                                      : NetConfig::ConnectFour();
  options.runtime.device = DeviceChoice::kCpu;
  options.ema_decay = state.range(1) == 1 ? 0.99 : 0.0;
  auto trainer = Trainer::Create(options);
  if (!trainer.ok()) {
    state.SkipWithError(trainer.status().ToString().c_str());
    return;
  }
  // One step first, so that Adam's moments exist and are saved, as in a running learner.
  const SyntheticBatch synthetic = MakeBatch(options.net, 8);
  if (Result<TrainStepResult> step = (*trainer)->TrainStep(synthetic.samples, synthetic.encode);
      !step.ok()) {
    state.SkipWithError(step.status().ToString().c_str());
    return;
  }
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("az_checkpoint_bench_" + std::to_string(::getpid()) + ".azck"))
                               .string();
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    const Status saved = (*trainer)->SaveCheckpoint(path, 1);
    if (!saved.ok()) {
      state.SkipWithError(saved.ToString().c_str());
      break;
    }
    bytes = std::filesystem::file_size(path);
  }
  std::filesystem::remove(path);
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_SaveCheckpoint)
    ->ArgsProduct({{2, 0, 1}, {0, 1}})
    ->ArgNames({"net", "ema"})
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace az::nn
