#pragma once

// Serves sample requests: draws prioritized batches from the store, one batch ahead of the
// learner, and holds requests the rate limiter says must wait without holding the caller's thread.
// Transport-neutral: every request is answered through its own callback, with a batch or an error;
// the daemon's control handler (services/replay/command_handlers.cc) turns the answer into a ZeroMQ
// reply, and tests answer into plain functions.
//
// A request the limiter allows, with nobody waiting before it, is answered on the submitting thread
// at once: from the prefetched batch when it matches (same batch size and records flag, younger
// than prefetch_max_age; its importance weights are recomputed for the request's beta), else by
// drawing it there. Other requests queue (FIFO) for the
// worker thread, which serves each as soon as the limiter allows, or answers DEADLINE_EXCEEDED with
// the limiter's state when the request's own timeout passes. After each served batch the worker
// draws the next one ahead (prefetch), so a learner that asks again with the same shape gets it
// without waiting for the draw.
//
// A prefetched batch was drawn with the priorities of that moment: updates that arrive between the
// draw and the next request are not reflected in it (as with any learner that samples ahead).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "core/replay/random.h"
#include "core/replay/replay_store.h"
#include "core/replay/sampling.h"
#include "services/replay/server/rate_limiter.h"

namespace az::replayd {

struct SamplerOptions {
  bool prefetch = true;
  std::chrono::milliseconds prefetch_max_age{1000};
  std::uint64_t seed = 0x5eed;
};

struct SampleArgs {
  std::uint32_t batch = 0;  // >= 1
  double beta = 0;          // [0, 1]
  bool with_records = true;
  std::chrono::milliseconds timeout{0};  // how long the request may wait for the limiter
};

// Bytes on the heap that a transport may take over without copying them (ZeroMQ: a message built
// on `data.release()` with a deleter). Not zeroed: every byte is written by the draw.
struct ByteBlock {
  std::unique_ptr<std::byte[]> data;
  std::size_t size = 0;

  static ByteBlock Allocate(std::size_t size);
  std::span<std::byte> span() { return {data.get(), size}; }
  std::span<const std::byte> span() const { return {data.get(), size}; }
};

// A drawn batch, as it goes out.
struct SampledBatch {
  SampleArgs args;
  ByteBlock draws;    // replay::SampledSlot[args.batch]
  ByteBlock records;  // args.batch x record_bytes, in draw order; empty without records
  std::uint64_t record_bytes = 0;
  std::uint64_t size = 0;   // records in the store when drawn
  bool prefetched = false;  // drawn ahead, before the request came
  double waited_ms = 0;     // how long the request waited for the limiter
  std::chrono::steady_clock::time_point drawn_at;

  // The draws as structs (a copy: the block has no alignment promise beyond the allocator's).
  std::vector<replay::SampledSlot> Draws() const;
  // Record i of the batch (records must have been drawn).
  std::span<const std::byte> Record(std::uint32_t i) const;
};

struct SamplerStats {
  std::uint64_t requests = 0;           // sample requests answered with a batch
  std::uint64_t draws = 0;              // records served
  std::uint64_t prefetch_draws = 0;     // batches drawn ahead
  std::uint64_t prefetch_hits = 0;      // requests answered from the batch drawn ahead
  std::uint64_t prefetch_discards = 0;  // batches drawn ahead and thrown away (shape or age)
  std::uint64_t waited = 0;             // requests that waited for the limiter
  std::uint64_t timeouts = 0;           // requests answered DEADLINE_EXCEEDED
  std::uint64_t errors = 0;             // other failed draws
  std::size_t waiting = 0;              // requests waiting now
  double last_beta = 0;
};

class Sampler {
 public:
  // How a request is answered: exactly once, with a batch or an error (see Submit), on the thread
  // that submitted it or on the sampler's worker. It should hand the batch on and return quickly:
  // the worker serves no other request meanwhile.
  using Answer = std::function<void(Result<SampledBatch> batch)>;

  // `store` and `limiter` must outlive the sampler. The worker does not run before Start().
  Sampler(replay::ReplayStore& store, RateLimiter& limiter, const SamplerOptions& options);
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler();  // Stop()

  // Starts the worker thread. Idempotent; does nothing after Stop().
  void Start();
  // Answers every waiting request CANCELLED and joins the worker (waits for a draw in progress, a
  // few milliseconds at most). Requests submitted afterwards are answered CANCELLED at once.
  // Idempotent.
  void Stop();

  // Answers `answer` now or later (see the top of this file). Errors it answers with:
  // FAILED_PRECONDITION when the limiter can never serve the batch (larger than its error buffer);
  // DEADLINE_EXCEEDED, with the limiter's state, when the limiter held the request back for its
  // whole timeout (at once for a timeout of 0); CANCELLED when the sampler stops first; the store's
  // errors for a draw that failed (INVALID_ARGUMENT for a batch of 0). Thread-safe.
  void Submit(const SampleArgs& args, Answer answer);

  void SetPrefetch(bool prefetch, std::chrono::milliseconds max_age);
  SamplerOptions options() const;
  SamplerStats Stats() const;

 private:
  struct Waiting {
    SampleArgs args;
    Answer answer;
    std::chrono::steady_clock::time_point since;
    std::chrono::steady_clock::time_point deadline;
  };

  void Loop();
  // Serves an allowed request (the limiter already counted it): the prefetched batch or a new draw.
  Result<SampledBatch> Serve(const SampleArgs& args, replay::Rng& rng, double waited_ms);
  Result<SampledBatch> Draw(const SampleArgs& args, replay::Rng& rng);
  // Takes the prefetched batch if it fits `args`, waiting for a prefetch of that shape in progress.
  std::optional<SampledBatch> TakePrefetched(const SampleArgs& args);
  static bool SameShape(const SampleArgs& a, const SampleArgs& b);

  replay::ReplayStore& store_;
  RateLimiter& limiter_;
  std::mutex server_rng_mutex_;  // submitting threads share one generator
  replay::Rng server_rng_;       // draws on submitting threads
  replay::Rng worker_rng_;       // the worker's

  mutable std::mutex mutex_;
  std::condition_variable prefetch_done_;
  std::condition_variable work_;  // a request to wait for, a batch to draw ahead, or Stop()
  SamplerOptions options_;
  bool stop_ = false;
  std::deque<Waiting> waiting_;
  std::optional<SampleArgs> prefetch_wanted_;
  std::optional<SampleArgs> prefetching_;  // shape being drawn ahead now
  std::optional<SampledBatch> prefetched_;
  SamplerStats stats_;
  std::thread worker_;
};

}  // namespace az::replayd
