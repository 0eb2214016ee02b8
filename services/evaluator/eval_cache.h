#pragma once

// The evaluator's cache of network answers (docs/evaluator.md, "The cache"): the priors and WDL the
// network gave for a request, found again by the request's record and legal-move list, so that a
// position evaluated before (the start position of every game, transpositions, a subtree reached
// by another path) is answered without the network.
//
//   key        XXH64 of the record's bytes (the record alone determines the network's input);
//   false hits none: an entry stores the whole record and the policy indices it was asked with,
//              and a hit needs the hash, the record's bytes, the move count and every index equal
//              (a different legal list, even a reordered one, misses, so priors can never be
//              handed out for moves they were not computed for);
//   layout     2-way set-associative: the hash picks a set of two entries; an insert takes the way
//              holding the same record, else an empty or stale way, else the least recently used;
//   models     every entry carries the cache's epoch; Clear() bumps the epoch (O(1), nothing is
//              touched), so nothing written before it can hit after it. The batcher clears on every
//              weights change: a hit never returns another model's output;
//   memory     `capacity` entries of sizeof(Entry) bytes (Connect Four and tic-tac-toe 88 B, chess
//              656 B), mapped once and never grown; pages are committed as entries are first
//              written, so a cache that never fills never costs its full size.
//
// Chess entries hold up to 64 moves (kCacheMaxMoves): a position with more is looked up (a miss)
// but never stored. Not thread-safe: the batcher's thread owns it (no locking).

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/base/check.h"
#include "core/base/status.h"
#include "core/games/game.h"
#include "core/nn/checksum.h"
#include "services/common/eval_protocol.h"

namespace az::evaluator {

// The most legal moves one entry holds.
template <typename G>
inline constexpr int kCacheMaxMoves = std::min(service::kEvalMaxMoves<G>, 64);

// The cache size the evaluator accepts: 0 (off) or a power of two in [2, kMaxCacheSize].
inline constexpr std::uint64_t kMaxCacheSize = std::uint64_t{1} << 24;
// InvalidArgument naming `what` otherwise.
Status ValidateCacheSize(std::uint64_t entries, std::string_view what);

// Totals since start.
struct EvalCacheStats {
  std::uint64_t capacity = 0;       // entries; 0: the cache is off
  std::uint64_t entry_bytes = 0;    // bytes per entry
  std::uint64_t entries = 0;        // filled since the last Clear (the current model's)
  std::uint64_t lookups = 0;        // Lookup calls (none while off)
  std::uint64_t hits = 0;           // ... that found the answer
  std::uint64_t insertions = 0;     // entries written
  std::uint64_t evictions = 0;      // current entries replaced by another record's answer
  std::uint64_t invalidations = 0;  // Clear calls
};

// Anonymous memory mapped once (MAP_NORESERVE, zero-filled, committed page by page as written).
class CacheMemory {
 public:
  // ResourceExhausted when the mapping is refused.
  static Result<CacheMemory> Map(std::size_t bytes);
  CacheMemory() = default;
  CacheMemory(CacheMemory&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  CacheMemory& operator=(CacheMemory&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  ~CacheMemory();
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// XXH64 of a record's bytes.
struct RecordBytesHash {
  template <typename Record>
  std::uint64_t operator()(const Record& record) const {
    static_assert(std::is_trivially_copyable_v<Record>);
    return nn::Xxh64(std::as_bytes(std::span<const Record, 1>(&record, 1)));
  }
};

// `Hash` is replaceable so that tests can force collisions.
template <games::Game G, typename Hash = RecordBytesHash>
class EvalCache {
 public:
  using Record = typename G::Record;
  static constexpr int kMaxMoves = kCacheMaxMoves<G>;

  struct Entry {
    std::uint64_t hash;
    std::uint32_t epoch;  // the cache's epoch when written; 0: never written
    std::uint16_t num_moves;
    std::uint16_t reserved;
    Record record;
    std::array<float, 3> wdl;
    std::array<float, kMaxMoves> priors;
    std::array<std::uint16_t, kMaxMoves> indices;
  };
  // Entries live in zero-filled mapped memory: implicit-lifetime, nothing to construct or destroy.
  static_assert(std::is_aggregate_v<Entry> && std::is_trivially_copyable_v<Entry> &&
                std::is_trivially_destructible_v<Entry>);

  // A cache of `capacity` entries: 0 (off: every call is a no-op, Lookup misses without counting)
  // or a power of two in [2, kMaxCacheSize]. InvalidArgument otherwise, ResourceExhausted when the
  // memory cannot be mapped.
  static Result<EvalCache> Create(std::uint64_t capacity) {
    AZ_RETURN_IF_ERROR(ValidateCacheSize(capacity, "cache size"));
    EvalCache cache;
    cache.stats_.capacity = capacity;
    cache.stats_.entry_bytes = sizeof(Entry);
    if (capacity == 0) return cache;
    AZ_ASSIGN_OR_RETURN(cache.memory_, CacheMemory::Map(capacity * sizeof(Entry)));
    AZ_ASSIGN_OR_RETURN(cache.recent_, CacheMemory::Map(capacity / 2));
    cache.set_mask_ = capacity / 2 - 1;
    return cache;
  }

  EvalCache() = default;
  EvalCache(EvalCache&&) noexcept = default;
  EvalCache& operator=(EvalCache&&) noexcept = default;

  bool enabled() const { return memory_.data() != nullptr; }

  // On a hit (this record, asked with exactly these indices, stored since the last Clear) copies
  // indices.size() priors into `priors` and the WDL into `wdl` and returns true.
  template <std::integral Index>
  bool Lookup(const Record& record, std::span<const Index> indices, float* priors, float* wdl) {
    if (!enabled()) return false;
    ++stats_.lookups;
    if (indices.size() > static_cast<std::size_t>(kMaxMoves)) return false;
    const std::uint64_t hash = hash_(record);
    Entry* set = Set(hash);
    for (int way = 0; way < 2; ++way) {
      const Entry& e = set[way];
      if (!Matches(e, hash, record) || !SameIndices(e, indices)) continue;
      std::memcpy(priors, e.priors.data(), indices.size() * sizeof(float));
      std::memcpy(wdl, e.wdl.data(), sizeof e.wdl);
      Recent(hash) = static_cast<std::uint8_t>(way);
      ++stats_.hits;
      return true;
    }
    return false;
  }

  // Stores the network's answer for `record` asked with `indices` (priors in the same order).
  // Replaces an entry of the same record (whatever its indices), else fills an empty or stale way,
  // else evicts the set's least recently used one. A list longer than kMaxMoves is not stored.
  template <std::integral Index>
  void Insert(const Record& record, std::span<const Index> indices, std::span<const float> priors,
              std::span<const float, 3> wdl) {
    if (!enabled() || indices.size() > static_cast<std::size_t>(kMaxMoves)) return;
    AZ_CHECK(priors.size() == indices.size(), "EvalCache::Insert: one prior per index");
    const std::uint64_t hash = hash_(record);
    Entry* set = Set(hash);
    int way = -1;
    for (int w = 0; w < 2 && way < 0; ++w) {
      if (Matches(set[w], hash, record)) way = w;
    }
    for (int w = 0; w < 2 && way < 0; ++w) {
      if (set[w].epoch != epoch_) {
        way = w;
        ++stats_.entries;
      }
    }
    if (way < 0) {
      way = 1 - Recent(hash);
      ++stats_.evictions;
    }
    Entry& e = set[way];
    e.hash = hash;
    e.epoch = epoch_;
    e.num_moves = static_cast<std::uint16_t>(indices.size());
    e.reserved = 0;
    std::memcpy(&e.record, &record, sizeof(Record));
    std::copy(wdl.begin(), wdl.end(), e.wdl.begin());
    std::copy(priors.begin(), priors.end(), e.priors.begin());
    for (std::size_t i = 0; i < indices.size(); ++i) {
      e.indices[i] = static_cast<std::uint16_t>(indices[i]);
    }
    Recent(hash) = static_cast<std::uint8_t>(way);
    ++stats_.insertions;
  }

  // Forgets every entry in O(1): the epoch moves on, so no earlier entry can match again.
  void Clear() {
    ++stats_.invalidations;
    stats_.entries = 0;
    if (!enabled()) return;
    if (++epoch_ == 0) {  // after 2^32 - 1 clears: wipe for real, then start again at 1
      std::memset(memory_.data(), 0, memory_.bytes());
      epoch_ = 1;
    }
  }

  const EvalCacheStats& stats() const { return stats_; }

 private:
  Entry* Set(std::uint64_t hash) const {
    return static_cast<Entry*>(memory_.data()) + 2 * (hash & set_mask_);
  }
  // The way of `hash`'s set used last.
  std::uint8_t& Recent(std::uint64_t hash) const {
    return static_cast<std::uint8_t*>(recent_.data())[hash & set_mask_];
  }

  bool Matches(const Entry& e, std::uint64_t hash, const Record& record) const {
    return e.epoch == epoch_ && e.hash == hash &&
           std::memcmp(&e.record, &record, sizeof(Record)) == 0;
  }

  template <std::integral Index>
  static bool SameIndices(const Entry& e, std::span<const Index> indices) {
    if (std::cmp_not_equal(e.num_moves, indices.size())) return false;
    for (std::size_t i = 0; i < indices.size(); ++i) {
      if (std::cmp_not_equal(e.indices[i], indices[i])) return false;
    }
    return true;
  }

  CacheMemory memory_;  // capacity Entries
  CacheMemory recent_;  // one byte per set: the way used last
  std::uint64_t set_mask_ = 0;
  std::uint32_t epoch_ = 1;  // entries of another epoch are empty
  EvalCacheStats stats_;
  [[no_unique_address]] Hash hash_;
};

}  // namespace az::evaluator
