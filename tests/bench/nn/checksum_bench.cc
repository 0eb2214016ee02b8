// XXH64 over a weights payload the size of the 15x192 network (43 MB): the cost a weights-file load
// or save adds for its checksum.
//
//   build-nn/bin/nn_bench --benchmark_filter=Xxh64

#include <benchmark/benchmark.h>

#include <vector>

#include "core/nn/checksum.h"

namespace az::nn {
namespace {

void BM_Xxh64(benchmark::State& state) {
  std::vector<std::byte> data(static_cast<std::size_t>(state.range(0)));
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 131);
  for (auto _ : state) benchmark::DoNotOptimize(Xxh64(data));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Xxh64)->Arg(43 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace az::nn
