#pragma once

// The sample ring of a run: finished-game samples from the self-play workers to the replay daemon
// (docs/replay.md, "The sample ring"). Every process derives its place from the run directory
// alone: the segment "samples" in the run's shared-memory scope (ipc::RunShmPrefix:
// /dev/shm/az-<hash of the run dir>.samples), unless a scope is given explicitly.
//
// Either side may start first: OpenSampleRing opens the ring if it exists, else creates it. An
// existing ring is always opened, never replaced, even when every process that used it has died:
// the records still in it were acknowledged to their producers (Push returned OK) and the daemon
// ingests them when it comes back. While the daemon is down, producers' Push waits (up to its
// timeout) once the ring is full, rather than dropping samples.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "shm/ring.h"
#include "shm/scope.h"

namespace az::replayd {

inline constexpr std::string_view kSampleRingName = "samples";
inline constexpr std::uint64_t kDefaultSampleRingCapacity = 4096;

struct SampleRingOptions {
  std::string run_dir;  // the run directory; the scope is derived from it unless `scope` is set
  std::string scope;    // "shm:<prefix>" or "dir:<path>" (shm::Scope::Parse); empty: derived
  std::string name = std::string(kSampleRingName);
  std::uint32_t record_bytes = 0;  // required: every opener must agree (checked by the segment)
  // Slots, a power of two; used only when this call creates the ring (an existing ring keeps its
  // own).
  std::uint64_t capacity = kDefaultSampleRingCapacity;
  shm::RingOptions ring;
};

// The shared-memory scope of the run: `scope` when given, else shm:<ipc::RunShmPrefix(run_dir)>.
// InvalidArgument when both are empty or malformed.
Result<shm::Scope> SampleRingScope(const SampleRingOptions& options);

// Opens the run's sample ring or creates it (see above). A segment whose creator died before it
// finished writing its header holds no records and is replaced. Errors: those of shm::Ring::Open
// and Create (FailedPrecondition names a record size that does not match).
Result<shm::Ring> OpenSampleRing(const SampleRingOptions& options);

}  // namespace az::replayd
