#pragma once

// Serves `sample` requests: draws prioritized batches from the store straight into the reply's
// frames, one batch ahead of the learner, and holds requests the rate limiter says must wait
// without holding the control server's thread.
//
// A request the limiter allows, with nobody waiting before it, is answered on the server thread at
// once: from the prefetched batch when it matches (same batch size, beta and records flag, younger
// than prefetch_max_age), else by drawing it there. Other requests queue (FIFO) for the worker
// thread, which serves each as soon as the limiter allows, or answers DEADLINE_EXCEEDED with the
// limiter's state when the request's own timeout passes. After each served batch the worker draws
// the next one ahead (prefetch), so a learner that asks again with the same shape gets it without
// waiting for the draw.
//
// A prefetched batch was drawn with the priorities of that moment: updates that arrive between the
// draw and the next request are not reflected in it (as with any learner that samples ahead).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <zmq.hpp>

#include "core/replay/random.h"
#include "core/replay/replay_store.h"
#include "ipc/server.h"
#include "services/replay/rate_limiter.h"

namespace az::replayd {

struct SamplerOptions {
  bool prefetch = true;
  std::chrono::milliseconds prefetch_max_age{1000};
  std::uint64_t seed = 0x5eed;
};

struct SampleArgs {
  std::uint32_t batch = 0;
  double beta = 0;
  bool with_records = true;
  std::chrono::milliseconds timeout{0};  // how long the request may wait for the limiter
};

// A drawn batch, as it goes out: frames[0] SampledSlot[batch], frames[1] the records.
struct DrawnBatch {
  SampleArgs args;
  zmq::message_t draws;
  zmq::message_t records;  // empty without records
  std::chrono::steady_clock::time_point drawn_at;
  std::uint64_t size = 0;  // records in the store when drawn
};

struct SamplerStats {
  std::uint64_t requests = 0;           // sample requests answered with a batch
  std::uint64_t draws = 0;              // records served
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
  // `on_served` is called (on the thread that answers) with each batch just before it is sent, to
  // add fields to the reply body and observe metrics.
  using OnServed = std::function<void(const DrawnBatch& batch, nlohmann::json& body)>;

  Sampler(replay::ReplayStore& store, RateLimiter& limiter, const SamplerOptions& options,
          OnServed on_served);
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler();  // Stop()

  // Starts the worker thread.
  void Start();
  // Answers every waiting request CANCELLED and joins the worker. Requests submitted afterwards are
  // answered CANCELLED at once. Idempotent.
  void Stop();

  // Answers `responder` now or later (see the top of this file). Called on the server thread.
  void Submit(const SampleArgs& args, ipc::Responder responder);

  void SetPrefetch(bool prefetch, std::chrono::milliseconds max_age);
  SamplerOptions options() const;
  SamplerStats Stats() const;

 private:
  struct Waiting {
    SampleArgs args;
    ipc::Responder responder;
    std::chrono::steady_clock::time_point since;
    std::chrono::steady_clock::time_point deadline;
  };

  void Loop();
  // Serves an allowed request (the limiter already counted it): the prefetched batch or a new draw.
  Result<ipc::Reply> Serve(const SampleArgs& args, replay::Rng& rng, double waited_ms);
  Result<DrawnBatch> Draw(const SampleArgs& args, replay::Rng& rng);
  // Takes the prefetched batch if it fits `args`, waiting for a prefetch of that shape in progress.
  std::optional<DrawnBatch> TakePrefetched(const SampleArgs& args);
  static bool SameShape(const SampleArgs& a, const SampleArgs& b);

  replay::ReplayStore& store_;
  RateLimiter& limiter_;
  OnServed on_served_;
  replay::Rng server_rng_;  // the server thread's draws
  replay::Rng worker_rng_;  // the worker's

  mutable std::mutex mutex_;
  std::condition_variable prefetch_done_;
  std::condition_variable work_;  // a request to wait for, a batch to draw ahead, or Stop()
  SamplerOptions options_;
  bool stop_ = false;
  std::deque<Waiting> waiting_;
  std::optional<SampleArgs> prefetch_wanted_;
  std::optional<SampleArgs> prefetching_;  // shape being drawn ahead now
  std::optional<DrawnBatch> prefetched_;
  SamplerStats stats_;
  std::thread worker_;
};

}  // namespace az::replayd
