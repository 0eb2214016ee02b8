#include "shm/process_table.h"

#include <atomic>
#include <mutex>

namespace az::shm {
namespace {

// Registrations of this process are serialised so that two handles opened at once share one entry.
std::mutex g_registration_mutex;

template <typename T>
std::atomic_ref<T> Atomic(T& value) {
  return std::atomic_ref<T>(value);
}
template <typename T>
T Load(const T& value) {
  return std::atomic_ref<T>(const_cast<T&>(value)).load(std::memory_order_acquire);
}

bool Reap(ProcessEntry& entry, std::uint64_t owner, const WaiterCounters& counters) {
  // A dead owner changes nothing any more; a racing reaper gets zero counts and a failed CAS.
  for (int cell = 0; cell < 2; ++cell) {
    const std::uint32_t waiting = Atomic(entry.waiting[cell]).exchange(0);
    if (waiting != 0 && counters.cell[cell] != nullptr) {
      Atomic(*counters.cell[cell]).fetch_sub(waiting);
    }
  }
  return Atomic(entry.owner).compare_exchange_strong(owner, 0);
}

}  // namespace

Result<Registration> RegisterSelf(ProcessTable& table, const WaiterCounters& counters,
                                  FunctionRef<void()> on_fresh) {
  std::lock_guard lock(g_registration_mutex);
  const std::uint64_t self = Self().Packed();
  for (int i = 0; i < kMaxProcesses; ++i) {
    ProcessEntry& entry = table.entries[i];
    if (Load(entry.owner) == self) {
      Atomic(entry.handles).fetch_add(1);
      return Registration{i, false};
    }
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (int i = 0; i < kMaxProcesses; ++i) {
      ProcessEntry& entry = table.entries[i];
      std::uint64_t expected = 0;
      if (Load(entry.owner) == 0 && Atomic(entry.owner).compare_exchange_strong(expected, self)) {
        Atomic(entry.handles).store(1);
        on_fresh();
        return Registration{i, true};
      }
    }
    if (attempt == 0 && ReapDead(table, counters, /*only_waiting=*/false) == 0) break;
  }
  return ResourceExhausted("all " + std::to_string(kMaxProcesses) +
                           " process entries are held by live processes");
}

void UnregisterSelf(ProcessTable& table, int index) {
  AZ_CHECK(index >= 0 && index < kMaxProcesses);
  std::lock_guard lock(g_registration_mutex);
  ProcessEntry& entry = table.entries[index];
  AZ_CHECK(Load(entry.owner) == Self().Packed(),
           "unregistering an entry this process does not own");
  if (Atomic(entry.handles).fetch_sub(1) == 1) {
    Atomic(entry.owner).store(0, std::memory_order_release);
  }
}

bool IsRegisteredAndAlive(const ProcessTable& table, std::uint32_t pid) {
  for (const ProcessEntry& entry : table.entries) {
    const std::uint64_t owner = Load(entry.owner);
    if (owner == 0) continue;
    const ProcessIdentity identity = ProcessIdentity::Unpack(owner);
    if (identity.pid == pid && IsAlive(identity)) return true;
  }
  return false;
}

int ReapDead(ProcessTable& table, const WaiterCounters& counters, bool only_waiting) {
  const std::uint64_t self = Self().Packed();
  int reaped = 0;
  for (ProcessEntry& entry : table.entries) {
    const std::uint64_t owner = Load(entry.owner);
    if (owner == 0 || owner == self) continue;
    if (only_waiting && Load(entry.waiting[0]) == 0 && Load(entry.waiting[1]) == 0) continue;
    if (!IsAlive(ProcessIdentity::Unpack(owner)) && Reap(entry, owner, counters)) ++reaped;
  }
  return reaped;
}

std::vector<ProcessIdentity> LiveProcesses(const ProcessTable& table) {
  std::vector<ProcessIdentity> live;
  for (const ProcessEntry& entry : table.entries) {
    const std::uint64_t owner = Load(entry.owner);
    if (owner != 0 && IsAlive(ProcessIdentity::Unpack(owner))) {
      live.push_back(ProcessIdentity::Unpack(owner));
    }
  }
  return live;
}

}  // namespace az::shm
