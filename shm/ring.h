#pragma once

// A bounded ring of fixed-size records shared by many producer and many consumer processes:
// lock-free (a state word per slot, Vyukov-style positions), crash-safe, with futex sleeps.
//
// Guarantees, with any process killed by SIGKILL at any instruction:
//   - nobody is wedged: a slot claimed by a dead producer becomes a hole that consumers step over,
//     and a record held by a dead consumer is handed to another consumer. Survivors notice within
//     RingOptions::reclaim_interval while they are blocked in a call (or when they call
//     ReclaimDead());
//   - a published record (Push returned OK, or its producer died after publishing) is delivered
//     exactly once, where "delivered" means released by a consumer: Pop/Consume release each
//     record before they return it, so a caller never sees a record that another consumer also
//     gets. The Consume visitor runs before the release, so if a consumer dies inside it, the
//     visitor may run again for the same record in another consumer (with the same position).
//   - no interprocess lock exists at all.
// Records are bytes of the size fixed at creation; the ring knows nothing about their contents.
// Order: FIFO for one producer and one consumer; with several, roughly FIFO.
//
// A Ring handle may be used by several threads at once (its statistics may then undercount). A
// handle must not be used in a child after fork(): open the ring again there.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "core/base/status.h"
#include "shm/function_ref.h"
#include "shm/ring_layout.h"
#include "shm/scope.h"
#include "shm/segment.h"

namespace az::shm {

struct RingSpec {
  std::uint32_t record_bytes = 0;  // 1 .. 16 MiB
  std::uint64_t capacity = 0;      // records; a power of two, 1 .. 2^24
};

// InvalidArgument when the spec is out of range.
Status ValidateRingSpec(const RingSpec& spec);

struct RingOptions {
  // Blocking calls spin this long, re-checking the ring, before they sleep on the futex: a round
  // trip to a running peer takes about a microsecond, a futex sleep and wake some tens.
  std::chrono::nanoseconds spin_time{std::chrono::microseconds(50)};
  // A blocked call looks for slots held by dead processes this often; it is also the longest a
  // call sleeps without looking at the ring.
  std::chrono::milliseconds reclaim_interval{100};
};

struct RingStats {
  std::uint32_t record_bytes = 0;
  std::uint64_t capacity = 0;
  // All processes.
  std::uint64_t occupancy = 0;           // records published or in flight (head - tail)
  std::uint64_t produced = 0;            // positions ever claimed by producers (head)
  std::uint64_t consumed = 0;            // positions ever consumed or skipped (tail)
  std::uint64_t reclaimed_writes = 0;    // slots of dead producers turned into holes
  std::uint64_t reclaimed_reads = 0;     // records of dead consumers handed to another consumer
  std::uint64_t reaped_processes = 0;    // dead processes removed from the ring's table
  std::uint32_t sleeping_consumers = 0;  // threads now blocked waiting for a record
  std::uint32_t sleeping_producers = 0;  // threads now blocked waiting for a free slot
  // This handle.
  std::uint64_t pushes = 0;
  std::uint64_t pops = 0;
  std::uint64_t push_waits = 0;  // blocking pushes that found the ring full
  std::uint64_t pop_waits = 0;   // blocking pops that found the ring empty
  std::uint64_t push_wait_ns = 0;
  std::uint64_t pop_wait_ns = 0;
  std::uint64_t push_timeouts = 0;
  std::uint64_t pop_timeouts = 0;
};

class Ring {
 public:
  // Called with each record and its position (unique per published record, the same if the record
  // is delivered again after a consumer died). The record span is valid only during the call.
  using Visitor = FunctionRef<void(std::span<const std::byte> record, std::uint64_t position)>;
  // Writes a record in place; the span has record_bytes() bytes of unspecified content.
  using Filler = FunctionRef<void(std::span<std::byte> record)>;

  // Bytes a ring with this spec needs, and laying one out in zeroed memory (for segments that hold
  // several rings; a ring's memory must be 128-byte aligned inside its segment).
  static std::size_t BytesFor(const RingSpec& spec);
  static void Format(std::span<std::byte> memory, const RingSpec& spec);

  // A segment holding one ring. Errors as Segment::Create, plus InvalidArgument for a bad spec.
  static Result<Ring> Create(const Scope& scope, std::string_view name, const RingSpec& spec,
                             const RingOptions& options = {},
                             const CreateOptions& create_options = {});
  // Opens a ring segment and checks that its records have record_bytes bytes (capacity: any).
  // Errors as Segment::Open.
  static Result<Ring> Open(const Scope& scope, std::string_view name, std::uint32_t record_bytes,
                           const RingOptions& options = {}, const OpenOptions& open_options = {});
  // A ring laid out (by Format) at `offset` in the payload of `segment`. FailedPrecondition or
  // DataLoss when the memory there is not a ring of this layout version.
  static Result<Ring> Attach(std::shared_ptr<const Segment> segment, std::size_t offset,
                             const RingOptions& options = {});

  Ring(Ring&&) noexcept;
  Ring& operator=(Ring&&) noexcept;
  ~Ring();

  // Producer. record.size() must be record_bytes().
  // Never blocks; false when the ring is full.
  bool TryPush(std::span<const std::byte> record);
  // Blocks up to `timeout` while the ring is full: DeadlineExceeded.
  Status Push(std::span<const std::byte> record, std::chrono::nanoseconds timeout);
  // As Push, but `fill` writes the record straight into the slot. If the process dies inside
  // `fill`, the slot becomes a hole and nothing is delivered.
  Status PushWith(std::chrono::nanoseconds timeout, Filler fill);

  // Consumer. Takes up to max_records records (>= 1), calling `visit` on each in place.
  // Never blocks; returns how many (0: empty).
  std::size_t TryConsume(std::size_t max_records, Visitor visit);
  // Blocks up to `timeout` for the first record, then takes what else is there without waiting.
  // DeadlineExceeded when none came. Keep `visit` short: its slot is held while it runs.
  Result<std::size_t> Consume(std::size_t max_records, std::chrono::nanoseconds timeout,
                              Visitor visit);
  // As TryConsume/Consume, copying records into `out` (record_bytes() each, back to back);
  // takes at most out.size() / record_bytes() records.
  std::size_t TryPop(std::span<std::byte> out);
  Result<std::size_t> Pop(std::span<std::byte> out, std::chrono::nanoseconds timeout);

  // Turns slots held by dead processes into holes (writers) or orphans for redelivery (readers),
  // and frees dead processes' table entries. Blocking calls do this every reclaim_interval while
  // they wait; call it yourself if you only ever poll with Try*. Returns the slots reclaimed.
  // Costs a pass over the slot words plus a liveness check (/proc read) per suspect process.
  std::size_t ReclaimDead();

  RingStats Stats() const;
  std::uint32_t record_bytes() const { return record_bytes_; }
  std::uint64_t capacity() const { return capacity_; }

 private:
  struct Local;
  Ring() = default;

  std::optional<std::uint64_t> ClaimForWrite();
  void Publish(std::uint64_t position);
  std::optional<std::uint64_t> ClaimForRead();
  std::optional<std::uint64_t> RescueOrphan();
  void Release(std::uint64_t position);
  void Notify(int cell, int count, bool force = false);
  template <typename TryFn>
  auto BlockUntil(int cell, std::chrono::nanoseconds timeout, TryFn try_fn, bool* slept = nullptr)
      -> decltype(try_fn());
  std::uint64_t Occupancy() const;
  std::size_t Reclaim(bool own_pid_is_dead);
  void CheckProcess() const;

  std::shared_ptr<const Segment> segment_;
  RingHeader* header_ = nullptr;
  std::byte* slots_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t mask_ = 0;
  std::uint64_t stride_ = 0;
  std::uint64_t data_offset_ = 0;
  std::uint32_t record_bytes_ = 0;
  RingOptions options_;
  std::unique_ptr<Local> local_;  // destroyed before segment_: unregisters while still mapped
};

}  // namespace az::shm
