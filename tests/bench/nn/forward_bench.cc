// Forward-pass throughput of the network on this machine's CPU, in positions per second
// (items_per_second), for the small CPU default (6x64), the GPU-sized 15x192 and Connect Four, at
// batch 1, 64 and 256, with channels-last vs contiguous NCHW memory and 1 vs 2 intra-op threads.
//
//   build-nn/bin/nn_bench --benchmark_filter=Forward
//
// Arguments: /net/batch/channels_last/threads; net 0 = 6x64 chess, 1 = 15x192 chess, 2 = Connect
// Four. The 15x192 net at batch 256 takes seconds per call on two cores: iteration counts are fixed
// and small so the whole run takes a few minutes.

#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <vector>

#include "core/nn/network.h"
#include "core/nn/torch_model.h"

namespace az::nn {
namespace {

NetConfig ConfigFor(std::int64_t index) {
  switch (index) {
    case 0: return NetConfig::ChessSmall();
    case 1: return NetConfig::ChessFull();
    default: return NetConfig::ConnectFour();
  }
}

void BM_Forward(benchmark::State& state) {
  const NetConfig c = ConfigFor(state.range(0));
  const std::int64_t batch = state.range(1);
  const bool channels_last = state.range(2) != 0;
  at::set_num_threads(static_cast<int>(state.range(3)));
  torch::manual_seed(0);
  AzNet net(c);
  net->eval();
  SetMemoryFormat(*net, channels_last);
  const torch::Tensor x = torch::rand({batch, c.input_planes, c.board_height, c.board_width})
                              .contiguous(channels_last ? torch::MemoryFormat::ChannelsLast
                                                        : torch::MemoryFormat::Contiguous);
  c10::InferenceMode inference;
  net->forward(x);  // warm-up: oneDNN builds its primitives on the first call
  for (auto _ : state) {
    NetOutput out = net->forward(x);
    benchmark::DoNotOptimize(out.value.data_ptr<float>());
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetLabel(c.ToString().substr(0, c.ToString().find(',')) +
                 (channels_last ? " channels-last" : " nchw") +
                 " threads=" + std::to_string(state.range(3)));
}

// Rates come from wall time (the intra-op threads' work counts), and "CPU" is the whole process's.
void ForwardArgs(benchmark::internal::Benchmark* b) {
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
  b->ArgNames({"net", "batch", "cl", "threads"});
}

BENCHMARK(BM_Forward)->Apply(ForwardArgs)->ArgsProduct({{0}, {1}, {0, 1}, {1, 2}})->Iterations(200);
BENCHMARK(BM_Forward)->Apply(ForwardArgs)->ArgsProduct({{0}, {64}, {0, 1}, {1, 2}})->Iterations(20);
BENCHMARK(BM_Forward)->Apply(ForwardArgs)->ArgsProduct({{0}, {256}, {0, 1}, {1, 2}})->Iterations(6);
BENCHMARK(BM_Forward)->Apply(ForwardArgs)->ArgsProduct({{1}, {1}, {0, 1}, {1, 2}})->Iterations(20);
BENCHMARK(BM_Forward)->Apply(ForwardArgs)->ArgsProduct({{1}, {64}, {0, 1}, {1, 2}})->Iterations(2);
BENCHMARK(BM_Forward)->Apply(ForwardArgs)->ArgsProduct({{1}, {256}, {0, 1}, {1, 2}})->Iterations(1);
BENCHMARK(BM_Forward)
    ->Apply(ForwardArgs)
    ->ArgsProduct({{2}, {1, 64, 256}, {0, 1}, {1}})
    ->Iterations(50);
// Connect Four's batch sweep: where the evaluator's max-batch should sit on this CPU (per-position
// cost rises again once a layer's activations outgrow the core's L2 cache).
BENCHMARK(BM_Forward)
    ->Apply(ForwardArgs)
    ->ArgsProduct({{2}, {16, 32, 48, 64, 96, 128}, {1}, {1}})
    ->Iterations(100);

// The torch-free facade (what a service calls): input from an NHWC buffer, legal-move mask, priors
// gathered over the legal moves, WDL and value copied out. Compare with BM_Forward/0/64/1/1.
void BM_NetworkFacadeForward(benchmark::State& state) {
  const std::int64_t batch = state.range(0);
  NetworkOptions options{.net = NetConfig::ChessSmall()};
  options.runtime.device = DeviceChoice::kCpu;
  auto network = Network::Create(options);
  if (!network.ok()) {
    state.SkipWithError(network.status().ToString().c_str());
    return;
  }
  const NetConfig& c = options.net;
  std::vector<float> input(static_cast<std::size_t>(batch * c.InputFloatsPerPosition()), 0.5f);
  // ~35 legal moves per position, spread over the action space.
  std::vector<std::int32_t> offsets = {0}, actions;
  for (std::int64_t i = 0; i < batch; ++i) {
    for (int k = 0; k < 35; ++k)
      actions.push_back(static_cast<std::int32_t>((k * 131 + i) % c.policy_size));
    offsets.push_back(static_cast<std::int32_t>(actions.size()));
  }
  const LegalMovesView legal{offsets, actions};
  std::vector<float> priors(actions.size()), wdl(batch * 3), value(batch);
  const BatchInput in{.n = static_cast<int>(batch), .data = input.data()};
  const ForwardOutputs out{.priors = priors.data(), .wdl = wdl.data(), .value = value.data()};
  (void)(*network)->Forward(in, out, &legal);
  for (auto _ : state) {
    const Status status = (*network)->Forward(in, out, &legal);
    benchmark::DoNotOptimize(status.ok());
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_NetworkFacadeForward)
    ->Arg(64)
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// The evaluator's call on Connect Four's 3x32 network (batch 64, planar input), fp32 against
// cpu-bf16: the ratio to compare, measured in one run. Pays only on a CPU with bf16 dot products.
// Connect Four's network as the evaluator runs it on a CPU; bf16:1 where the CPU has bf16 dot
// products (cpu-bf16 "auto"). BM_ConnectFourTowerCpuBf16 the same call for other residual towers
// (blocks x filters, bf16), to price a deeper or thinner tower on the box at hand.
void ConnectFourForward(benchmark::State& state, bool bf16, int blocks, int filters) {
  NetworkOptions options{.net = NetConfig::ConnectFour()};
  if (blocks > 0) {
    options.net.blocks = blocks;
    options.net.filters = filters;
  }
  options.runtime.device = DeviceChoice::kCpu;
  options.runtime.input_layout = InputLayout::kNchw;
  options.runtime.cpu_bf16 = bf16;
  auto network = Network::Create(options);
  if (!network.ok()) {
    state.SkipWithError(network.status().ToString().c_str());
    return;
  }
  const NetConfig& c = options.net;
  constexpr int kBatch = 64;
  std::vector<float> input(static_cast<std::size_t>(kBatch * c.InputFloatsPerPosition()));
  for (std::size_t k = 0; k < input.size(); ++k) input[k] = (k % 5 == 0) ? 1.0f : 0.0f;
  std::vector<std::int32_t> offsets = {0}, actions;
  for (int i = 0; i < kBatch; ++i) {
    for (int a = 0; a < c.policy_size; ++a) actions.push_back(a);
    offsets.push_back(static_cast<std::int32_t>(actions.size()));
  }
  const LegalMovesView legal{offsets, actions};
  std::vector<float> priors(actions.size()), wdl(kBatch * 3), value(kBatch);
  const BatchInput in{.n = kBatch, .data = input.data()};
  const ForwardOutputs out{.priors = priors.data(), .wdl = wdl.data(), .value = value.data()};
  (void)(*network)->Forward(in, out, &legal);
  for (auto _ : state) {
    const Status status = (*network)->Forward(in, out, &legal);
    benchmark::DoNotOptimize(status.ok());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.SetLabel(CpuHasNativeBf16() ? "native bf16" : "no native bf16");
}
void BM_ConnectFourForwardCpuBf16(benchmark::State& state) {
  ConnectFourForward(state, state.range(0) != 0, 0, 0);
}
void BM_ConnectFourTowerCpuBf16(benchmark::State& state) {
  ConnectFourForward(state, true, static_cast<int>(state.range(0)),
                     static_cast<int>(state.range(1)));
}
BENCHMARK(BM_ConnectFourTowerCpuBf16)
    ->ArgNames({"blocks", "filters"})
    ->ArgsProduct({{3, 4, 5, 6, 8}, {16, 24, 32}})
    ->Iterations(400)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_ConnectFourForwardCpuBf16)
    ->ArgName("bf16")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(400)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

}  // namespace
}  // namespace az::nn
