#include "core/replay/sum_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/replay/priority.h"
#include "core/replay/random.h"

namespace az::replay {
namespace {

__extension__ using U128 = unsigned __int128;

std::uint64_t ExactSum(const std::vector<std::uint64_t>& leaves) {
  U128 sum = 0;
  for (std::uint64_t leaf : leaves) sum += leaf;
  EXPECT_LT(sum, static_cast<U128>(1) << 62);
  return static_cast<std::uint64_t>(sum);
}

// The slot a proportional search must find, by a linear scan.
std::uint64_t ScanFind(const std::vector<std::uint64_t>& leaves, std::uint64_t target) {
  std::uint64_t prefix = 0;
  for (std::uint64_t slot = 0; slot < leaves.size(); ++slot) {
    prefix += leaves[slot];
    if (target < prefix) return slot;
  }
  ADD_FAILURE() << "target beyond the total";
  return 0;
}

// The drift test the issue asks for: millions of random updates by difference over a million and a
// bit slots (not a power of 8), priorities spread over nine decades as the fixed-point units a
// million-slot store uses. The root must equal the exact sum of the leaves, not approximately.
TEST(SumTreeTest, RootEqualsExactSumAfterMillionsOfRandomUpdates) {
  constexpr std::uint64_t kCapacity = (1 << 20) + 12345;
  constexpr int kUpdates = 4'000'000;
  const PriorityScale scale(kCapacity);
  SumTree tree(kCapacity);
  std::vector<std::uint64_t> leaves(kCapacity, 0);
  std::vector<double> priorities(kCapacity, 0.0);
  Rng rng(42);
  for (int i = 0; i < kUpdates; ++i) {
    const std::uint64_t slot = rng.Below(kCapacity);
    // Log-uniform priority in [1e-6, 1e3]; one update in eight empties the slot.
    const double priority = rng.Below(8) == 0 ? 0.0 : std::pow(10.0, -6 + 9 * rng.NextDouble());
    const std::uint64_t units = scale.ToUnits(priority);
    tree.Set(slot, units);
    leaves[slot] = units;
    priorities[slot] = priority;
    if (i % 1'000'000 == 0) {
      ASSERT_EQ(tree.Total(), ExactSum(leaves)) << "after " << i << " updates";
    }
  }
  EXPECT_EQ(tree.Total(), ExactSum(leaves));
  EXPECT_EQ(tree.Max(), *std::max_element(leaves.begin(), leaves.end()));
  std::uint64_t min_positive = 0;
  for (std::uint64_t leaf : leaves) {
    if (leaf > 0 && (min_positive == 0 || leaf < min_positive)) min_positive = leaf;
  }
  EXPECT_EQ(tree.MinPositive(), min_positive);
  ASSERT_TRUE(tree.Verify().ok()) << tree.Verify().ToString();

  // Against the real-valued priorities the only error is each leaf's rounding to a unit: at most
  // half a unit per leaf, whatever the number of updates.
  long double real_sum = 0;
  for (double priority : priorities) real_sum += priority;
  const long double bound = 0.5L * kCapacity * scale.ToPriority(1);
  EXPECT_LE(std::fabs(static_cast<long double>(scale.ToPriority(tree.Total())) - real_sum), bound);
}

TEST(SumTreeTest, SmallPrioritiesAreResolvedAtTenMillionSlots) {
  // A float tree of 10^7 leaves near 1 has a total near 10^7, where a float step is 1: a priority
  // of 1e-3 vanishes from the total. The integer tree keeps every unit of it.
  constexpr std::uint64_t kCapacity = 10'000'000;
  const PriorityScale scale(kCapacity);
  SumTree tree(kCapacity);
  std::vector<std::uint64_t> leaves(kCapacity, scale.ToUnits(1.0));
  tree.Assign(leaves);
  const std::uint64_t before = tree.Total();
  const std::uint64_t small = scale.ToUnits(1e-3);
  ASSERT_GT(small, 1000u);  // resolved to better than 0.1%
  tree.Set(123, small);
  EXPECT_EQ(tree.Total(), before - scale.ToUnits(1.0) + small);
  // The small slot is found exactly when the target falls in its range.
  const std::uint64_t start = 123 * scale.ToUnits(1.0);
  EXPECT_EQ(tree.FindOne(start), 123u);
  EXPECT_EQ(tree.FindOne(start + small - 1), 123u);
  EXPECT_EQ(tree.FindOne(start + small), 124u);
}

TEST(SumTreeTest, FindsTheSlotWhoseRangeHoldsEveryTarget) {
  // 75 slots (two levels, a partial last node) with zeros at the ends, in runs, and at node edges.
  std::vector<std::uint64_t> leaves(75);
  for (std::size_t i = 0; i < leaves.size(); ++i)
    leaves[i] = (i % 5 == 0 || i % 8 == 7) ? 0 : i % 4 + 1;
  leaves[0] = 0;
  leaves[74] = 0;
  SumTree tree(leaves.size());
  for (std::size_t i = 0; i < leaves.size(); ++i) tree.Set(i, leaves[i]);
  ASSERT_TRUE(tree.Verify().ok());
  for (std::uint64_t target = 0; target < tree.Total(); ++target) {
    const std::uint64_t slot = tree.FindOne(target);
    ASSERT_EQ(slot, ScanFind(leaves, target)) << "target " << target;
    ASSERT_GT(leaves[slot], 0u) << "target " << target << " found an empty slot";
  }
}

TEST(SumTreeTest, BoundaryTargetsNeverLandOnZeroOrPaddingSlots) {
  constexpr std::uint64_t kCapacity = 1000;  // the last node holds 8 slots, the tree pads the rest
  Rng rng(7);
  std::vector<std::uint64_t> leaves(kCapacity);
  for (auto& leaf : leaves) leaf = rng.Below(3) == 0 ? 0 : 1 + rng.Below(1000);
  leaves[kCapacity - 1] = 0;
  SumTree tree(kCapacity);
  tree.Assign(leaves);
  // Every prefix boundary, and the last unit before each, is where rounding would go wrong.
  std::uint64_t prefix = 0;
  for (std::uint64_t slot = 0; slot < kCapacity; ++slot) {
    prefix += leaves[slot];
    for (std::uint64_t target : {prefix - 1, prefix}) {
      if (target >= tree.Total() || prefix == 0) continue;
      const std::uint64_t found = tree.FindOne(target);
      ASSERT_LT(found, kCapacity);
      ASSERT_GT(leaves[found], 0u);
      ASSERT_EQ(found, ScanFind(leaves, target));
    }
  }
}

TEST(SumTreeTest, BatchedFindMatchesSingleSearches) {
  constexpr std::uint64_t kCapacity = 100'000;
  Rng rng(3);
  SumTree tree(kCapacity);
  std::vector<std::uint64_t> leaves(kCapacity);
  for (auto& leaf : leaves) leaf = rng.Below(1 << 20);
  tree.Assign(leaves);
  std::vector<std::uint64_t> targets(1000), slots(1000), units(1000);
  for (auto& t : targets) t = rng.Below(tree.Total());
  tree.Find(targets, slots, units);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    ASSERT_EQ(slots[i], tree.FindOne(targets[i]));
    ASSERT_EQ(units[i], leaves[slots[i]]);
  }
}

TEST(SumTreeTest, SetManyEqualsSetsOneAfterAnotherEvenWithRepeatedSlots) {
  constexpr std::uint64_t kCapacity = 20'000;
  Rng rng(13);
  SumTree batched(kCapacity), sequential(kCapacity);
  std::vector<std::uint64_t> leaves(kCapacity, 0);
  for (int round = 0; round < 200; ++round) {
    const std::size_t n = 1 + rng.Below(600);  // more than one interleaved group at times
    std::vector<std::uint64_t> slots(n), units(n);
    for (std::size_t i = 0; i < n; ++i) {
      // A small range of slots, so that repeats within a batch are common.
      slots[i] = round % 2 == 0 ? rng.Below(64) : rng.Below(kCapacity);
      units[i] = rng.Below(4) == 0 ? 0 : rng.Below(1u << 30);
      sequential.Set(slots[i], units[i]);
      leaves[slots[i]] = units[i];
    }
    batched.SetMany(slots, units);
    ASSERT_EQ(batched.Total(), ExactSum(leaves));
    ASSERT_EQ(batched.Total(), sequential.Total());
    ASSERT_EQ(batched.Max(), sequential.Max());
    ASSERT_EQ(batched.MinPositive(), sequential.MinPositive());
  }
  for (std::uint64_t slot = 0; slot < kCapacity; ++slot) ASSERT_EQ(batched.Get(slot), leaves[slot]);
  ASSERT_TRUE(batched.Verify().ok()) << batched.Verify().ToString();
}

TEST(SumTreeTest, AssignBuildsTheSameTreeAsSets) {
  for (std::uint64_t capacity : {1u, 2u, 7u, 8u, 9u, 64u, 65u, 513u, 4097u}) {
    Rng rng(capacity);
    std::vector<std::uint64_t> leaves(capacity);
    for (auto& leaf : leaves) leaf = rng.Below(4) == 0 ? 0 : rng.Below(1 << 30);
    SumTree by_assign(capacity);
    by_assign.Assign(leaves);
    SumTree by_set(capacity);
    for (std::uint64_t slot = 0; slot < capacity; ++slot) by_set.Set(slot, leaves[slot]);
    ASSERT_TRUE(by_assign.Verify().ok()) << capacity;
    ASSERT_TRUE(by_set.Verify().ok()) << capacity;
    EXPECT_EQ(by_assign.Total(), ExactSum(leaves));
    EXPECT_EQ(by_set.Total(), ExactSum(leaves));
    EXPECT_EQ(by_assign.Max(), by_set.Max());
    EXPECT_EQ(by_assign.MinPositive(), by_set.MinPositive());
    for (std::uint64_t slot = 0; slot < capacity; ++slot) EXPECT_EQ(by_set.Get(slot), leaves[slot]);
  }
}

TEST(SumTreeTest, MaxAndMinFollowTheLeavesAsTheyRiseAndFall) {
  constexpr std::uint64_t kCapacity = 5000;
  SumTree tree(kCapacity);
  EXPECT_EQ(tree.Max(), 0u);
  EXPECT_EQ(tree.MinPositive(), 0u);
  std::vector<std::uint64_t> leaves(kCapacity, 0);
  Rng rng(11);
  for (int i = 0; i < 50'000; ++i) {
    const std::uint64_t slot = rng.Below(kCapacity);
    leaves[slot] = rng.Below(3) == 0 ? 0 : 1 + rng.Below(1'000'000);
    tree.Set(slot, leaves[slot]);
    if (i % 997 == 0) {
      std::uint64_t max = 0, min = 0;
      for (std::uint64_t leaf : leaves) {
        max = std::max(max, leaf);
        if (leaf > 0 && (min == 0 || leaf < min)) min = leaf;
      }
      ASSERT_EQ(tree.Max(), max);
      ASSERT_EQ(tree.MinPositive(), min);
    }
  }
  // Emptying every slot brings both back to 0.
  for (std::uint64_t slot = 0; slot < kCapacity; ++slot) tree.Set(slot, 0);
  EXPECT_EQ(tree.Total(), 0u);
  EXPECT_EQ(tree.Max(), 0u);
  EXPECT_EQ(tree.MinPositive(), 0u);
  EXPECT_TRUE(tree.Verify().ok());
}

TEST(PriorityScaleTest, KeepsTheTotalBelowTwoToThe62AtFullCapacityAndMaxPriority) {
  for (std::uint64_t capacity : {1ull, 8ull, 1000ull, 1ull << 20, 10'000'000ull, 1ull << 32}) {
    const PriorityScale scale(capacity);
    const U128 worst = static_cast<U128>(scale.max_units()) * capacity;
    EXPECT_LE(worst, static_cast<U128>(1) << 62) << capacity;
    EXPECT_EQ(scale.ToPriority(scale.max_units()), PriorityScale::kMaxPriority);
  }
}

TEST(PriorityScaleTest, RoundsToUnitsAndClampsIntoRange) {
  const PriorityScale scale(1 << 20);
  bool clamped = true;
  EXPECT_EQ(scale.ToUnits(0.0, &clamped), 0u);
  EXPECT_FALSE(clamped);
  EXPECT_EQ(scale.ToUnits(1.0, &clamped), std::uint64_t{1} << scale.fraction_bits());
  EXPECT_FALSE(clamped);
  EXPECT_EQ(scale.ToUnits(1e-30, &clamped), 1u);  // positive stays sampleable
  EXPECT_TRUE(clamped);
  EXPECT_EQ(scale.ToUnits(1e9, &clamped), scale.max_units());
  EXPECT_TRUE(clamped);
  EXPECT_DOUBLE_EQ(scale.ToPriority(scale.ToUnits(0.375)), 0.375);
}

TEST(PriorityTest, FollowsSchaulsFormulaAndRejectsBadLosses) {
  EXPECT_DOUBLE_EQ(*PriorityFromLoss(3.0, 1.0, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(*PriorityFromLoss(0.0, 0.01, 1.0), 0.01);
  EXPECT_DOUBLE_EQ(*PriorityFromLoss(5.0, 0.0, 0.0), 1.0);
  EXPECT_FALSE(PriorityFromLoss(std::nan(""), 0.01, 0.6));
  EXPECT_FALSE(PriorityFromLoss(INFINITY, 0.01, 0.6));
  EXPECT_FALSE(PriorityFromLoss(-INFINITY, 0.01, 0.6));
  EXPECT_FALSE(PriorityFromLoss(-1e-9, 0.01, 0.6));
}

}  // namespace
}  // namespace az::replay
