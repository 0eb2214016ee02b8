// Prioritized replay benchmarks (docs/PERFORMANCE.md, "Replay"): our 8-ary integer sum-tree against
// the plain binary float tree, side by side, at 10^5, 10^6 and 10^7 slots for batches of 256 and
// 1024 (a stratified batch sampled, then every drawn slot updated); the float tree's drift; and the
// whole store path (locking, generations, probabilities, weights, priority formula, record copies).
//
//   build/bin/replay_bench --benchmark_min_time=0.3

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/replay/priority.h"
#include "core/replay/random.h"
#include "core/replay/replay_store.h"
#include "core/replay/sampling.h"
#include "core/replay/sum_tree.h"
#include "tests/bench/replay/plain_float_tree.h"

namespace az::replay {
namespace {

constexpr std::size_t kPool = 1 << 16;  // random priorities reused by the update loops

// Priorities as a prioritized buffer holds them: (loss + eps)^0.6 for losses spread over four
// decades.
std::vector<double> RandomPriorities(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> priorities(n);
  for (double& p : priorities) p = std::pow(std::pow(10.0, -3 + 4 * rng.NextDouble()), 0.6);
  return priorities;
}

void BM_PlainFloatTree_SampleUpdate(benchmark::State& state) {
  const auto capacity = static_cast<std::uint64_t>(state.range(0));
  const auto batch = static_cast<std::size_t>(state.range(1));
  const bool update = state.range(2) != 0;
  bench::PlainFloatTree tree(capacity);
  {
    const auto initial = RandomPriorities(capacity, 1);
    tree.Assign(std::vector<float>(initial.begin(), initial.end()));
  }
  const auto pool = RandomPriorities(kPool, 2);
  std::vector<float> pool_f(pool.begin(), pool.end());
  Rng rng(3);
  std::vector<std::uint64_t> slots(batch);
  std::size_t next = 0;
  for (auto _ : state) {
    const float segment = tree.Total() / static_cast<float>(batch);
    for (std::size_t k = 0; k < batch; ++k) {
      const float target = (static_cast<float>(k) + static_cast<float>(rng.NextDouble())) * segment;
      slots[k] = tree.Find(target);
    }
    benchmark::DoNotOptimize(slots.data());
    if (update) {
      for (std::size_t k = 0; k < batch; ++k) tree.Set(slots[k] % capacity, pool_f[next++ % kPool]);
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

void BM_SumTree_SampleUpdate(benchmark::State& state) {
  const auto capacity = static_cast<std::uint64_t>(state.range(0));
  const auto batch = static_cast<std::size_t>(state.range(1));
  const bool update = state.range(2) != 0;
  const PriorityScale scale(capacity);
  SumTree tree(capacity);
  {
    const auto initial = RandomPriorities(capacity, 1);
    std::vector<std::uint64_t> units(capacity);
    for (std::uint64_t i = 0; i < capacity; ++i) units[i] = scale.ToUnits(initial[i]);
    tree.Assign(units);
  }
  const auto pool = RandomPriorities(kPool, 2);
  Rng rng(3);
  std::vector<std::uint64_t> targets(batch), slots(batch), units(batch);
  std::size_t next = 0;
  for (auto _ : state) {
    StratifiedTargets(tree.Total(), rng, targets);
    tree.Find(targets, slots, units);
    benchmark::DoNotOptimize(slots.data());
    if (update) {
      for (std::size_t k = 0; k < batch; ++k) units[k] = scale.ToUnits(pool[next++ % kPool]);
      tree.SetMany(slots, units);
    }
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

void TreeArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"slots", "batch", "update"});
  for (std::int64_t update : {1, 0}) {
    for (std::int64_t slots : {100'000, 1'000'000, 10'000'000}) {
      for (std::int64_t batch : {256, 1024}) b->Args({slots, batch, update});
    }
  }
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_PlainFloatTree_SampleUpdate)->Apply(TreeArgs);
BENCHMARK(BM_SumTree_SampleUpdate)->Apply(TreeArgs);

// How far the float tree's root drifts from the sum of its leaves under delta updates, against the
// integer tree (always exactly 0). One run of 10^7 random updates over 10^6 slots.
void BM_Drift(benchmark::State& state) {
  constexpr std::uint64_t kCapacity = 1'000'000;
  constexpr int kUpdates = 10'000'000;
  const bool plain = state.range(0) == 0;
  const auto initial = RandomPriorities(kCapacity, 1);
  const auto pool = RandomPriorities(kPool, 2);
  double drift = 0;
  for (auto _ : state) {
    Rng rng(4);
    if (plain) {
      bench::PlainFloatTree tree(kCapacity);
      tree.Assign(std::vector<float>(initial.begin(), initial.end()));
      for (int i = 0; i < kUpdates; ++i)
        tree.Set(rng.Below(kCapacity), static_cast<float>(pool[i % kPool]));
      long double exact = 0;
      for (std::uint64_t s = 0; s < kCapacity; ++s) exact += tree.Get(s);
      drift = static_cast<double>(std::fabs((tree.Total() - exact) / exact));
    } else {
      const PriorityScale scale(kCapacity);
      SumTree tree(kCapacity);
      std::vector<std::uint64_t> units(kCapacity);
      for (std::uint64_t s = 0; s < kCapacity; ++s) units[s] = scale.ToUnits(initial[s]);
      tree.Assign(units);
      std::vector<std::uint64_t> slots(1024), values(1024);
      for (int i = 0; i < kUpdates; i += 1024) {
        for (std::size_t k = 0; k < slots.size(); ++k) {
          slots[k] = rng.Below(kCapacity);
          values[k] = scale.ToUnits(pool[(i + k) % kPool]);
          units[slots[k]] = values[k];
        }
        tree.SetMany(slots, values);
      }
      std::uint64_t exact = 0;
      for (std::uint64_t u : units) exact += u;
      drift = exact == tree.Total() ? 0.0 : 1.0;
    }
  }
  state.counters["root_relative_drift"] = drift;
}
BENCHMARK(BM_Drift)->ArgName("integer")->Arg(0)->Arg(1)->Iterations(1)->Unit(
    benchmark::kMillisecond);

// The whole store: Sample() (lock, stratified draw, generations, probabilities, weights) then
// UpdatePriorities() with a loss per draw (validation, pow, stale check, tree update). range(2) is
// the record size copied out with each draw (0: metadata only).
void BM_ReplayStore_SampleUpdate(benchmark::State& state) {
  const auto capacity = static_cast<std::uint64_t>(state.range(0));
  const auto batch = static_cast<std::size_t>(state.range(1));
  const auto copy_bytes = static_cast<std::uint64_t>(state.range(2));
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("az_replay_bench." + std::to_string(::getpid()) + ".store"))
                               .string();
  std::filesystem::remove(path);
  ReplayStoreOptions options;
  options.path = path;
  options.capacity = capacity;
  options.record_size = copy_bytes == 0 ? 64 : copy_bytes;
  options.alpha = 0.6;
  auto store = ReplayStore::Open(options);
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  {
    std::vector<std::byte> records(4096 * options.record_size, std::byte{1});
    for (std::uint64_t done = 0; done < capacity; done += 4096) {
      (void)(*store)->Insert(std::span(records).first(
          std::min<std::uint64_t>(4096, capacity - done) * options.record_size));
    }
    std::vector<PriorityUpdate> updates(capacity);
    const auto losses = RandomPriorities(capacity, 1);
    for (std::uint64_t i = 0; i < capacity; ++i) updates[i] = {i, i, losses[i]};
    (*store)->UpdatePriorities(updates);
  }
  const auto losses = RandomPriorities(kPool, 2);
  Rng rng(5);
  std::vector<SampledSlot> draws(batch);
  std::vector<std::byte> records(copy_bytes * batch);
  std::vector<PriorityUpdate> updates(batch);
  std::size_t next = 0;
  for (auto _ : state) {
    if (!(*store)->Sample(0.5, rng, draws, records).ok()) state.SkipWithError("sample failed");
    for (std::size_t k = 0; k < batch; ++k) {
      updates[k] = {draws[k].slot, draws[k].generation, losses[next++ % kPool]};
    }
    benchmark::DoNotOptimize((*store)->UpdatePriorities(updates));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  store = Status(StatusCode::kCancelled, "closed");
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReplayStore_SampleUpdate)
    ->ArgNames({"slots", "batch", "record_bytes"})
    ->Args({1'000'000, 256, 0})
    ->Args({1'000'000, 1024, 0})
    ->Args({1'000'000, 256, 512})
    ->Unit(benchmark::kMicrosecond);

// Inserting batches of 256 records of 512 bytes into a full ring of 10^6 (overwriting the oldest).
void BM_ReplayStore_Insert(benchmark::State& state) {
  constexpr std::uint64_t kCapacity = 1'000'000;
  const auto batch = static_cast<std::size_t>(state.range(0));
  const auto record_size = static_cast<std::uint64_t>(state.range(1));
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("az_replay_bench_insert." + std::to_string(::getpid()) + ".store"))
                               .string();
  std::filesystem::remove(path);
  ReplayStoreOptions options;
  options.path = path;
  options.capacity = kCapacity;
  options.record_size = record_size;
  auto store = ReplayStore::Open(options);
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return;
  }
  std::vector<std::byte> records(batch * record_size, std::byte{7});
  for (std::uint64_t done = 0; done < kCapacity; done += batch) (void)(*store)->Insert(records);
  for (auto _ : state) {
    if (!(*store)->Insert(records).ok()) state.SkipWithError("insert failed");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * batch * record_size));
  store = Status(StatusCode::kCancelled, "closed");
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReplayStore_Insert)
    ->ArgNames({"batch", "record_bytes"})
    ->Args({256, 512})
    ->Unit(benchmark::kMicrosecond);

// Reopening a full store: scanning every slot's commit marker and rebuilding the tree from them.
void BM_ReplayStore_Open(benchmark::State& state) {
  const auto capacity = static_cast<std::uint64_t>(state.range(0));
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("az_replay_bench_open." + std::to_string(::getpid()) + ".store"))
                               .string();
  std::filesystem::remove(path);
  ReplayStoreOptions options;
  options.path = path;
  options.capacity = capacity;
  options.record_size = 64;
  {
    auto store = ReplayStore::Open(options);
    if (!store.ok()) {
      state.SkipWithError(store.status().ToString().c_str());
      return;
    }
    std::vector<std::byte> records(4096 * options.record_size, std::byte{3});
    for (std::uint64_t done = 0; done < capacity; done += 4096) (void)(*store)->Insert(records);
  }
  for (auto _ : state) {
    auto store = ReplayStore::Open(options);
    if (!store.ok() || (*store)->open_report().records != capacity) state.SkipWithError("reopen");
  }
  std::filesystem::remove(path);
}
BENCHMARK(BM_ReplayStore_Open)->ArgName("slots")->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace az::replay
