#pragma once

// az-ringbench: measures the shared-memory ring across real processes. Throughput mode forks P
// producer and C consumer processes that move fixed-size records through one ring for S seconds
// and reports records/s and GB/s beside a single-threaded memcpy of the same record size measured
// in the same run (the physical limit), ending with "ratio <ring GB/s / memcpy GB/s>". Ping-pong
// mode sends one request at a time through a request channel to a server process and back, and
// reports the round trip's p50 and p99.

#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace az::ringbench {

struct Options {
  int producers = 1;
  int consumers = 1;
  std::uint32_t record_bytes = 1024;
  double seconds = 2.0;
  std::uint64_t capacity = 1024;
  std::uint32_t batch = 64;    // records a consumer takes per call
  std::uint32_t spin_us = 50;  // RingOptions::spin_time
  bool ping_pong = false;
};

Status Validate(const Options& options);

// Runs the benchmark and prints its report to stdout.
Status Run(const Options& options);

}  // namespace az::ringbench
