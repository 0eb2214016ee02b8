#pragma once

// The pool the search tree lives in: blocks of nodes allocated once and kept, handed out by a bump
// pointer, and reset in O(1) by moving the pointer back (no node is touched; Allocate initialises
// nothing either, the search Init()s what it takes). After the first few searches a game's tree
// allocates no memory at all. Not thread-safe: one search owns one arena.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/check.h"
#include "core/mcts/node.h"

namespace az::mcts {

class NodeArena {
 public:
  static constexpr int kBlockShift = 12;
  static constexpr std::uint32_t kBlockSize = 1u << kBlockShift;  // 4096 nodes = 256 KiB

  // `max_nodes` bounds the arena (rounded up to whole blocks); Allocate fails beyond it.
  explicit NodeArena(std::uint32_t max_nodes);
  NodeArena(NodeArena&&) = default;
  NodeArena& operator=(NodeArena&&) = default;

  // Reserves `count` contiguous nodes (1 <= count <= kBlockSize, checked) and returns the index of
  // the first, or kNullNode when the arena is at max_nodes. Allocates a block from the heap only
  // when the pointer enters a block never used before.
  std::uint32_t Allocate(std::uint32_t count);
  // Forgets every node in O(1); the blocks stay for reuse.
  void Reset() { next_ = 0; }

  Node& operator[](std::uint32_t index) {
    return blocks_[index >> kBlockShift][index & (kBlockSize - 1)];
  }
  const Node& operator[](std::uint32_t index) const {
    return blocks_[index >> kBlockShift][index & (kBlockSize - 1)];
  }

  // Nodes handed out since the last Reset, counting the tail of a block skipped to keep a run of
  // children contiguous.
  std::uint32_t used() const { return next_; }
  std::size_t reserved_bytes() const { return blocks_.size() * kBlockSize * sizeof(Node); }

 private:
  std::vector<std::unique_ptr<Node[]>> blocks_;
  std::uint32_t next_ = 0;
  std::uint32_t max_blocks_;
};

}  // namespace az::mcts
