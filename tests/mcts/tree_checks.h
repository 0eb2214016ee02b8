#pragma once

// Invariants every finished search must hold, for any game.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/mcts/search.h"

namespace az::mcts {

// Visits every node under the root.
template <typename G, typename Visit>
void ForEachNode(const Search<G>& search, Visit visit) {
  std::vector<std::uint32_t> stack = {search.root_index()};
  while (!stack.empty()) {
    const Node& node = search.arena()[stack.back()];
    stack.pop_back();
    visit(node);
    if (node.state == NodeState::kExpanded) {
      for (std::uint32_t i = 0; i < node.num_children; ++i) stack.push_back(node.first_child + i);
    }
  }
}

// No virtual loss anywhere, nothing pending, every expanded node has its own evaluation plus one
// visit per playout into a child, and the children past num_started were never selected and are in
// decreasing prior order (what lets selection skip them).
template <typename G>
void ExpectConsistentTree(const Search<G>& search) {
  EXPECT_FALSE(search.has_pending());
  int nodes = 0;
  ForEachNode(search, [&](const Node& node) {
    ++nodes;
    EXPECT_EQ(node.VL(), 0u);
    EXPECT_NE(node.state, NodeState::kPending);
    if (node.state == NodeState::kExpanded) {
      std::uint32_t child_visits = 0;
      for (std::uint32_t i = 0; i < node.num_children; ++i) {
        child_visits += search.arena()[node.first_child + i].N();
      }
      EXPECT_EQ(node.N(), 1 + child_visits);
      EXPECT_LE(node.num_started, node.num_children);
      for (std::uint32_t i = node.num_started; i < node.num_children; ++i) {
        const Node& child = search.arena()[node.first_child + i];
        EXPECT_EQ(child.N(), 0u);
        if (i > node.num_started) {
          EXPECT_LE(child.prior, search.arena()[node.first_child + i - 1].prior);
        }
      }
    }
  });
  EXPECT_GT(nodes, 0);
}

}  // namespace az::mcts
