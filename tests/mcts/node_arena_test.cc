#include "core/mcts/node_arena.h"

#include <gtest/gtest.h>

#include <cstddef>

#include "core/mcts/node.h"

namespace az::mcts {
namespace {

TEST(NodeTest, IsOneCacheLine) {
  EXPECT_EQ(sizeof(Node), 64u);
  EXPECT_EQ(alignof(Node), 64u);
}

TEST(NodeTest, FixedPointRoundsToTenThousandths) {
  EXPECT_EQ(ToFixed(1.0), 10000);
  EXPECT_EQ(ToFixed(-1.0), -10000);
  EXPECT_EQ(ToFixed(0.12345), 1235);  // 1234.5 rounds away from zero
  EXPECT_EQ(QuantizePrior(1.0f), 65535);
  EXPECT_EQ(QuantizePrior(0.0f), 0);
  EXPECT_EQ(QuantizePrior(2.0f), 65535);
  EXPECT_EQ(QuantizePrior(-1.0f), 0);
}

TEST(NodeArenaTest, NodesAreCacheLineAlignedAndRunsContiguous) {
  NodeArena arena(1u << 16);
  const std::uint32_t first = arena.Allocate(7);
  ASSERT_NE(first, kNullNode);
  for (std::uint32_t i = 0; i < 7; ++i) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(&arena[first + i]) % 64, 0u);
    EXPECT_EQ(&arena[first + i], &arena[first] + i);
  }
}

TEST(NodeArenaTest, RunNeverStraddlesABlock) {
  NodeArena arena(1u << 16);
  ASSERT_EQ(arena.Allocate(NodeArena::kBlockSize - 3), 0u);
  const std::uint32_t run = arena.Allocate(5);
  EXPECT_EQ(run, NodeArena::kBlockSize);  // the 3-node tail was skipped
  EXPECT_EQ(&arena[run + 4], &arena[run] + 4);
  EXPECT_EQ(arena.used(), NodeArena::kBlockSize + 5);
}

TEST(NodeArenaTest, ResetReusesTheSameBlocksWithoutAllocating) {
  NodeArena arena(1u << 16);
  for (int i = 0; i < 3000; ++i) ASSERT_NE(arena.Allocate(7), kNullNode);
  const std::size_t reserved = arena.reserved_bytes();
  Node* first = &arena[0];
  arena.Reset();
  EXPECT_EQ(arena.used(), 0u);
  EXPECT_EQ(arena.Allocate(1), 0u);
  EXPECT_EQ(&arena[0], first);
  for (int i = 0; i < 2999; ++i) ASSERT_NE(arena.Allocate(7), kNullNode);
  EXPECT_EQ(arena.reserved_bytes(), reserved);
}

TEST(NodeArenaTest, RefusesToGrowPastMaxNodes) {
  NodeArena arena(2 * NodeArena::kBlockSize);
  ASSERT_NE(arena.Allocate(NodeArena::kBlockSize), kNullNode);
  ASSERT_NE(arena.Allocate(NodeArena::kBlockSize - 1), kNullNode);
  EXPECT_NE(arena.Allocate(1), kNullNode);
  EXPECT_EQ(arena.Allocate(1), kNullNode);
  arena.Reset();
  EXPECT_EQ(arena.Allocate(1), 0u);
}

}  // namespace
}  // namespace az::mcts
