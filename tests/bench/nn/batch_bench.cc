// Batch building for the 122-plane chess input at batch 256:
//   BM_FillTemplate      the encoder called through FillInput's template parameter (a lambda)
//   BM_FillStdFunction   the same encoder through EncodeFn (std::function): one indirect call each
//   BM_FillViaNhwcBuffer the design we avoid: encode into a separate NHWC buffer, then copy it into
//                        a contiguous NCHW tensor (a transposing copy)
//   BM_DensePolicyTargets sparse visit lists (35 moves each) to dense normalised [256, 4672]
//
//   build-nn/bin/nn_bench --benchmark_filter='Fill|Dense'

#include <benchmark/benchmark.h>
#include <torch/types.h>

#include <cstring>
#include <vector>

#include "core/nn/torch_batch.h"

namespace az::nn {
namespace {

constexpr int kBatch = 256;

// Stands in for the chess encoder: writes every float of the position (zeros, ~32 piece bits, and a
// few constant planes), which is what the real one does.
void FakeEncode(int i, float* dst) {
  const NetConfig c = NetConfig::ChessSmall();
  const std::int64_t n = c.InputFloatsPerPosition();
  std::memset(dst, 0, static_cast<std::size_t>(n) * sizeof(float));
  for (int piece = 0; piece < 32; ++piece) {
    const int square = (piece * 7 + i) % 64;
    dst[square * c.input_planes + piece % 12] = 1.0f;
  }
  for (int square = 0; square < 64; ++square) {
    for (int plane = c.input_planes - 8; plane < c.input_planes; ++plane) {
      dst[square * c.input_planes + plane] = 0.25f;
    }
  }
}

void BM_FillTemplate(benchmark::State& state) {
  const NetConfig c = NetConfig::ChessSmall();
  for (auto _ : state) {
    torch::Tensor input = NewInputTensor(c, kBatch, InputLayout::kNhwc);
    FillInput(input, kBatch, [](int i, float* dst) { FakeEncode(i, dst); });
    benchmark::DoNotOptimize(input.data_ptr<float>());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_FillTemplate)->Unit(benchmark::kMicrosecond);

void BM_FillStdFunction(benchmark::State& state) {
  const NetConfig c = NetConfig::ChessSmall();
  const EncodeFn encode = [](int i, float* dst) { FakeEncode(i, dst); };
  for (auto _ : state) {
    torch::Tensor input = NewInputTensor(c, kBatch, InputLayout::kNhwc);
    FillInput(input, kBatch, encode);
    benchmark::DoNotOptimize(input.data_ptr<float>());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_FillStdFunction)->Unit(benchmark::kMicrosecond);

void BM_FillViaNhwcBuffer(benchmark::State& state) {
  const NetConfig c = NetConfig::ChessSmall();
  std::vector<float> buffer(static_cast<std::size_t>(kBatch * c.InputFloatsPerPosition()));
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) FakeEncode(i, buffer.data() + i * c.InputFloatsPerPosition());
    torch::Tensor input = WrapInput(buffer.data(), kBatch, c, InputLayout::kNhwc).contiguous();
    benchmark::DoNotOptimize(input.data_ptr<float>());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_FillViaNhwcBuffer)->Unit(benchmark::kMicrosecond);

void BM_DensePolicyTargets(benchmark::State& state) {
  const NetConfig c = NetConfig::ChessSmall();
  std::vector<std::vector<PolicyEntry>> lists(kBatch);
  std::vector<TrainSample> samples(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    for (int k = 0; k < 35; ++k) {
      lists[i].push_back({(k * 131 + i) % c.policy_size, static_cast<float>(k + 1)});
    }
    samples[i].policy = lists[i];
  }
  for (auto _ : state) {
    Result<torch::Tensor> dense = DensePolicyTargets(samples, c.policy_size);
    benchmark::DoNotOptimize(dense->data_ptr<float>());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_DensePolicyTargets)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace az::nn
