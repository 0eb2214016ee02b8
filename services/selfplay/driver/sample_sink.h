#pragma once

// Where the self-play driver puts a finished game's samples. The service implements it over the
// run's shared-memory sample ring (services/selfplay/sample_ring_sink.h); tests use an in-process
// fake. A sink that stays full makes the driver wait (and retry) rather than drop samples.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/base/status.h"

namespace az::selfplay {

class SampleSink {
 public:
  virtual ~SampleSink() = default;

  // Bytes of one record: the driver checks it against its game's sample size.
  virtual std::uint32_t record_bytes() const = 0;

  // Pushes `records` (a whole number of record_bytes() records, back to back) in order and returns
  // how many went in: all of them unless the sink stayed full for `timeout` while waiting for room
  // for the next one (a prefix then went in). DEADLINE_EXCEEDED when not even the first went in
  // within `timeout`; other errors of the transport (nothing after the returned prefix was pushed).
  virtual Result<std::size_t> Push(std::span<const std::byte> records,
                                   std::chrono::milliseconds timeout) = 0;

  // For logs: what the sink is ("the sample ring") and who drains it ("az-replay").
  virtual std::string_view name() const = 0;
  virtual std::string_view consumer() const = 0;
};

}  // namespace az::selfplay
