// The cost of the ring's operations without a peer: one thread pushes a record and pops it back,
// beside a memcpy of the same record size (one ring round moves the bytes twice: in and out).
// Cross-process throughput and latency: services/ringbench (az-ringbench).

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "shm/ring.h"

namespace az::shm {
namespace {

Scope BenchScope() { return *Scope::Prefix("az-shm-bench-" + std::to_string(::getpid())); }

void BM_RingPushPop(benchmark::State& state) {
  const auto bytes = static_cast<std::uint32_t>(state.range(0));
  auto ring = Ring::Create(BenchScope(), "pushpop", {bytes, 1024}, {},
                           {.reclaim_stale = true, .remove_on_close = true});
  if (!ring.ok()) {
    state.SkipWithError(ring.status().ToString().c_str());
    return;
  }
  std::vector<std::byte> in(bytes, std::byte{1});
  std::vector<std::byte> out(bytes);
  for (auto _ : state) {
    ring->TryPush(in);
    benchmark::DoNotOptimize(ring->TryPop(out));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RingPushPop)->Arg(64)->Arg(1024)->Arg(16384);

// Half full, so every push and pop touches a slot the other side touched a lap ago.
void BM_RingBatchOf64(benchmark::State& state) {
  const auto bytes = static_cast<std::uint32_t>(state.range(0));
  auto ring = Ring::Create(BenchScope(), "batch", {bytes, 1024}, {},
                           {.reclaim_stale = true, .remove_on_close = true});
  if (!ring.ok()) {
    state.SkipWithError(ring.status().ToString().c_str());
    return;
  }
  std::vector<std::byte> in(bytes, std::byte{1});
  std::vector<std::byte> out(static_cast<std::size_t>(bytes) * 64);
  for (int i = 0; i < 512; ++i) ring->TryPush(in);
  for (auto _ : state) {
    for (int i = 0; i < 64; ++i) ring->TryPush(in);
    benchmark::DoNotOptimize(ring->TryPop(out));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 64 * bytes);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 64);
}
BENCHMARK(BM_RingBatchOf64)->Arg(64)->Arg(1024)->Arg(16384);

void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::byte> in(bytes, std::byte{1});
  std::vector<std::byte> out(bytes);
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Memcpy)->Arg(64)->Arg(1024)->Arg(16384);

}  // namespace
}  // namespace az::shm
