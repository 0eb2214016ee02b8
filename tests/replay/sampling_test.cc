#include "core/replay/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/replay/random.h"

namespace az::replay {
namespace {

TEST(StratifiedTargetsTest, OneDrawInEachEqualSliceOfTheTotal) {
  Rng rng(1);
  for (std::uint64_t total : {1ull, 7ull, 256ull, 1000ull, 123456789ull, (1ull << 62) - 1}) {
    for (std::size_t n : {1u, 3u, 256u, 1024u}) {
      std::vector<std::uint64_t> targets(n);
      StratifiedTargets(total, rng, targets);
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_LT(targets[k], total);
        if (total >= n) {
          // Slice k is [floor(k T / n), floor((k+1) T / n)).
          __extension__ using U128 = unsigned __int128;
          const auto lo = static_cast<std::uint64_t>(static_cast<U128>(k) * total / n);
          const auto hi = static_cast<std::uint64_t>(static_cast<U128>(k + 1) * total / n);
          ASSERT_GE(targets[k], lo) << "total " << total << " n " << n << " k " << k;
          ASSERT_LT(targets[k], hi) << "total " << total << " n " << n << " k " << k;
        }
      }
    }
  }
}

TEST(StratifiedTargetsTest, IsUniformWithinTheSlices) {
  // Total 40 in 4 slices of 10: over many batches every value of every slice comes up equally.
  Rng rng(5);
  std::vector<int> counts(40, 0);
  std::vector<std::uint64_t> targets(4);
  constexpr int kBatches = 100'000;
  for (int i = 0; i < kBatches; ++i) {
    StratifiedTargets(40, rng, targets);
    for (std::uint64_t t : targets) ++counts[t];
  }
  for (int count : counts) EXPECT_NEAR(count, kBatches / 10, kBatches / 10 * 0.05);
}

std::vector<SampledSlot> BatchWithProbabilities(const std::vector<double>& probabilities) {
  std::vector<SampledSlot> batch;
  for (std::size_t i = 0; i < probabilities.size(); ++i)
    batch.push_back({i, i, probabilities[i], 0});
  return batch;
}

TEST(ImportanceWeightsTest, BetaZeroGivesWeightOneEverywhere) {
  auto batch = BatchWithProbabilities({0.5, 0.01, 0.2, 1e-9});
  SetImportanceWeights(batch, 0.0);
  for (const SampledSlot& draw : batch) EXPECT_EQ(draw.weight, 1.0);
}

TEST(ImportanceWeightsTest, BetaOneGivesWeightsInverseToProbabilityWithMaxOne) {
  auto batch = BatchWithProbabilities({0.4, 0.1, 0.2, 0.1});
  SetImportanceWeights(batch, 1.0);
  EXPECT_DOUBLE_EQ(batch[0].weight, 0.25);
  EXPECT_DOUBLE_EQ(batch[1].weight, 1.0);
  EXPECT_DOUBLE_EQ(batch[2].weight, 0.5);
  EXPECT_DOUBLE_EQ(batch[3].weight, 1.0);
}

TEST(ImportanceWeightsTest, MatchesTheUnnormalisedFormulaDividedByTheBatchMaximum) {
  const std::vector<double> probabilities = {0.03, 0.001, 0.2, 0.0004, 0.05};
  constexpr double kN = 5000;
  for (double beta : {0.1, 0.4, 0.77, 1.0}) {
    auto batch = BatchWithProbabilities(probabilities);
    SetImportanceWeights(batch, beta);
    double max_raw = 0;
    for (double p : probabilities) max_raw = std::max(max_raw, std::pow(kN * p, -beta));
    for (std::size_t i = 0; i < batch.size(); ++i) {
      EXPECT_NEAR(batch[i].weight, std::pow(kN * probabilities[i], -beta) / max_raw, 1e-12);
    }
  }
}

TEST(RngTest, BelowStaysInRangeAndCoversIt) {
  Rng rng(9);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100'000; ++i) {
    const std::uint64_t x = rng.Below(10);
    ASSERT_LT(x, 10u);
    ++counts[x];
  }
  for (int count : counts) EXPECT_NEAR(count, 10'000, 500);
  for (int i = 0; i < 1000; ++i) ASSERT_LT(rng.Below(3), 3u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(rng.Below(1), 0u);
}

}  // namespace
}  // namespace az::replay
