#pragma once

// Who a process is, in a form that survives pid reuse: the pid plus the time the process started
// (clock ticks since boot, /proc/<pid>/stat field 22). Shared-memory structures record owners this
// way so that a slot or table entry left by a process killed with SIGKILL is recognised as dead
// even when the kernel has since handed its pid to someone else.
//
// All processes that share a segment must share a pid namespace (one host, one container).

#include <cstdint>

#include "core/base/status.h"

namespace az::shm {

// Linux pids are below PID_MAX_LIMIT = 2^22 on 64-bit kernels, so a pid fits in 22 bits.
inline constexpr int kPidBits = 22;
inline constexpr std::uint32_t kPidMask = (1u << kPidBits) - 1;
// Start ticks fit in the other 42 bits of a packed identity (at 100 ticks/s: over 1000 years).
inline constexpr std::uint64_t kStartTicksMask = (std::uint64_t{1} << (64 - kPidBits)) - 1;

struct ProcessIdentity {
  std::uint32_t pid = 0;
  std::uint64_t start_ticks = 0;

  // One 64-bit word (start_ticks << 22 | pid), never 0 for a real process, so it can be the value
  // of an atomic owner field where 0 means "free".
  std::uint64_t Packed() const {
    return ((start_ticks & kStartTicksMask) << kPidBits) | (pid & kPidMask);
  }
  static ProcessIdentity Unpack(std::uint64_t packed) {
    return {static_cast<std::uint32_t>(packed & kPidMask), packed >> kPidBits};
  }
  friend bool operator==(const ProcessIdentity&, const ProcessIdentity&) = default;
};

// The calling process's identity. Cached; recomputed in the child after fork(). Never blocks for
// long (one read of /proc/self/stat the first time and after a fork).
ProcessIdentity Self();

// What /proc/<pid>/stat says about a process.
struct ProcessStat {
  char state = '?';  // R, S, D, Z (zombie), X (dead), ...
  std::uint64_t start_ticks = 0;
};

// Reads /proc/<pid>/stat. NotFound when the process does not exist.
Result<ProcessStat> ReadProcessStat(std::uint32_t pid);

// True when a process with this pid exists, is not a zombie, and started at start_ticks (so it is
// the same process, not a later one that reused the pid). Costs one kill(2) and, when that finds a
// process, one read of /proc/<pid>/stat (a few microseconds): call it on slow paths only.
bool IsAlive(const ProcessIdentity& process);

}  // namespace az::shm
