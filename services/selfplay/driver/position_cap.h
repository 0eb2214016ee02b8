#pragma once

// A cap on how often one position is recorded. Self-play from a fixed start records the same
// early positions over and over (in a Connect Four run's replay buffer the distinct positions of
// plies 0-7 are a quarter of their samples, one position 620 times: docs/learning.md), so the
// learner spends its draws on the network's main lines. RecentPositions remembers the positions
// of the last `window` samples recorded and refuses one that is already there `cap` times; the
// refused sample is not pushed, so the buffer (whose last `window` samples the window mirrors when
// it has the buffer's capacity) holds each position at most `cap` times and the learner's draws
// go to the positions it has seen less.
//
// Keys are 64-bit hashes of the position's record (PositionKey); two positions that share a key
// (about one pair in 2^64 / window^2) share a count. Not thread-safe: the engine's thread owns it.

#include <boost/circular_buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <unordered_map>

#include "core/nn/checksum.h"

namespace az::selfplay {

// A position's key: XXH64 of its record's bytes (the evaluator cache's hash).
template <typename Record>
std::uint64_t PositionKey(const Record& record) {
  static_assert(std::is_trivially_copyable_v<Record>);
  return nn::Xxh64(std::as_bytes(std::span<const Record, 1>(&record, 1)));
}

class RecentPositions {
 public:
  // cap >= 1 recordings of one position among the last `window` >= 1 admitted.
  RecentPositions(int cap, std::size_t window)
      : cap_(static_cast<std::uint32_t>(cap)), ring_(window) {
    counts_.reserve(window);
  }

  // True when `key` is among the last `window` admitted positions fewer than `cap` times: it is
  // then admitted (the oldest admission leaves the window once it is full). False otherwise, and
  // nothing changes.
  bool Admit(std::uint64_t key) {
    std::uint32_t& count = counts_[key];
    if (count >= cap_) return false;
    ++count;
    if (ring_.full()) Forget(ring_.front());
    ring_.push_back(key);  // over the oldest, once full
    return true;
  }

  std::size_t admitted_in_window() const { return ring_.size(); }
  std::size_t distinct_in_window() const { return counts_.size(); }

 private:
  void Forget(std::uint64_t key) {
    const auto it = counts_.find(key);
    if (it != counts_.end() && --it->second == 0) counts_.erase(it);
  }

  std::uint32_t cap_;
  boost::circular_buffer<std::uint64_t> ring_;  // the window's admissions, oldest first
  std::unordered_map<std::uint64_t, std::uint32_t> counts_;
};

}  // namespace az::selfplay
