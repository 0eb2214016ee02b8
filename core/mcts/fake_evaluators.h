#pragma once

// Evaluators without a network, for tests, benchmarks and the search tool before a model exists.
//   UniformEvaluator: equal priors, WDL 1/3 each (value 0): search alone finds the tactics.
//   HashEvaluator: priors and WDL that look random but are a pure function of the position record
//     and the move's policy index (and a seed), so a search with it is reproducible, independent of
//     how leaves are batched, and builds an uneven tree the way a real network does.

#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "core/games/game.h"
#include "core/mcts/evaluator.h"
#include "core/mcts/random.h"

namespace az::mcts {

template <games::Game G>
class UniformEvaluator final : public Evaluator<G> {
 public:
  Status Evaluate(std::span<const Leaf<G>> leaves, std::span<LeafEval> evals) override {
    AZ_CHECK(leaves.size() == evals.size());
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      for (float& prior : evals[i].priors) prior = 1.0f;
      evals[i].SetWdl(1.0f / 3, 1.0f / 3, 1.0f / 3);
    }
    return Status::Ok();
  }
};

// A 64-bit hash of a trivially copyable record's bytes.
template <typename Record>
std::uint64_t HashRecord(const Record& record, std::uint64_t seed) {
  static_assert(std::is_trivially_copyable_v<Record>);
  unsigned char bytes[sizeof(Record)];
  std::memcpy(bytes, &record, sizeof(Record));
  std::uint64_t hash = seed ^ 0xCBF29CE484222325ull;
  for (unsigned char byte : bytes) hash = (hash ^ byte) * 0x100000001B3ull;  // FNV-1a
  return SplitMix64(hash);
}

template <games::Game G>
class HashEvaluator final : public Evaluator<G> {
 public:
  explicit HashEvaluator(std::uint64_t seed = 1) : seed_(seed) {}

  Status Evaluate(std::span<const Leaf<G>> leaves, std::span<LeafEval> evals) override {
    AZ_CHECK(leaves.size() == evals.size());
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      std::uint64_t hash = HashRecord(*leaves[i].record, seed_);
      for (std::size_t m = 0; m < leaves[i].policy_indices.size(); ++m) {
        std::uint64_t h = hash ^ leaves[i].policy_indices[m];
        // A skewed prior in (0.05, 1], so that some moves are clearly preferred.
        const double u = static_cast<double>(SplitMix64(h) >> 11) * 0x1.0p-53;
        evals[i].priors[m] = static_cast<float>(0.05 + 0.95 * u * u * u);
      }
      const double w = static_cast<double>(SplitMix64(hash) >> 11) * 0x1.0p-53;
      const double l = static_cast<double>(SplitMix64(hash) >> 11) * 0x1.0p-53;
      const double d = static_cast<double>(SplitMix64(hash) >> 11) * 0x1.0p-53 * 0.5;
      evals[i].SetWdl(static_cast<float>(w), static_cast<float>(d), static_cast<float>(l));
    }
    return Status::Ok();
  }

 private:
  std::uint64_t seed_;
};

}  // namespace az::mcts
