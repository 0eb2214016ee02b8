#pragma once

// The self-play driver's SampleSink over the run's shared-memory sample ring (shm/ring.h), which
// az-replay drains.

#include "services/selfplay/driver/sample_sink.h"
#include "shm/ring.h"

namespace az::selfplay {

class SampleRingSink final : public SampleSink {
 public:
  explicit SampleRingSink(shm::Ring ring) : ring_(std::move(ring)) {}

  std::uint32_t record_bytes() const override { return ring_.record_bytes(); }
  // Each record waits up to `timeout` for room (Ring::Push).
  Result<std::size_t> Push(std::span<const std::byte> records,
                           std::chrono::milliseconds timeout) override;
  std::string_view name() const override { return "the sample ring"; }
  std::string_view consumer() const override { return "az-replay"; }

  // The ring's counters (occupancy, waits). Thread-safe.
  shm::RingStats Stats() const { return ring_.Stats(); }

 private:
  shm::Ring ring_;
};

}  // namespace az::selfplay
