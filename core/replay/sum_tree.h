#pragma once

// The sum-tree of priorities: integer leaves (fixed-point priority units, see priority.h), exact
// sums, O(log N) updates and proportional search. Not thread-safe; the store guards it with its
// mutex.
//
// Layout: an 8-ary tree whose nodes are one 64-byte cache line each, holding the running (prefix)
// sums of its 8 children. A search reads one line per level (7 levels at 10^6 leaves instead of 20
// in a binary tree) and finds the child with one 8-wide compare; a batch of searches advances level
// by level, prefetching each search's next line while the others run. An update adds the difference
// to the tail of one line per level. Integer sums are associative, so updating by differences never
// drifts: the root always equals the exact sum of the leaves. The tree also keeps the largest and
// the smallest non-zero leaf (new records enter at the largest; the stats report both).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/base/status.h"

namespace az::replay {

class SumTree {
 public:
  static constexpr int kFanout = 8;

  // All leaves start at 0. capacity must be in [1, 2^32]; the caller keeps every leaf at or below
  // PriorityScale(capacity).max_units(), which keeps the total below 2^62.
  explicit SumTree(std::uint64_t capacity);
  SumTree(SumTree&&) noexcept = default;
  SumTree& operator=(SumTree&&) noexcept = default;

  std::uint64_t capacity() const { return capacity_; }
  int depth() const { return static_cast<int>(levels_.size()); }

  // The exact sum of all leaves. O(1).
  std::uint64_t Total() const;
  // The largest leaf, and the smallest leaf above zero; 0 when every leaf is 0. O(1).
  std::uint64_t Max() const;
  std::uint64_t MinPositive() const;

  std::uint64_t Get(std::uint64_t slot) const;
  // O(log N): one line per level, plus the max/min summaries up to the level where they stop
  // changing.
  void Set(std::uint64_t slot, std::uint64_t units);
  // Sets slots[i] to units[i] for every i, as if one after the other (a later entry for the same
  // slot wins), interleaving the updates level by level so that their cache misses overlap: much
  // faster than one Set() after another when the paths are not in cache.
  void SetMany(std::span<const std::uint64_t> slots, std::span<const std::uint64_t> units);
  // Replaces every leaf (leaves.size() == capacity) in O(N).
  void Assign(std::span<const std::uint64_t> leaves);

  // For each target t (each must be < Total()), the slot whose cumulative range contains t, i.e.
  // the smallest slot s with t < sum(leaves[0..s]); that leaf is never 0. slots and units (the
  // found leaf's value) must have targets.size() entries. Searches are interleaved level by level
  // for speed.
  void Find(std::span<const std::uint64_t> targets, std::span<std::uint64_t> slots,
            std::span<std::uint64_t> units) const;
  std::uint64_t FindOne(std::uint64_t target) const;

  // Recomputes every node and summary from the leaves; an error names the first one that differs.
  // O(N); for tests and for checking a rebuilt tree.
  Status Verify() const;

 private:
  struct Level {
    std::size_t node_offset;  // index of the level's first node in nodes_ and summaries_
    std::size_t nodes;        // nodes in this level
  };
  // The largest leaf and the smallest non-zero leaf below a node (min = ~0 when there is none).
  struct Summary {
    std::uint64_t max;
    std::uint64_t min;
    bool operator==(const Summary&) const = default;
  };
  struct FreeDeleter {
    void operator()(void* p) const;
  };

  std::uint64_t* Node(int level, std::uint64_t node) {
    return nodes_.get() + (levels_[level].node_offset + node) * kFanout;
  }
  const std::uint64_t* Node(int level, std::uint64_t node) const {
    return nodes_.get() + (levels_[level].node_offset + node) * kFanout;
  }
  Summary& SummaryOf(int level, std::uint64_t node) const {
    return summaries_[levels_[level].node_offset + node];
  }
  // The summary of a node computed from its children (or, at the bottom, its leaves).
  Summary Summarize(int level, std::uint64_t node) const;

  std::uint64_t capacity_;
  std::vector<Level> levels_;  // levels_[0] is the root, levels_.back() holds the leaves
  std::size_t total_nodes_ = 0;
  std::unique_ptr<std::uint64_t[], FreeDeleter> nodes_;  // total_nodes_ * kFanout prefix sums
  std::unique_ptr<Summary[], FreeDeleter> summaries_;    // total_nodes_, 8 siblings in 128 bytes
};

}  // namespace az::replay
