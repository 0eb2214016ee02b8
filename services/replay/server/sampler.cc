#include "services/replay/server/sampler.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace az::replayd {
namespace {

using Clock = std::chrono::steady_clock;

double MillisSince(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

}  // namespace

ByteBlock ByteBlock::Allocate(std::size_t size) {
  // Default-initialised, not zeroed: the draw writes every byte.
  return ByteBlock{std::unique_ptr<std::byte[]>(new std::byte[size]), size};
}

std::vector<replay::SampledSlot> SampledBatch::Draws() const {
  std::vector<replay::SampledSlot> out(draws.size / sizeof(replay::SampledSlot));
  if (!out.empty()) std::memcpy(out.data(), draws.data.get(), out.size() * sizeof out[0]);
  return out;
}

std::span<const std::byte> SampledBatch::Record(std::uint32_t i) const {
  AZ_CHECK(i < args.batch && records.size == args.batch * record_bytes,
           "record " + std::to_string(i) + " of a batch of " + std::to_string(args.batch) +
               (args.with_records ? "" : " drawn without records"));
  return records.span().subspan(i * record_bytes, record_bytes);
}

Sampler::Sampler(replay::ReplayStore& store, RateLimiter& limiter, const SamplerOptions& options)
    : store_(store),
      limiter_(limiter),
      server_rng_(options.seed),
      worker_rng_(options.seed ^ 0x9e3779b97f4a7c15ULL),
      options_(options) {}

Sampler::~Sampler() { Stop(); }

void Sampler::Start() {
  std::lock_guard lock(mutex_);
  if (worker_.joinable() || stop_) return;
  worker_ = std::thread([this] { Loop(); });
}

void Sampler::Stop() {
  std::deque<Waiting> waiting;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    waiting.swap(waiting_);
    stats_.waiting = 0;
  }
  limiter_.Wake();
  work_.notify_all();
  prefetch_done_.notify_all();
  if (worker_.joinable()) worker_.join();
  for (Waiting& w : waiting) w.answer(Cancelled("the replay daemon is shutting down"));
}

// Beta is not part of the shape: which records are drawn does not depend on it, only their
// importance weights do, and those are recomputed for the request's beta when it differs (the
// learner's beta moves every step, so a prefetch keyed on it never served).
bool Sampler::SameShape(const SampleArgs& a, const SampleArgs& b) {
  return a.batch == b.batch && a.with_records == b.with_records;
}

void Sampler::SetPrefetch(bool prefetch, std::chrono::milliseconds max_age) {
  std::lock_guard lock(mutex_);
  options_.prefetch = prefetch;
  options_.prefetch_max_age = max_age;
  if (!prefetch && prefetched_) {
    prefetched_.reset();
    ++stats_.prefetch_discards;
  }
}

SamplerOptions Sampler::options() const {
  std::lock_guard lock(mutex_);
  return options_;
}

SamplerStats Sampler::Stats() const {
  std::lock_guard lock(mutex_);
  SamplerStats stats = stats_;
  stats.waiting = waiting_.size();
  return stats;
}

void Sampler::Submit(const SampleArgs& args, Answer answer) {
  const Clock::time_point now = Clock::now();
  {
    std::lock_guard lock(mutex_);
    if (stop_) {
      answer(Cancelled("the replay daemon is shutting down"));
      return;
    }
    // Requests already waiting go first.
    if (!waiting_.empty()) {
      waiting_.push_back({args, std::move(answer), now, now + args.timeout});
      ++stats_.waited;
      limiter_.CountSampleWait();
      limiter_.Wake();  // the worker may be waiting on the limiter until a later deadline
      work_.notify_all();
      return;
    }
  }
  const Status allowed = limiter_.TryAcquireSample(args.batch, store_.Stats().size);
  if (allowed.ok()) {
    Result<SampledBatch> batch = [&] {
      std::lock_guard rng(server_rng_mutex_);
      return Serve(args, server_rng_, 0);
    }();
    answer(std::move(batch));
    return;
  }
  if (allowed.code() != StatusCode::kUnavailable || args.timeout.count() <= 0) {
    if (allowed.code() == StatusCode::kUnavailable) {
      limiter_.CountSampleTimeout();
      std::lock_guard lock(mutex_);
      ++stats_.timeouts;
    }
    answer(allowed.code() == StatusCode::kUnavailable
               ? DeadlineExceeded("rate limiter: " + allowed.message())
               : allowed);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (stop_) {
      answer(Cancelled("the replay daemon is shutting down"));
      return;
    }
    waiting_.push_back({args, std::move(answer), now, now + args.timeout});
    ++stats_.waited;
  }
  limiter_.CountSampleWait();
  limiter_.Wake();
  work_.notify_all();
}

Result<SampledBatch> Sampler::Serve(const SampleArgs& args, replay::Rng& rng, double waited_ms) {
  std::optional<SampledBatch> batch = TakePrefetched(args);
  const bool prefetched = batch.has_value();
  if (!batch) {
    Result<SampledBatch> drawn = Draw(args, rng);
    if (!drawn.ok()) {
      limiter_.RefundSample(args.batch);
      std::lock_guard lock(mutex_);
      ++stats_.errors;
      return drawn.status();
    }
    batch.emplace(std::move(drawn).value());
  }
  batch->prefetched = prefetched;
  batch->waited_ms = waited_ms;
  {
    std::lock_guard lock(mutex_);
    ++stats_.requests;
    stats_.draws += args.batch;
    stats_.last_beta = args.beta;
    if (prefetched) ++stats_.prefetch_hits;
    if (options_.prefetch) prefetch_wanted_ = args;
  }
  work_.notify_all();  // the worker draws the next batch ahead
  return std::move(*batch);
}

Result<SampledBatch> Sampler::Draw(const SampleArgs& args, replay::Rng& rng) {
  SampledBatch batch;
  batch.args = args;
  batch.record_bytes = store_.record_size();
  batch.draws = ByteBlock::Allocate(args.batch * sizeof(replay::SampledSlot));
  batch.records = ByteBlock::Allocate(args.with_records ? args.batch * store_.record_size() : 0);
  // operator new[] aligns to at least alignof(std::max_align_t), enough for SampledSlot.
  std::span<replay::SampledSlot> draws(
      reinterpret_cast<replay::SampledSlot*>(batch.draws.data.get()), args.batch);
  AZ_RETURN_IF_ERROR(store_.Sample(args.beta, rng, draws, batch.records.span()));
  batch.drawn_at = Clock::now();
  batch.size = store_.Stats().size;
  return batch;
}

std::optional<SampledBatch> Sampler::TakePrefetched(const SampleArgs& args) {
  std::unique_lock lock(mutex_);
  // A prefetch of this shape being drawn now is nearly done: cheaper to wait than to draw again.
  prefetch_done_.wait(lock,
                      [&] { return stop_ || !prefetching_ || !SameShape(*prefetching_, args); });
  if (!prefetched_) return std::nullopt;
  std::optional<SampledBatch> batch = std::move(prefetched_);
  prefetched_.reset();
  if (!SameShape(batch->args, args) || Clock::now() - batch->drawn_at > options_.prefetch_max_age) {
    ++stats_.prefetch_discards;
    return std::nullopt;
  }
  if (batch->args.beta != args.beta) {
    replay::SetImportanceWeights(
        std::span(reinterpret_cast<replay::SampledSlot*>(batch->draws.data.get()), args.batch),
        args.beta);
  }
  batch->args = args;
  return batch;
}

void Sampler::Loop() {
  while (true) {
    const std::uint64_t seen = limiter_.version();
    std::unique_lock lock(mutex_);
    if (stop_) return;
    Clock::time_point wake_at = Clock::now() + std::chrono::seconds(1);
    bool progressed = false;
    // Waiting requests, in order: serve the head when allowed, time out whoever is due.
    while (!waiting_.empty()) {
      Waiting& head = waiting_.front();
      const Clock::time_point now = Clock::now();
      lock.unlock();
      const Status allowed = limiter_.TryAcquireSample(head.args.batch, store_.Stats().size);
      lock.lock();
      if (stop_) {
        if (allowed.ok()) limiter_.RefundSample(head.args.batch);
        return;  // Stop() answers the queue
      }
      if (allowed.ok() || allowed.code() != StatusCode::kUnavailable || now >= head.deadline) {
        Waiting done = std::move(waiting_.front());
        waiting_.pop_front();
        lock.unlock();
        if (allowed.ok()) {
          done.answer(Serve(done.args, worker_rng_, MillisSince(done.since)));
        } else if (allowed.code() != StatusCode::kUnavailable) {
          done.answer(allowed);
        } else {
          limiter_.CountSampleTimeout();
          {
            std::lock_guard count(mutex_);
            ++stats_.timeouts;
          }
          done.answer(DeadlineExceeded(
              "rate limiter: waited " +
              std::to_string(static_cast<long long>(MillisSince(done.since))) + " ms; " +
              allowed.message() + "; limiter state " + limiter_.State().ToJson().dump()));
        }
        lock.lock();
        progressed = true;
        continue;
      }
      // The head must wait; later requests wait behind it, but may time out on their own.
      wake_at = std::min(wake_at, head.deadline);
      std::vector<Waiting> expired;
      for (auto it = waiting_.begin() + 1; it != waiting_.end();) {
        if (now >= it->deadline) {
          expired.push_back(std::move(*it));
          it = waiting_.erase(it);
          ++stats_.timeouts;
        } else {
          wake_at = std::min(wake_at, it->deadline);
          ++it;
        }
      }
      if (!expired.empty()) {
        // Answered without the mutex: an answer may call back into the sampler (Stats()).
        lock.unlock();
        for (Waiting& done : expired) {
          limiter_.CountSampleTimeout();
          done.answer(DeadlineExceeded(
              "rate limiter: waited " +
              std::to_string(static_cast<long long>(MillisSince(done.since))) +
              " ms behind earlier requests; limiter state " + limiter_.State().ToJson().dump()));
        }
        lock.lock();
        progressed = true;
      }
      break;
    }
    if (progressed) continue;
    // Draw the next batch ahead of the learner.
    if (waiting_.empty() && prefetch_wanted_ && options_.prefetch) {
      const SampleArgs args = *prefetch_wanted_;
      prefetch_wanted_.reset();
      if (prefetched_) {
        prefetched_.reset();
        ++stats_.prefetch_discards;
      }
      prefetching_ = args;
      lock.unlock();
      Result<SampledBatch> drawn = Draw(args, worker_rng_);
      lock.lock();
      prefetching_.reset();
      if (drawn.ok()) {
        prefetched_.emplace(std::move(drawn).value());
        ++stats_.prefetch_draws;
      }
      prefetch_done_.notify_all();
      continue;
    }
    if (waiting_.empty()) {
      // Nothing waits for the limiter: sleep on our own condition, not on every insert.
      work_.wait_until(lock, wake_at, [&] {
        return stop_ || !waiting_.empty() || (prefetch_wanted_ && options_.prefetch);
      });
      continue;
    }
    lock.unlock();
    limiter_.WaitForChange(seen, wake_at);
  }
}

}  // namespace az::replayd
