#include "core/replay/sum_tree.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/base/check.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace az::replay {
namespace {

constexpr std::uint64_t kNoPositive = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kCacheLine = 64;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Searches advanced together, level by level: enough to cover the memory latency of the lower
// levels with independent loads, few enough that their lines stay in L1 between levels.
constexpr std::size_t kInterleave = 128;

template <typename T>
T* AllocateAligned(std::size_t count, T fill) {
  std::size_t bytes = std::max<std::size_t>(count * sizeof(T), kCacheLine);
  // Large arrays on 2 MiB boundaries so that transparent huge pages can back them: a search touches
  // one line per level spread over the whole array, and 4 KiB pages would add a TLB miss to each.
  const std::size_t alignment = bytes >= kHugePage ? kHugePage : kCacheLine;
  bytes = (bytes + alignment - 1) / alignment * alignment;
  auto* p = static_cast<T*>(std::aligned_alloc(alignment, bytes));
  AZ_CHECK(p != nullptr,
           "out of memory allocating a sum-tree of " + std::to_string(bytes) + " bytes");
  std::fill(p, p + count, fill);
  return p;
}

// Index of the child whose range holds `target` in a node of prefix sums: the number of prefix sums
// that are <= target. `*before` gets the prefix sum before that child.
inline int SearchNode(const std::uint64_t* e, std::uint64_t target, std::uint64_t* before) {
#if defined(__AVX512F__)
  const __m512i sums = _mm512_load_si512(e);
  const __mmask8 le =
      _mm512_cmple_epu64_mask(sums, _mm512_set1_epi64(static_cast<long long>(target)));
  const int j = std::popcount(static_cast<unsigned>(le));
#else
  int j = 0;
  for (int i = 0; i < SumTree::kFanout; ++i) j += e[i] <= target ? 1 : 0;
#endif
  *before = j == 0 ? 0 : e[j - 1];
  return j;
}

// Adds `delta` to the prefix sums of children j..7 of a node: the running sums after a child that
// changed by `delta`. Branch-free, since j is random and a data-dependent loop mispredicts.
inline void AddFrom(std::uint64_t* e, int j, std::uint64_t delta) {
#if defined(__AVX512F__)
  const auto mask = static_cast<__mmask8>(0xffu << j);
  const __m512i sums = _mm512_load_si512(e);
  _mm512_store_si512(
      e, _mm512_mask_add_epi64(sums, mask, sums, _mm512_set1_epi64(static_cast<long long>(delta))));
#else
  for (int i = 0; i < SumTree::kFanout; ++i) e[i] += i >= j ? delta : 0;
#endif
}

// Differences for the 8 prefix sums of one node, gathered before they are added to it.
class NodeDelta {
 public:
#if defined(__AVX512F__)
  void Add(int j, std::uint64_t delta) {
    sum_ = _mm512_mask_add_epi64(sum_, static_cast<__mmask8>(0xffu << j), sum_,
                                 _mm512_set1_epi64(static_cast<long long>(delta)));
  }
  // Adds the gathered differences to `e` and starts over.
  void AddTo(std::uint64_t* e) {
    _mm512_store_si512(e, _mm512_add_epi64(_mm512_load_si512(e), sum_));
    sum_ = _mm512_setzero_si512();
  }

 private:
  __m512i sum_ = _mm512_setzero_si512();
#else
  void Add(int j, std::uint64_t delta) {
    for (int i = 0; i < SumTree::kFanout; ++i) sum_[i] += i >= j ? delta : 0;
  }
  void AddTo(std::uint64_t* e) {
    for (int i = 0; i < SumTree::kFanout; ++i) {
      e[i] += sum_[i];
      sum_[i] = 0;
    }
  }

 private:
  std::uint64_t sum_[SumTree::kFanout] = {};
#endif
};

// The largest leaf and the smallest non-zero leaf of a bottom node of prefix sums.
inline void LeafMaxMin(const std::uint64_t* e, std::uint64_t* max, std::uint64_t* min) {
#if defined(__AVX512F__)
  const __m512i sums = _mm512_load_si512(e);
  // [0, e0, ..., e6]: each leaf is its prefix sum minus the one before.
  const __m512i before =
      _mm512_maskz_permutexvar_epi64(0xfe, _mm512_set_epi64(6, 5, 4, 3, 2, 1, 0, 0), sums);
  // Zero leaves become all ones, so they never win the minimum.
  const __m512i leaves = _mm512_sub_epi64(sums, before);
  const __m512i nonzero = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(leaves, leaves),
                                                  _mm512_set1_epi64(-1), leaves);
  alignas(64) std::uint64_t hi[SumTree::kFanout], lo[SumTree::kFanout];
  _mm512_store_si512(hi, leaves);
  _mm512_store_si512(lo, nonzero);
  *max = *std::max_element(hi, hi + SumTree::kFanout);
  *min = *std::min_element(lo, lo + SumTree::kFanout);
#else
  std::uint64_t hi = 0, lo = kNoPositive, previous = 0;
  for (int i = 0; i < SumTree::kFanout; ++i) {
    const std::uint64_t leaf = e[i] - previous;
    previous = e[i];
    hi = std::max(hi, leaf);
    lo = std::min(lo, leaf == 0 ? kNoPositive : leaf);
  }
  *max = hi;
  *min = lo;
#endif
}

}  // namespace

void SumTree::FreeDeleter::operator()(void* p) const { std::free(p); }

SumTree::SumTree(std::uint64_t capacity) : capacity_(capacity) {
  AZ_CHECK(capacity >= 1 && capacity <= (std::uint64_t{1} << 32), "sum-tree capacity out of range");
  std::vector<std::size_t> counts;
  std::uint64_t count = (capacity + kFanout - 1) / kFanout;
  counts.push_back(count);
  while (count > 1) {
    count = (count + kFanout - 1) / kFanout;
    counts.push_back(count);
  }
  std::reverse(counts.begin(), counts.end());
  // Each level is padded to a multiple of 8 nodes so that the 8 children of any node exist; padding
  // nodes hold zeros and are never reached by a search.
  for (std::size_t nodes : counts) {
    levels_.push_back({total_nodes_, nodes});
    total_nodes_ += (nodes + kFanout - 1) / kFanout * kFanout;
  }
  nodes_.reset(AllocateAligned<std::uint64_t>(total_nodes_ * kFanout, 0));
  summaries_.reset(AllocateAligned<Summary>(total_nodes_, Summary{0, kNoPositive}));
}

std::uint64_t SumTree::Total() const { return Node(0, 0)[kFanout - 1]; }
std::uint64_t SumTree::Max() const { return summaries_[0].max; }
std::uint64_t SumTree::MinPositive() const {
  return summaries_[0].min == kNoPositive ? 0 : summaries_[0].min;
}

std::uint64_t SumTree::Get(std::uint64_t slot) const {
  AZ_CHECK(slot < capacity_, "slot out of range");
  const std::uint64_t* e = Node(depth() - 1, slot / kFanout);
  const int j = static_cast<int>(slot % kFanout);
  return e[j] - (j == 0 ? 0 : e[j - 1]);
}

void SumTree::Set(std::uint64_t slot, std::uint64_t units) { SetMany({&slot, 1}, {&units, 1}); }

void SumTree::SetMany(std::span<const std::uint64_t> slots, std::span<const std::uint64_t> units) {
  AZ_CHECK(slots.size() == units.size());
  const int bottom = depth() - 1;
  std::uint64_t node[kInterleave];
  std::uint64_t delta[kInterleave];
  std::uint64_t active[kInterleave];
  for (std::size_t base = 0; base < slots.size(); base += kInterleave) {
    const std::size_t n = std::min(kInterleave, slots.size() - base);
    for (std::size_t k = 0; k < n; ++k) {
      AZ_CHECK(slots[base + k] < capacity_, "slot out of range");
      __builtin_prefetch(Node(bottom, slots[base + k] / kFanout), 1);
    }
    // The leaves, in order, so that a later update of a slot sees the earlier one. Modular
    // arithmetic: adding (units - old) is exact whether the leaf grows or shrinks.
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t slot = slots[base + k];
      std::uint64_t* e = Node(bottom, slot / kFanout);
      const int j = static_cast<int>(slot % kFanout);
      delta[k] = units[base + k] - (e[j] - (j == 0 ? 0 : e[j - 1]));
      AddFrom(e, j, delta[k]);
      node[k] = slot / kFanout;
      if (bottom > 0) __builtin_prefetch(Node(bottom - 1, node[k] / kFanout), 1);
      __builtin_prefetch(&SummaryOf(bottom, node[k]), 1);
    }
    // The differences up the levels; sums commute, so the order no longer matters. Consecutive
    // updates under the same node (a stratified batch is sorted, so its paths share the upper
    // levels) are summed in registers and written once, instead of a chain of read-modify-writes
    // through one cache line.
    for (int level = bottom - 1; level >= 0; --level) {
      NodeDelta pending;
      std::uint64_t* current = nullptr;
      for (std::size_t k = 0; k < n; ++k) {
        if (delta[k] == 0) continue;
        const int j = static_cast<int>(node[k] % kFanout);
        node[k] /= kFanout;
        std::uint64_t* e = Node(level, node[k]);
        if (e != current) {
          if (current != nullptr) pending.AddTo(current);
          current = e;
        }
        pending.Add(j, delta[k]);
        if (level > 0) __builtin_prefetch(Node(level - 1, node[k] / kFanout), 1);
      }
      if (current != nullptr) pending.AddTo(current);
    }
    // The max/min summaries, level by level, only above nodes whose summary changed; recomputing a
    // node twice (two updates below it) is harmless.
    std::size_t live = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (delta[k] != 0) active[live++] = slots[base + k] / kFanout;
    }
    for (int level = bottom; level >= 0 && live > 0; --level) {
      std::size_t still = 0;
      for (std::size_t i = 0; i < live; ++i) {
        const Summary summary = Summarize(level, active[i]);
        Summary& stored = SummaryOf(level, active[i]);
        // Unchanged here means unchanged above: most walks stop after a level or two.
        if (stored == summary) continue;
        stored = summary;
        if (level == 0) continue;
        const std::uint64_t parent = active[i] / kFanout;
        active[still++] = parent;
        const Summary* siblings = &SummaryOf(level, parent * kFanout);
        __builtin_prefetch(siblings);
        __builtin_prefetch(siblings + kFanout / 2);
        __builtin_prefetch(&SummaryOf(level - 1, parent), 1);
      }
      live = still;
    }
  }
}

SumTree::Summary SumTree::Summarize(int level, std::uint64_t node) const {
  Summary summary{0, kNoPositive};
  if (level == depth() - 1) {
    LeafMaxMin(Node(level, node), &summary.max, &summary.min);
  } else {
    const Summary* children = &SummaryOf(level + 1, node * kFanout);
    for (int i = 0; i < kFanout; ++i) {
      summary.max = std::max(summary.max, children[i].max);
      summary.min = std::min(summary.min, children[i].min);
    }
  }
  return summary;
}

void SumTree::Assign(std::span<const std::uint64_t> leaves) {
  AZ_CHECK(leaves.size() == capacity_, "Assign needs one value per slot");
  std::fill(nodes_.get(), nodes_.get() + total_nodes_ * kFanout, 0);
  const int bottom = depth() - 1;
  for (std::uint64_t node = 0; node < levels_[bottom].nodes; ++node) {
    std::uint64_t* e = Node(bottom, node);
    std::uint64_t sum = 0;
    for (int i = 0; i < kFanout; ++i) {
      const std::uint64_t slot = node * kFanout + i;
      if (slot < capacity_) sum += leaves[slot];
      e[i] = sum;
    }
  }
  for (int level = bottom - 1; level >= 0; --level) {
    for (std::uint64_t node = 0; node < levels_[level].nodes; ++node) {
      std::uint64_t* e = Node(level, node);
      std::uint64_t sum = 0;
      for (int i = 0; i < kFanout; ++i) {
        sum += Node(level + 1, node * kFanout + i)[kFanout - 1];
        e[i] = sum;
      }
    }
  }
  for (int level = bottom; level >= 0; --level) {
    for (std::uint64_t node = 0; node < levels_[level].nodes; ++node) {
      SummaryOf(level, node) = Summarize(level, node);
    }
  }
}

std::uint64_t SumTree::FindOne(std::uint64_t target) const {
  std::uint64_t slot = 0;
  std::uint64_t units = 0;
  Find({&target, 1}, {&slot, 1}, {&units, 1});
  return slot;
}

void SumTree::Find(std::span<const std::uint64_t> targets, std::span<std::uint64_t> slots,
                   std::span<std::uint64_t> units) const {
  AZ_CHECK(slots.size() == targets.size() && units.size() == targets.size());
  const std::uint64_t total = Total();
  const int bottom = depth() - 1;
  std::uint64_t node[kInterleave];
  std::uint64_t rest[kInterleave];
  for (std::size_t base = 0; base < targets.size(); base += kInterleave) {
    const std::size_t n = std::min(kInterleave, targets.size() - base);
    for (std::size_t k = 0; k < n; ++k) {
      AZ_CHECK(targets[base + k] < total, "sum-tree search target beyond the total");
      node[k] = 0;
      rest[k] = targets[base + k];
    }
    for (int level = 0; level < bottom; ++level) {
      const std::uint64_t* nodes = Node(level, 0);
      const std::uint64_t* next = Node(level + 1, 0);
      for (std::size_t k = 0; k < n; ++k) {
        std::uint64_t before;
        const int j = SearchNode(nodes + node[k] * kFanout, rest[k], &before);
        rest[k] -= before;
        node[k] = node[k] * kFanout + j;
        __builtin_prefetch(next + node[k] * kFanout);
      }
    }
    const std::uint64_t* leaves = Node(bottom, 0);
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t* e = leaves + node[k] * kFanout;
      std::uint64_t before;
      const int j = SearchNode(e, rest[k], &before);
      slots[base + k] = node[k] * kFanout + j;
      units[base + k] = e[j] - before;
    }
  }
}

Status SumTree::Verify() const {
  const int bottom = depth() - 1;
  for (int level = bottom; level >= 0; --level) {
    for (std::uint64_t node = 0; node < levels_[level].nodes; ++node) {
      const std::uint64_t* e = Node(level, node);
      std::uint64_t sum = 0;
      for (int i = 0; i < kFanout; ++i) {
        std::uint64_t child;
        if (level == bottom) {
          const std::uint64_t slot = node * kFanout + i;
          child = e[i] - (i == 0 ? 0 : e[i - 1]);
          if (e[i] < (i == 0 ? 0 : e[i - 1])) {
            return Internal("sum-tree leaf " + std::to_string(slot) + " is negative");
          }
          if (slot >= capacity_ && child != 0) {
            return Internal("sum-tree padding leaf " + std::to_string(slot) + " is not zero");
          }
        } else {
          child = Node(level + 1, node * kFanout + i)[kFanout - 1];
        }
        sum += child;
        if (e[i] != sum) {
          return Internal("sum-tree level " + std::to_string(level) + " node " +
                          std::to_string(node) + " entry " + std::to_string(i) + " holds " +
                          std::to_string(e[i]) + ", its children sum to " + std::to_string(sum));
        }
      }
      if (!(SummaryOf(level, node) == Summarize(level, node))) {
        return Internal("sum-tree level " + std::to_string(level) + " node " +
                        std::to_string(node) + " has a stale max/min summary");
      }
    }
  }
  std::uint64_t leaves = 0;
  for (std::uint64_t slot = 0; slot < capacity_; ++slot) leaves += Get(slot);
  if (leaves != Total()) {
    return Internal("sum-tree root " + std::to_string(Total()) + " differs from the leaves' sum " +
                    std::to_string(leaves));
  }
  return Status::Ok();
}

}  // namespace az::replay
