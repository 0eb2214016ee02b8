#pragma once

// The run's sample ring, from the producer side: finished-game samples from self-play to the
// replay daemon. Same place and rules as the daemon's own opener (services/replay/sample_ring.h:
// the segment "samples" in the run's shared-memory scope, opened if it exists, else created, never
// replaced while it holds records), so either side may start first. Kept here until the daemon's
// opener is a library the workers can link; the two must stay identical.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "shm/ring.h"
#include "shm/scope.h"

namespace az::service {

inline constexpr std::string_view kSampleRingName = "samples";

struct SampleRingOptions {
  std::string name = std::string(kSampleRingName);
  std::uint32_t record_bytes = 0;  // required: every opener must agree (checked by the segment)
  // Slots, a power of two; used only when this call creates the ring.
  std::uint64_t capacity = 4096;
  shm::RingOptions ring;
};

// Opens the ring in `scope`, or creates it. A segment whose creator died before finishing its
// header holds no records and is replaced. Errors: those of shm::Ring::Open and Create
// (FailedPrecondition names a record size that does not match, e.g. a chess daemon and a Connect
// Four worker).
Result<shm::Ring> OpenSampleRing(const shm::Scope& scope, const SampleRingOptions& options);

}  // namespace az::service
