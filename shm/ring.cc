#include "shm/ring.h"

#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>

#include "core/base/log.h"
#include "shm/futex.h"

namespace az::shm {
namespace {

using Clock = std::chrono::steady_clock;

template <typename T>
std::atomic_ref<T> Atomic(T& value) {
  return std::atomic_ref<T>(value);
}

// Moves head or tail from `from` to from + 1 unless someone already did. (A failed
// compare-exchange overwrites its expected value, so never pass a variable still needed.)
void Advance(std::atomic_ref<std::uint64_t> counter, std::uint64_t from) {
  std::uint64_t expected = from;
  counter.compare_exchange_strong(expected, from + 1, std::memory_order_acq_rel);
}

std::uint64_t RoundUp(std::uint64_t value, std::uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::uint64_t DataOffset(std::uint32_t record_bytes) {
  // Small records share the state word's cache line: one line moves per hand-off instead of two.
  return record_bytes + sizeof(std::uint64_t) <= kCacheLine ? sizeof(std::uint64_t) : kCacheLine;
}

std::uint64_t SlotStride(std::uint32_t record_bytes) {
  return RoundUp(DataOffset(record_bytes) + record_bytes, kCacheLine);
}

// Local counters, plain relaxed loads and stores: exact for one thread, approximate if a handle is
// shared (a lost increment is cheaper than a contended read-modify-write on every operation).
struct Counter {
  std::atomic<std::uint64_t> value{0};
  void Add(std::uint64_t n) {
    value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t Get() const { return value.load(std::memory_order_relaxed); }
};

// Remembers liveness answers during one reclaim pass (each costs a /proc read).
class LivenessCache {
 public:
  explicit LivenessCache(const ProcessTable& table) : table_(table) {}
  bool Alive(std::uint32_t pid) {
    for (std::size_t i = 0; i < size_; ++i) {
      if (pids_[i] == pid) return alive_[i];
    }
    const bool alive = IsRegisteredAndAlive(table_, pid);
    if (size_ < pids_.size()) {
      pids_[size_] = pid;
      alive_[size_] = alive;
      ++size_;
    }
    return alive;
  }

 private:
  const ProcessTable& table_;
  std::array<std::uint32_t, 16> pids_{};
  std::array<bool, 16> alive_{};
  std::size_t size_ = 0;
};

}  // namespace

struct Ring::Local {
  ProcessTable* table = nullptr;
  int index = -1;
  ProcessIdentity registered_by;
  std::atomic<std::int64_t> last_reclaim_ns{0};
  Counter pushes, pops, push_waits, pop_waits, push_wait_ns, pop_wait_ns, push_timeouts,
      pop_timeouts;

  ~Local() {
    if (index >= 0 && Self() == registered_by) UnregisterSelf(*table, index);
  }
};

Status ValidateRingSpec(const RingSpec& spec) {
  if (spec.record_bytes == 0 || spec.record_bytes > kMaxRecordBytes) {
    return InvalidArgument("ring record size " + std::to_string(spec.record_bytes) +
                           " is outside 1.." + std::to_string(kMaxRecordBytes));
  }
  if (spec.capacity == 0 || spec.capacity > kMaxRingCapacity ||
      (spec.capacity & (spec.capacity - 1)) != 0) {
    return InvalidArgument("ring capacity " + std::to_string(spec.capacity) +
                           " is not a power of two in 1.." + std::to_string(kMaxRingCapacity));
  }
  return Status::Ok();
}

std::size_t Ring::BytesFor(const RingSpec& spec) {
  return sizeof(RingHeader) + spec.capacity * SlotStride(spec.record_bytes);
}

void Ring::Format(std::span<std::byte> memory, const RingSpec& spec) {
  AZ_CHECK(ValidateRingSpec(spec).ok());
  AZ_CHECK(memory.size() >= BytesFor(spec));
  AZ_CHECK(reinterpret_cast<std::uintptr_t>(memory.data()) % kHotStride == 0);
  auto* header = reinterpret_cast<RingHeader*>(memory.data());
  std::memset(static_cast<void*>(header), 0, sizeof(RingHeader));
  header->version = kRingLayoutVersion;
  header->record_bytes = spec.record_bytes;
  header->capacity = spec.capacity;
  header->slot_stride = SlotStride(spec.record_bytes);
  header->data_offset = DataOffset(spec.record_bytes);
  header->slots_offset = sizeof(RingHeader);
  header->total_bytes = BytesFor(spec);
  std::byte* slots = memory.data() + header->slots_offset;
  for (std::uint64_t i = 0; i < spec.capacity; ++i) {
    auto* word = reinterpret_cast<std::uint64_t*>(slots + i * header->slot_stride);
    *word = MakeSlotWord(i, SlotState::kFree, 0);
  }
  Atomic(header->magic).store(kRingMagic, std::memory_order_release);
}

Result<Ring> Ring::Create(const Scope& scope, std::string_view name, const RingSpec& spec,
                          const RingOptions& options, const CreateOptions& create_options) {
  AZ_RETURN_IF_ERROR(ValidateRingSpec(spec));
  const SegmentSpec segment_spec{kRingLayoutKind, kRingLayoutVersion, spec.record_bytes,
                                 spec.capacity, BytesFor(spec)};
  AZ_ASSIGN_OR_RETURN(
      Segment segment,
      Segment::Create(
          scope, name, segment_spec, [&](std::span<std::byte> payload) { Format(payload, spec); },
          create_options));
  return Attach(std::make_shared<const Segment>(std::move(segment)), 0, options);
}

Result<Ring> Ring::Open(const Scope& scope, std::string_view name, std::uint32_t record_bytes,
                        const RingOptions& options, const OpenOptions& open_options) {
  const SegmentExpectation expected{kRingLayoutKind, kRingLayoutVersion, record_bytes, 0};
  AZ_ASSIGN_OR_RETURN(Segment segment, Segment::Open(scope, name, expected, open_options));
  return Attach(std::make_shared<const Segment>(std::move(segment)), 0, options);
}

Result<Ring> Ring::Attach(std::shared_ptr<const Segment> segment, std::size_t offset,
                          const RingOptions& options) {
  AZ_CHECK(segment != nullptr);
  const std::span<std::byte> payload = segment->payload();
  const std::string where =
      "ring at offset " + std::to_string(offset) + " of " + segment->location();
  if (offset % kHotStride != 0 || offset + sizeof(RingHeader) > payload.size()) {
    return DataLoss(where + ": does not fit in the segment");
  }
  auto* header = reinterpret_cast<RingHeader*>(payload.data() + offset);
  if (Atomic(header->magic).load(std::memory_order_acquire) != kRingMagic) {
    return FailedPrecondition(where + ": no ring magic");
  }
  if (header->version != kRingLayoutVersion) {
    return FailedPrecondition(where + ": ring layout version is " +
                              std::to_string(header->version) + " but this program expects " +
                              std::to_string(kRingLayoutVersion));
  }
  const RingSpec spec{header->record_bytes, header->capacity};
  if (!ValidateRingSpec(spec).ok() || header->slot_stride != SlotStride(spec.record_bytes) ||
      header->data_offset != DataOffset(spec.record_bytes) ||
      header->slots_offset != sizeof(RingHeader) || header->total_bytes != BytesFor(spec) ||
      offset + header->total_bytes > payload.size()) {
    return DataLoss(where + ": ring geometry is inconsistent");
  }
  if (options.reclaim_interval.count() <= 0) {
    return InvalidArgument("ring reclaim_interval must be positive");
  }

  Ring ring;
  ring.segment_ = std::move(segment);
  ring.header_ = header;
  ring.slots_ = payload.data() + offset + header->slots_offset;
  ring.capacity_ = spec.capacity;
  ring.mask_ = spec.capacity - 1;
  ring.stride_ = header->slot_stride;
  ring.data_offset_ = header->data_offset;
  ring.record_bytes_ = spec.record_bytes;
  ring.options_ = options;
  ring.local_ = std::make_unique<Local>();
  ring.local_->table = &header->processes;
  ring.local_->registered_by = Self();
  const WaiterCounters counters{{&header->not_empty.waiters, &header->not_full.waiters}};
  // A new entry for our pid means any slot that names our pid was left by a dead process that had
  // the same pid before us. Swept under the registration lock, before any handle of ours can
  // claim a slot.
  Result<Registration> registration = RegisterSelf(
      header->processes, counters, [&ring] { ring.Reclaim(/*own_pid_is_dead=*/true); });
  if (!registration.ok()) return registration.status().WithContext(where);
  ring.local_->index = registration->index;
  return ring;
}

Ring::Ring(Ring&&) noexcept = default;

Ring& Ring::operator=(Ring&& other) noexcept {
  if (this == &other) return *this;
  local_.reset();  // unregister from our ring while its segment is still mapped
  segment_ = std::move(other.segment_);
  header_ = other.header_;
  slots_ = other.slots_;
  capacity_ = other.capacity_;
  mask_ = other.mask_;
  stride_ = other.stride_;
  data_offset_ = other.data_offset_;
  record_bytes_ = other.record_bytes_;
  options_ = other.options_;
  local_ = std::move(other.local_);
  return *this;
}
Ring::~Ring() = default;

void Ring::CheckProcess() const {
  AZ_CHECK(local_ != nullptr, "use of a moved-from Ring");
  AZ_CHECK(Self().pid == local_->registered_by.pid,
           "a Ring handle was used in a child after fork(); open the ring again in the child");
}

// --- Producer side ---------------------------------------------------------------------------

std::optional<std::uint64_t> Ring::ClaimForWrite() {
  const std::uint32_t self = local_->registered_by.pid;
  auto head = Atomic(header_->head);
  for (;;) {
    std::uint64_t position = head.load(std::memory_order_acquire);
    auto word = Atomic(*reinterpret_cast<std::uint64_t*>(slots_ + (position & mask_) * stride_));
    std::uint64_t observed = word.load(std::memory_order_acquire);
    const std::int64_t diff = PositionDiff(SlotPosition(observed), position);
    if (diff == 0) {
      if (SlotStateOf(observed) == SlotState::kFree) {
        if (word.compare_exchange_weak(observed, MakeSlotWord(position, SlotState::kWriting, self),
                                       std::memory_order_acq_rel, std::memory_order_relaxed)) {
          // Whoever sees the claim advances head, so a producer that dies here blocks nobody.
          Advance(head, position);
          return position;
        }
        continue;
      }
      // Position already claimed; head has not moved past it yet: help.
      Advance(head, position);
      continue;
    }
    if (diff > 0) {  // the slot is already on a later lap: position was claimed and consumed
      Advance(head, position);
      continue;
    }
    return std::nullopt;  // the slot still holds the previous lap: full
  }
}

void Ring::Publish(std::uint64_t position) {
  auto word = Atomic(*reinterpret_cast<std::uint64_t*>(slots_ + (position & mask_) * stride_));
  word.store(MakeSlotWord(position, SlotState::kFull, 0), std::memory_order_release);
  Notify(kConsumerCell, 1);
}

bool Ring::TryPush(std::span<const std::byte> record) {
  CheckProcess();
  AZ_CHECK(record.size() == record_bytes_, "record of " + std::to_string(record.size()) +
                                               " bytes pushed to a ring of " +
                                               std::to_string(record_bytes_) + "-byte records");
  const std::optional<std::uint64_t> position = ClaimForWrite();
  if (!position) return false;
  std::memcpy(slots_ + (*position & mask_) * stride_ + data_offset_, record.data(), record_bytes_);
  Publish(*position);
  local_->pushes.Add(1);
  return true;
}

Status Ring::Push(std::span<const std::byte> record, std::chrono::nanoseconds timeout) {
  AZ_CHECK(record.size() == record_bytes_, "record of " + std::to_string(record.size()) +
                                               " bytes pushed to a ring of " +
                                               std::to_string(record_bytes_) + "-byte records");
  return PushWith(timeout, [&](std::span<std::byte> slot) {
    std::memcpy(slot.data(), record.data(), record_bytes_);
  });
}

Status Ring::PushWith(std::chrono::nanoseconds timeout, Filler fill) {
  CheckProcess();
  bool slept = false;
  const std::optional<std::uint64_t> position = BlockUntil(
      kProducerCell, timeout, [this] { return ClaimForWrite(); }, &slept);
  if (!position) {
    local_->push_timeouts.Add(1);
    return DeadlineExceeded("ring full for " + std::to_string(timeout.count() / 1000000) + " ms (" +
                            std::to_string(capacity_) + " records)");
  }
  fill(std::span<std::byte>(slots_ + (*position & mask_) * stride_ + data_offset_, record_bytes_));
  Publish(*position);
  local_->pushes.Add(1);
  // Woken producers pass the wake on while there is room: one wake call per lap of sleepers, not
  // one per released slot (see WaitCell::wake_pending).
  if (slept && Occupancy() < capacity_) Notify(kProducerCell, 1);
  return Status::Ok();
}

// --- Consumer side ---------------------------------------------------------------------------

std::optional<std::uint64_t> Ring::RescueOrphan() {
  auto hint = Atomic(header_->events.orphan_hint);
  const std::uint32_t observed_hint = hint.load(std::memory_order_acquire);
  if (observed_hint == 0) return std::nullopt;
  const std::uint32_t self = local_->registered_by.pid;
  const std::uint64_t tail = Atomic(header_->tail).load(std::memory_order_acquire);
  for (std::uint64_t i = 0; i < capacity_; ++i) {
    auto word = Atomic(*reinterpret_cast<std::uint64_t*>(slots_ + i * stride_));
    std::uint64_t observed = word.load(std::memory_order_acquire);
    if (SlotStateOf(observed) != SlotState::kOrphan) continue;
    const std::uint64_t slot_position = SlotPosition(observed);
    if (word.compare_exchange_strong(observed,
                                     MakeSlotWord(slot_position, SlotState::kReading, self),
                                     std::memory_order_acq_rel, std::memory_order_relaxed)) {
      hint.fetch_sub(1, std::memory_order_acq_rel);
      // An orphan lies less than one lap behind tail (or at it): rebuild its full position.
      const std::uint64_t behind = (tail - slot_position) & kSlotPositionMask;
      const std::uint64_t position = behind < (kSlotPositionMask >> 1)
                                         ? tail - behind
                                         : tail + ((slot_position - tail) & kSlotPositionMask);
      if (position == tail) Advance(Atomic(header_->tail), tail);
      return position;
    }
  }
  // Nothing found: the hint was stale (a rescuer died between its claim and its decrement). Reset
  // it unless someone changed it meanwhile; a reclaim pass raises it again if it missed one.
  std::uint32_t expected = observed_hint;
  hint.compare_exchange_strong(expected, 0);
  return std::nullopt;
}

std::optional<std::uint64_t> Ring::ClaimForRead() {
  if (std::optional<std::uint64_t> orphan = RescueOrphan()) return orphan;
  const std::uint32_t self = local_->registered_by.pid;
  auto tail = Atomic(header_->tail);
  for (;;) {
    std::uint64_t position = tail.load(std::memory_order_acquire);
    auto word = Atomic(*reinterpret_cast<std::uint64_t*>(slots_ + (position & mask_) * stride_));
    std::uint64_t observed = word.load(std::memory_order_acquire);
    const std::int64_t diff = PositionDiff(SlotPosition(observed), position);
    if (diff == 0) {
      const SlotState state = SlotStateOf(observed);
      if (state == SlotState::kFull || state == SlotState::kOrphan) {
        if (word.compare_exchange_weak(observed, MakeSlotWord(position, SlotState::kReading, self),
                                       std::memory_order_acq_rel, std::memory_order_relaxed)) {
          if (state == SlotState::kOrphan) {
            Atomic(header_->events.orphan_hint).fetch_sub(1, std::memory_order_acq_rel);
          }
          Advance(tail, position);
          return position;
        }
        continue;
      }
      if (state == SlotState::kSkip) {
        if (word.compare_exchange_weak(observed,
                                       MakeSlotWord(position + capacity_, SlotState::kFree, 0),
                                       std::memory_order_acq_rel, std::memory_order_relaxed)) {
          Advance(tail, position);
          Notify(kProducerCell, 1);
        }
        continue;
      }
      if (state == SlotState::kReading) {  // claimed by another consumer that has not moved tail
        Advance(tail, position);
        continue;
      }
      return std::nullopt;  // kFree or kWriting: not published yet
    }
    if (diff > 0) {  // already consumed and released; tail lags: help
      Advance(tail, position);
      continue;
    }
    return std::nullopt;  // the slot still holds the previous lap: nothing at position yet
  }
}

void Ring::Release(std::uint64_t position) {
  auto word = Atomic(*reinterpret_cast<std::uint64_t*>(slots_ + (position & mask_) * stride_));
  word.store(MakeSlotWord(position + capacity_, SlotState::kFree, 0), std::memory_order_release);
}

std::size_t Ring::TryConsume(std::size_t max_records, Visitor visit) {
  CheckProcess();
  std::size_t taken = 0;
  while (taken < max_records) {
    const std::optional<std::uint64_t> position = ClaimForRead();
    if (!position) break;
    visit(std::span<const std::byte>(slots_ + (*position & mask_) * stride_ + data_offset_,
                                     record_bytes_),
          *position);
    Release(*position);
    ++taken;
  }
  if (taken > 0) {
    Notify(kProducerCell, static_cast<int>(std::min<std::size_t>(taken, 1 << 20)));
    local_->pops.Add(taken);
  }
  return taken;
}

Result<std::size_t> Ring::Consume(std::size_t max_records, std::chrono::nanoseconds timeout,
                                  Visitor visit) {
  CheckProcess();
  AZ_CHECK(max_records >= 1);
  bool slept = false;
  const std::optional<std::uint64_t> position = BlockUntil(
      kConsumerCell, timeout, [this] { return ClaimForRead(); }, &slept);
  if (!position) {
    local_->pop_timeouts.Add(1);
    return DeadlineExceeded("ring empty for " + std::to_string(timeout.count() / 1000000) + " ms");
  }
  visit(std::span<const std::byte>(slots_ + (*position & mask_) * stride_ + data_offset_,
                                   record_bytes_),
        *position);
  Release(*position);
  local_->pops.Add(1);
  const std::size_t more = max_records > 1 ? TryConsume(max_records - 1, visit) : 0;
  if (more == 0) Notify(kProducerCell, 1);
  // A woken consumer that leaves records behind passes the wake on to another sleeper.
  if (slept && Occupancy() > 0) Notify(kConsumerCell, 1);
  return 1 + more;
}

std::size_t Ring::TryPop(std::span<std::byte> out) {
  const std::size_t max_records = out.size() / record_bytes_;
  AZ_CHECK(max_records >= 1, "Pop buffer smaller than one record");
  std::size_t next = 0;
  return TryConsume(max_records, [&](std::span<const std::byte> record, std::uint64_t) {
    std::memcpy(out.data() + next++ * record_bytes_, record.data(), record_bytes_);
  });
}

Result<std::size_t> Ring::Pop(std::span<std::byte> out, std::chrono::nanoseconds timeout) {
  const std::size_t max_records = out.size() / record_bytes_;
  AZ_CHECK(max_records >= 1, "Pop buffer smaller than one record");
  std::size_t next = 0;
  return Consume(max_records, timeout, [&](std::span<const std::byte> record, std::uint64_t) {
    std::memcpy(out.data() + next++ * record_bytes_, record.data(), record_bytes_);
  });
}

// --- Waiting ---------------------------------------------------------------------------------

void Ring::Notify(int cell, int count, bool force) {
  WaitCell& wait_cell = cell == kConsumerCell ? header_->not_empty : header_->not_full;
  // Pairs with the fence in BlockUntil: either the sleeper sees our slot change, or we see it
  // counted as a waiter. Without waiters this is the whole cost: no system call.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (Atomic(wait_cell.waiters).load(std::memory_order_relaxed) == 0) return;
  // A wake already on its way (its sleeper not yet running) will see our record too. A sleeper
  // clears the flag after it loads the sequence, so a flag we find set was set after that load
  // and its sequence bump makes the sleeper's futex wait return.
  auto pending = Atomic(wait_cell.wake_pending);
  if (!force && (pending.load(std::memory_order_relaxed) != 0 ||
                 pending.exchange(1, std::memory_order_acq_rel) != 0)) {
    return;
  }
  Atomic(wait_cell.sequence).fetch_add(1, std::memory_order_release);
  FutexWake(&wait_cell.sequence, count);
}

template <typename TryFn>
auto Ring::BlockUntil(int cell, std::chrono::nanoseconds timeout, TryFn try_fn, bool* slept)
    -> decltype(try_fn()) {
  if (auto result = try_fn()) return result;
  if (timeout.count() <= 0) return {};
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + timeout;
  const auto account = [&] {
    const auto waited =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    if (cell == kConsumerCell) {
      local_->pop_waits.Add(1);
      local_->pop_wait_ns.Add(static_cast<std::uint64_t>(waited));
    } else {
      local_->push_waits.Add(1);
      local_->push_wait_ns.Add(static_cast<std::uint64_t>(waited));
    }
  };
  // Spin for a bounded time (a pause costs ~10 to ~150 cycles depending on the CPU, so a count of
  // pauses would mean very different times). After the first couple of microseconds, yield as
  // well: when the peer we wait for is runnable on this very core (a loaded machine), a pure spin
  // would keep it off the core until the spin ends.
  const Clock::time_point spin_end = start + options_.spin_time;
  const Clock::time_point yield_from = start + std::chrono::microseconds(2);
  for (Clock::time_point now = start; now < spin_end; now = Clock::now()) {
    for (int i = 0; i < 16; ++i) CpuRelax();
    if (auto result = try_fn()) {
      account();
      return result;
    }
    if (now >= yield_from) sched_yield();
  }

  WaitCell& wait_cell = cell == kConsumerCell ? header_->not_empty : header_->not_full;
  ProcessEntry& entry = header_->processes.entries[local_->index];
  const auto interval =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.reclaim_interval);
  for (;;) {
    const Clock::time_point now = Clock::now();
    const std::int64_t now_ns = now.time_since_epoch().count();
    const std::int64_t last = local_->last_reclaim_ns.load(std::memory_order_relaxed);
    if (now_ns - last >= interval.count()) {
      local_->last_reclaim_ns.store(now_ns, std::memory_order_relaxed);
      Reclaim(/*own_pid_is_dead=*/false);
      if (auto result = try_fn()) {
        account();
        return result;
      }
    }
    if (now >= deadline) {
      account();
      return {};
    }
    const auto until_reclaim = std::chrono::nanoseconds(std::max<std::int64_t>(
        1, local_->last_reclaim_ns.load(std::memory_order_relaxed) + interval.count() - now_ns));
    const auto sleep = std::min<std::chrono::nanoseconds>(deadline - now, until_reclaim);

    // Count ourselves in (global first, so that a death in between can only leave the global count
    // too high: an extra wake call, never a missed one), then re-check before sleeping.
    Atomic(wait_cell.waiters).fetch_add(1, std::memory_order_seq_cst);
    Atomic(entry.waiting[cell]).fetch_add(1, std::memory_order_relaxed);
    const std::uint32_t sequence = Atomic(wait_cell.sequence).load(std::memory_order_acquire);
    // From here on a notifier must wake us (or bump the sequence we wait on); clearing the flag
    // also heals one left set by a woken sleeper that was killed before it got to run.
    Atomic(wait_cell.wake_pending).store(0, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    auto result = try_fn();
    if (!result) {
      FutexWait(&wait_cell.sequence, sequence, sleep);
      if (slept != nullptr) *slept = true;
      // Running again: the next record must wake another sleeper, if any.
      Atomic(wait_cell.wake_pending).store(0, std::memory_order_release);
    }
    Atomic(entry.waiting[cell]).fetch_sub(1, std::memory_order_relaxed);
    Atomic(wait_cell.waiters).fetch_sub(1, std::memory_order_relaxed);
    if (!result) result = try_fn();
    if (result) {
      account();
      return result;
    }
  }
}

// --- Crash recovery --------------------------------------------------------------------------

std::size_t Ring::ReclaimDead() {
  CheckProcess();
  return Reclaim(/*own_pid_is_dead=*/false);
}

std::size_t Ring::Reclaim(bool own_pid_is_dead) {
  const WaiterCounters counters{{&header_->not_empty.waiters, &header_->not_full.waiters}};
  const int reaped = ReapDead(header_->processes, counters, /*only_waiting=*/true);
  if (reaped > 0) Atomic(header_->events.reaped_processes).fetch_add(reaped);

  const std::uint32_t self = local_->registered_by.pid;
  LivenessCache liveness(header_->processes);
  std::size_t reclaimed = 0;
  bool orphans = false;
  for (std::uint64_t i = 0; i < capacity_; ++i) {
    auto word = Atomic(*reinterpret_cast<std::uint64_t*>(slots_ + i * stride_));
    std::uint64_t observed = word.load(std::memory_order_acquire);
    const SlotState state = SlotStateOf(observed);
    if (state == SlotState::kOrphan) orphans = true;
    if (state != SlotState::kWriting && state != SlotState::kReading) continue;
    const std::uint32_t owner = SlotOwner(observed);
    if (owner == self ? !own_pid_is_dead : liveness.Alive(owner)) continue;
    const std::uint64_t position = SlotPosition(observed);
    if (state == SlotState::kWriting) {
      if (word.compare_exchange_strong(observed, MakeSlotWord(position, SlotState::kSkip, 0))) {
        Atomic(header_->events.reclaimed_writes).fetch_add(1);
        ++reclaimed;
        AZ_LOG(kWarning) << "ring " << segment_->location() << ": slot " << i
                         << " was claimed by producer pid " << owner
                         << ", which is dead; skipping it";
      }
    } else {
      // Raise the hint before the orphan appears, so no consumer can miss it.
      Atomic(header_->events.orphan_hint).fetch_add(1);
      if (word.compare_exchange_strong(observed, MakeSlotWord(position, SlotState::kOrphan, 0))) {
        Atomic(header_->events.reclaimed_reads).fetch_add(1);
        ++reclaimed;
        AZ_LOG(kWarning) << "ring " << segment_->location() << ": slot " << i
                         << " was held by consumer pid " << owner
                         << ", which is dead; delivering its record again";
      } else {
        Atomic(header_->events.orphan_hint).fetch_sub(1);
      }
    }
  }
  if (orphans && Atomic(header_->events.orphan_hint).load() == 0) {
    Atomic(header_->events.orphan_hint).fetch_add(1);  // a rescuer reset the hint too early
  }
  if (reclaimed > 0 || orphans) {
    Notify(kConsumerCell, 1 << 20, /*force=*/true);
    Notify(kProducerCell, 1 << 20, /*force=*/true);
  }
  return reclaimed;
}

std::uint64_t Ring::Occupancy() const {
  const std::uint64_t tail = Atomic(header_->tail).load(std::memory_order_acquire);
  const std::uint64_t head = Atomic(header_->head).load(std::memory_order_acquire);
  return head > tail ? std::min(head - tail, capacity_) : 0;
}

RingStats Ring::Stats() const {
  CheckProcess();
  RingStats stats;
  stats.record_bytes = record_bytes_;
  stats.capacity = capacity_;
  stats.produced = Atomic(header_->head).load();
  stats.consumed = Atomic(header_->tail).load();
  stats.occupancy = Occupancy();
  stats.reclaimed_writes = Atomic(header_->events.reclaimed_writes).load();
  stats.reclaimed_reads = Atomic(header_->events.reclaimed_reads).load();
  stats.reaped_processes = Atomic(header_->events.reaped_processes).load();
  stats.sleeping_consumers = Atomic(header_->not_empty.waiters).load();
  stats.sleeping_producers = Atomic(header_->not_full.waiters).load();
  stats.pushes = local_->pushes.Get();
  stats.pops = local_->pops.Get();
  stats.push_waits = local_->push_waits.Get();
  stats.pop_waits = local_->pop_waits.Get();
  stats.push_wait_ns = local_->push_wait_ns.Get();
  stats.pop_wait_ns = local_->pop_wait_ns.Get();
  stats.push_timeouts = local_->push_timeouts.Get();
  stats.pop_timeouts = local_->pop_timeouts.Get();
  return stats;
}

}  // namespace az::shm
