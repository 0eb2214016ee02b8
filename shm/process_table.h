#pragma once

// A fixed table in shared memory of the processes attached to a segment or a ring. Each process
// registers once (several handles in one process share its entry) and unregisters when its last
// handle closes; an entry left by a process that died is recognised by its packed identity (pid +
// start time) and reaped. Rings also keep, per entry, how many of the owner's threads are blocked
// in a futex wait, so that the waiter counts of a process killed while waiting can be taken back.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/status.h"
#include "shm/function_ref.h"
#include "shm/process.h"

namespace az::shm {

inline constexpr int kMaxProcesses = 64;

// Trivially copyable layout; fields are accessed through std::atomic_ref.
struct ProcessEntry {
  std::uint64_t owner;       // ProcessIdentity::Packed() of the owner; 0 = free
  std::uint32_t handles;     // open handles in the owner (written only by the owner)
  std::uint32_t waiting[2];  // the owner's threads blocked in a wait, per wait cell
  std::uint32_t reserved0;
  std::uint64_t reserved1;
};
static_assert(sizeof(ProcessEntry) == 32);
static_assert(alignof(ProcessEntry) == 8);

struct ProcessTable {
  ProcessEntry entries[kMaxProcesses];
};
static_assert(sizeof(ProcessTable) == 32 * kMaxProcesses);

// Global waiter counters that an entry's `waiting` counts contribute to. When a dead entry is
// reaped, its counts are subtracted from these (null: the table's owner keeps none).
struct WaiterCounters {
  std::uint32_t* cell[2] = {nullptr, nullptr};
};

struct Registration {
  int index = -1;
  bool fresh = false;  // true: this process had no entry before (its first handle)
};

// Registers the calling process (or adds a handle to its existing entry). When the table is full,
// reaps dead entries first. Fails with ResourceExhausted when kMaxProcesses live processes are
// registered. Serialised with other registrations in this process; never blocks on other processes.
// `on_fresh` runs, still serialised, when the process had no entry before (its first handle).
Result<Registration> RegisterSelf(
    ProcessTable& table, const WaiterCounters& counters, FunctionRef<void()> on_fresh = [] {});

// Drops one handle of the calling process; frees the entry with the last one.
void UnregisterSelf(ProcessTable& table, int index);

// True when some entry holds `pid` and that process is alive (same start time, not a zombie). A pid
// with no entry is a process that died and was reaped, or one that never registered: not alive.
bool IsRegisteredAndAlive(const ProcessTable& table, std::uint32_t pid);

// Frees the entries of dead processes, subtracting their waiting counts from `counters`. With
// only_waiting, looks only at entries that have waiting threads (the ones that cost wakeups).
// Returns how many entries were freed. Costs one liveness check per entry examined.
int ReapDead(ProcessTable& table, const WaiterCounters& counters, bool only_waiting);

// The live processes registered in the table.
std::vector<ProcessIdentity> LiveProcesses(const ProcessTable& table);

}  // namespace az::shm
