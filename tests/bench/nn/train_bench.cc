// Training-step throughput through the Trainer facade (samples per second): batch building,
// forward, per-sample loss, backward, Adam, on this CPU with 1 intra-op thread.
//
//   build-nn/bin/nn_bench --benchmark_filter=TrainStep
//
// Argument: /net/batch; net 0 = 6x64 chess, 2 = Connect Four (4x32).

#include <benchmark/benchmark.h>

#include <vector>

#include "core/nn/trainer.h"

namespace az::nn {
namespace {

void BM_TrainStep(benchmark::State& state) {
  TrainerOptions options;
  options.net = state.range(0) == 0 ? NetConfig::ChessSmall() : NetConfig::ConnectFour();
  options.runtime.device = DeviceChoice::kCpu;
  auto trainer = Trainer::Create(options);
  if (!trainer.ok()) {
    state.SkipWithError(trainer.status().ToString().c_str());
    return;
  }
  const NetConfig& c = options.net;
  const int batch = static_cast<int>(state.range(1));
  const int moves = std::min(30, c.policy_size);
  std::vector<std::vector<PolicyEntry>> policies(batch);
  std::vector<TrainSample> samples(batch);
  for (int i = 0; i < batch; ++i) {
    for (int k = 0; k < moves; ++k) {
      policies[i].push_back({(k * 131 + i) % c.policy_size, static_cast<float>(k + 1)});
    }
    samples[i].policy = policies[i];
    samples[i].wdl = WdlFromOutcome(static_cast<float>(i % 3 - 1));
  }
  const EncodeFn encode = [&](int i, float* dst) {
    for (std::int64_t k = 0; k < c.InputFloatsPerPosition(); ++k) dst[k] = ((k + i) % 7 == 0);
  };
  (void)(*trainer)->TrainStep(samples, encode);  // warm-up
  for (auto _ : state) {
    Result<TrainStepResult> r = (*trainer)->TrainStep(samples, encode);
    benchmark::DoNotOptimize(r.ok());
  }
  state.SetItemsProcessed(state.iterations() * batch);
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

}  // namespace
}  // namespace az::nn
