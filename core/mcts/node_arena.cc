#include "core/mcts/node_arena.h"

namespace az::mcts {

NodeArena::NodeArena(std::uint32_t max_nodes)
    : max_blocks_((static_cast<std::uint64_t>(max_nodes) + kBlockSize - 1) / kBlockSize) {
  AZ_CHECK(max_nodes > 0 && max_nodes < kNullNode, "max_nodes out of range");
}

std::uint32_t NodeArena::Allocate(std::uint32_t count) {
  AZ_CHECK(count >= 1 && count <= kBlockSize, "a run of children must fit one block");
  std::uint32_t first = next_;
  const std::uint32_t offset = first & (kBlockSize - 1);
  // A run never straddles two blocks: skip the tail of this one instead.
  if (offset + count > kBlockSize) first += kBlockSize - offset;
  const std::uint32_t block = first >> kBlockShift;
  if (block >= max_blocks_) return kNullNode;
  if (block >= blocks_.size()) {
    // Blocks are sequential: a new block index is always the next one.
    blocks_.push_back(std::unique_ptr<Node[]>(new Node[kBlockSize]));
  }
  next_ = first + count;
  return first;
}

}  // namespace az::mcts
