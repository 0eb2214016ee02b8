#pragma once

// An in-process SampleSink for the self-play driver's tests: a bounded queue of records that the
// test drains. Push blocks (up to its timeout) while the queue holds `capacity` records, as the
// sample ring does while az-replay is away.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <mutex>
#include <vector>

#include "services/selfplay/driver/sample_sink.h"

namespace az::selfplay::testing {

template <typename Sample>
class FakeSampleSink final : public SampleSink {
 public:
  // capacity 0: never full.
  explicit FakeSampleSink(std::size_t capacity = 0) : capacity_(capacity) {}

  // --- Test side, from any thread. ---

  // Takes every record queued so far.
  std::vector<Sample> Drain() {
    std::vector<Sample> out;
    {
      std::lock_guard lock(mutex_);
      out.assign(queue_.begin(), queue_.end());
      queue_.clear();
    }
    cv_.notify_all();
    return out;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }
  std::size_t pushed() const {
    std::lock_guard lock(mutex_);
    return pushed_;
  }
  void SetCapacity(std::size_t capacity) {
    {
      std::lock_guard lock(mutex_);
      capacity_ = capacity;
    }
    cv_.notify_all();
  }

  // --- SampleSink. ---

  std::uint32_t record_bytes() const override { return sizeof(Sample); }

  Result<std::size_t> Push(std::span<const std::byte> records,
                           std::chrono::milliseconds timeout) override {
    const std::size_t n = records.size() / sizeof(Sample);
    std::unique_lock lock(mutex_);
    for (std::size_t i = 0; i < n; ++i) {
      const bool room =
          cv_.wait_for(lock, timeout, [&] { return capacity_ == 0 || queue_.size() < capacity_; });
      if (!room) {
        if (i > 0) return i;
        return DeadlineExceeded("the fake sink is full");
      }
      Sample sample;
      std::memcpy(&sample, records.data() + i * sizeof(Sample), sizeof(Sample));
      queue_.push_back(sample);
      ++pushed_;
    }
    return n;
  }
  std::string_view name() const override { return "the fake sink"; }
  std::string_view consumer() const override { return "the test"; }

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t capacity_;
  std::deque<Sample> queue_;
  std::size_t pushed_ = 0;
};

}  // namespace az::selfplay::testing
