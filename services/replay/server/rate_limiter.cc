#include "services/replay/server/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace az::replayd {
namespace {

std::string Number(double value) {
  std::string text = std::to_string(value);
  // "12.500000" -> "12.5"
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

}  // namespace

Status ValidateRateLimiterOptions(const RateLimiterOptions& options) {
  if (!(options.samples_per_insert >= 0) || !std::isfinite(options.samples_per_insert)) {
    return InvalidArgument("samples_per_insert must be a finite number >= 0, got " +
                           Number(options.samples_per_insert));
  }
  if (options.min_size_to_sample < 1) {
    return InvalidArgument("min_size_to_sample must be at least 1");
  }
  if (!(options.error_buffer >= 0) || !std::isfinite(options.error_buffer)) {
    return InvalidArgument("error_buffer must be a finite number >= 0, got " +
                           Number(options.error_buffer));
  }
  if (options.samples_per_insert > 0 &&
      options.error_buffer < std::max(1.0, options.samples_per_insert)) {
    return InvalidArgument("error_buffer (" + Number(options.error_buffer) +
                           ") must be at least max(1, samples_per_insert) = " +
                           Number(std::max(1.0, options.samples_per_insert)) +
                           ", or one insert could block sampling for good");
  }
  return Status::Ok();
}

nlohmann::json RateLimiterState::ToJson() const {
  const bool ratio = options.samples_per_insert > 0;
  nlohmann::json out = {{"samples_per_insert", options.samples_per_insert},
                        {"min_size_to_sample", options.min_size_to_sample},
                        {"error_buffer", options.error_buffer},
                        {"block_inserts", options.block_inserts},
                        {"inserts", inserts},
                        {"samples", samples},
                        {"sample_waits", sample_waits},
                        {"sample_timeouts", sample_timeouts},
                        {"insert_waits", insert_waits}};
  if (ratio) {
    out["forgiven"] = forgiven;
    out["diff"] = diff;
    out["min_diff"] = min_diff;
    out["max_diff"] = max_diff;
    // Draws that may be served right now (buffer size permitting).
    out["draws_available"] = std::max(0.0, std::floor(diff - min_diff));
  }
  return out;
}

RateLimiter::RateLimiter(const RateLimiterOptions& options, std::uint64_t initial_size)
    : options_(options), inserts_(initial_size) {
  AZ_CHECK(ValidateRateLimiterOptions(options).ok(), "invalid rate limiter options");
  // Records found at start count as inserted, with no more than the usual credit.
  const double max_diff = Offset() + options_.error_buffer;
  if (options_.samples_per_insert > 0 && Diff() > max_diff) forgiven_ = Diff() - max_diff;
}

double RateLimiter::Offset() const {
  return options_.samples_per_insert * static_cast<double>(options_.min_size_to_sample);
}

double RateLimiter::Diff() const {
  return static_cast<double>(inserts_) * options_.samples_per_insert -
         static_cast<double>(samples_) - forgiven_;
}

Status RateLimiter::TryAcquireSample(std::uint64_t n, std::uint64_t size) {
  std::lock_guard lock(mutex_);
  const double ratio = options_.samples_per_insert;
  if (ratio > 0 && static_cast<double>(n) > options_.error_buffer) {
    return FailedPrecondition("a batch of " + std::to_string(n) +
                              " draws exceeds the rate limiter's error_buffer of " +
                              Number(options_.error_buffer) +
                              " and could never be served: raise error_buffer (azctl replay set "
                              "error_buffer N) or ask for smaller batches");
  }
  if (size < options_.min_size_to_sample) {
    return Unavailable("the buffer holds " + std::to_string(size) + " records, fewer than " +
                       "min_size_to_sample = " + std::to_string(options_.min_size_to_sample));
  }
  if (ratio > 0) {
    const double diff = Diff();
    const double min_diff = Offset() - options_.error_buffer;
    if (diff - static_cast<double>(n) < min_diff) {
      return Unavailable("samples_per_insert = " + Number(ratio) + ": " + std::to_string(n) +
                         " draws requested, " + Number(std::max(0.0, std::floor(diff - min_diff))) +
                         " available (inserts " + std::to_string(inserts_) + ", samples " +
                         std::to_string(samples_) + ", error_buffer " +
                         Number(options_.error_buffer) + ")");
    }
  }
  samples_ += n;
  Changed();
  return Status::Ok();
}

void RateLimiter::RefundSample(std::uint64_t n) {
  std::lock_guard lock(mutex_);
  samples_ -= std::min(samples_, n);
  Changed();
}

bool RateLimiter::CanInsert(std::uint64_t k) const {
  std::lock_guard lock(mutex_);
  const double ratio = options_.samples_per_insert;
  if (!options_.block_inserts || ratio <= 0) return true;
  const double diff = Diff();
  const double max_diff = Offset() + options_.error_buffer;
  return diff + static_cast<double>(k) * ratio <= max_diff || diff <= Offset();
}

void RateLimiter::OnInsert(std::uint64_t k) {
  std::lock_guard lock(mutex_);
  inserts_ += k;
  if (options_.samples_per_insert > 0 && !options_.block_inserts) {
    const double max_diff = Offset() + options_.error_buffer;
    if (Diff() > max_diff) forgiven_ += Diff() - max_diff;
  }
  Changed();
}

void RateLimiter::CountSampleWait() {
  std::lock_guard lock(mutex_);
  ++sample_waits_;
}

void RateLimiter::CountSampleTimeout() {
  std::lock_guard lock(mutex_);
  ++sample_timeouts_;
}

void RateLimiter::CountInsertWait() {
  std::lock_guard lock(mutex_);
  ++insert_waits_;
}

Status RateLimiter::SetOptions(const RateLimiterOptions& options) {
  AZ_RETURN_IF_ERROR(ValidateRateLimiterOptions(options));
  std::lock_guard lock(mutex_);
  options_ = options;
  // Keep the credit within the new bounds: a lowered error buffer takes effect at once.
  if (options_.samples_per_insert > 0) {
    const double max_diff = Offset() + options_.error_buffer;
    if (Diff() > max_diff) forgiven_ += Diff() - max_diff;
  }
  Changed();
  return Status::Ok();
}

RateLimiterOptions RateLimiter::options() const {
  std::lock_guard lock(mutex_);
  return options_;
}

RateLimiterState RateLimiter::State() const {
  std::lock_guard lock(mutex_);
  RateLimiterState state;
  state.options = options_;
  state.inserts = inserts_;
  state.samples = samples_;
  state.forgiven = forgiven_;
  state.diff = Diff();
  state.min_diff = Offset() - options_.error_buffer;
  state.max_diff = Offset() + options_.error_buffer;
  state.sample_waits = sample_waits_;
  state.sample_timeouts = sample_timeouts_;
  state.insert_waits = insert_waits_;
  return state;
}

std::uint64_t RateLimiter::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

void RateLimiter::WaitForChange(std::uint64_t seen,
                                std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline, [&] { return version_ != seen; });
}

void RateLimiter::Wake() {
  std::lock_guard lock(mutex_);
  Changed();
}

void RateLimiter::Changed() {
  ++version_;
  changed_.notify_all();
}

}  // namespace az::replayd
