#pragma once

// The rate limiter between inserts and samples, after Reverb's SampleToInsertRatio: the learner may
// draw `samples_per_insert` records per record inserted, give or take `error_buffer` draws, and no
// draw is served before the buffer holds `min_size_to_sample` records. So a learner cannot run away
// from self-play (train the same records over and over); with `block_inserts`, self-play cannot run
// away from the learner either (the sample ring fills and producers wait).
//
//   diff     = inserts * samples_per_insert - samples          (draws the learner is owed)
//   offset   = samples_per_insert * min_size_to_sample
//   a batch of n may be drawn   when size >= min_size_to_sample and diff - n >= offset -
//   error_buffer k records may be inserted   (block_inserts only) when diff + k *
//   samples_per_insert <=
//                               offset + error_buffer, or diff <= offset (so a large insert is
//                               never stuck for good)
//
// Without block_inserts, credit beyond offset + error_buffer is forgiven (counted), so a learner
// that starts late cannot burst through everything inserted before it came. samples_per_insert = 0
// turns the ratio off: only min_size_to_sample applies. A batch larger than error_buffer could
// never be drawn under a ratio and is refused at once (FAILED_PRECONDITION), so neither side can
// deadlock.
//
// Thread-safe. The daemon's sampler and ingest threads wait on it with deadlines (WaitForChange).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/base/status.h"

namespace az::replayd {

struct RateLimiterOptions {
  double samples_per_insert = 0;         // >= 0; 0: no ratio limit
  std::uint64_t min_size_to_sample = 1;  // >= 1
  double error_buffer = 8192;            // >= max(1, samples_per_insert) when the ratio is on
  bool block_inserts = false;            // hold inserts back when the learner is behind
};

// InvalidArgument naming the field when out of range.
Status ValidateRateLimiterOptions(const RateLimiterOptions& options);

struct RateLimiterState {
  RateLimiterOptions options;
  std::uint64_t inserts = 0;       // records counted since start (seeded with the buffer's size)
  std::uint64_t samples = 0;       // draws served since start
  double forgiven = 0;             // draws of credit dropped (without block_inserts)
  double diff = 0;                 // inserts * samples_per_insert - samples - forgiven
  double min_diff = 0;             // a batch of n needs diff - n >= min_diff
  double max_diff = 0;             // an insert of k needs diff + k * samples_per_insert <= max_diff
  std::uint64_t sample_waits = 0;  // sample requests that had to wait
  std::uint64_t sample_timeouts = 0;
  std::uint64_t insert_waits = 0;  // times the ingest path had to wait
  nlohmann::json ToJson() const;
};

class RateLimiter {
 public:
  // `initial_size`: records already in the buffer when the daemon starts; they count as inserted,
  // with at most error_buffer draws of credit. Options must be valid (checked).
  RateLimiter(const RateLimiterOptions& options, std::uint64_t initial_size);

  // OK when a batch of n may be drawn now from a buffer of `size` records, and then counts the n
  // draws as served (check and count are one step, so concurrent callers cannot overshoot);
  // FAILED_PRECONDITION when it never can (n > error_buffer under a ratio); UNAVAILABLE, with the
  // state in the message, when it must wait.
  Status TryAcquireSample(std::uint64_t n, std::uint64_t size);
  // Gives back draws acquired for a batch that could not be drawn after all.
  void RefundSample(std::uint64_t n);
  bool CanInsert(std::uint64_t k) const;

  // Counts inserted records and wakes waiters.
  void OnInsert(std::uint64_t k);
  void CountSampleWait();
  void CountSampleTimeout();
  void CountInsertWait();

  // Replaces the options (InvalidArgument when invalid; nothing changes then) and wakes waiters.
  Status SetOptions(const RateLimiterOptions& options);
  RateLimiterOptions options() const;
  RateLimiterState State() const;

  // A counter that changes whenever something a waiter may be waiting for changes: inserts,
  // samples, options, or Wake(). WaitForChange blocks until it differs from `seen` or `deadline`.
  std::uint64_t version() const;
  void WaitForChange(std::uint64_t seen, std::chrono::steady_clock::time_point deadline) const;
  // Wakes every waiter (for shutdown and for size changes the limiter does not see).
  void Wake();

 private:
  double Offset() const;
  double Diff() const;
  void Changed();  // with mutex_ held

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  RateLimiterOptions options_;
  std::uint64_t inserts_ = 0;
  std::uint64_t samples_ = 0;
  double forgiven_ = 0;
  std::uint64_t version_ = 0;
  std::uint64_t sample_waits_ = 0;
  std::uint64_t sample_timeouts_ = 0;
  std::uint64_t insert_waits_ = 0;
};

}  // namespace az::replayd
