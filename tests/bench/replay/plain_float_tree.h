#pragma once

// The baseline the replay issue asks us to beat: the plain binary float sum-tree of the first
// design sketch. A flat array with the root at 1 and the leaves at [cap, 2cap) (cap rounded up to a
// power of two), updated by adding the difference along the path to the root, searched with one
// scalar descent per draw.

#include <bit>
#include <cstdint>
#include <vector>

namespace az::replay::bench {

class PlainFloatTree {
 public:
  explicit PlainFloatTree(std::uint64_t capacity)
      : leaves_(std::bit_ceil(capacity)), tree_(2 * leaves_, 0.0f) {}

  float Total() const { return tree_[1]; }
  float Get(std::uint64_t slot) const { return tree_[leaves_ + slot]; }

  void Set(std::uint64_t slot, float priority) {
    std::uint64_t i = leaves_ + slot;
    const float delta = priority - tree_[i];
    for (; i >= 1; i /= 2) tree_[i] += delta;
  }

  // Fills every leaf and sums the levels bottom-up (exact to float rounding at the start).
  void Assign(const std::vector<float>& priorities) {
    for (std::uint64_t i = 0; i < priorities.size(); ++i) tree_[leaves_ + i] = priorities[i];
    for (std::uint64_t i = leaves_ - 1; i >= 1; --i) tree_[i] = tree_[2 * i] + tree_[2 * i + 1];
  }

  std::uint64_t Find(float target) const {
    std::uint64_t i = 1;
    while (i < leaves_) {
      const float left = tree_[2 * i];
      if (target < left) {
        i = 2 * i;
      } else {
        target -= left;
        i = 2 * i + 1;
      }
    }
    return i - leaves_;
  }

 private:
  std::uint64_t leaves_;
  std::vector<float> tree_;
};

}  // namespace az::replay::bench
