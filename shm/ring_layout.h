#pragma once

// The shared-memory layout of a ring: a header, then `capacity` slots. Each slot starts with one
// 64-bit state word; the record follows in the same cache line when it fits (<= 56 bytes), else on
// the next line. Positions are 64-bit counters (head: next to produce, tail: next to consume); slot
// i holds positions i, i + capacity, i + 2 * capacity, ...
//
// Slot word: | position (39 bits) | state (3 bits) | owner pid (22 bits) |
//   kFree(p)        ready for the producer of position p
//   kWriting(p, o)  claimed by producer process o, record being written
//   kFull(p)        published
//   kReading(p, o)  claimed by consumer process o, record being read
//   kSkip(p)        a hole: the producer died before publishing; consumers step over it
//   kOrphan(p)      published, but the consumer that claimed it died before releasing it;
//                   any consumer takes it and delivers it
// A consumer releases position p by storing kFree(p + capacity).
//
// The position is kept modulo 2^39: a handle that stalls for 2^39 ring operations between reading a
// slot word and its compare-and-swap could be fooled (15 hours at 10 million operations a second).
//
// Changing anything here means bumping kRingLayoutVersion; tests/shm/layout_test.cc pins it.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "shm/process_table.h"
#include "shm/segment_layout.h"

namespace az::shm {

inline constexpr std::uint64_t kRingMagic = 0x31474e4952485a41;  // "AZHRING1" little-endian
inline constexpr std::uint32_t kRingLayoutVersion = 1;
inline constexpr std::uint32_t kRingLayoutKind = FourCc('R', 'I', 'N', 'G');
inline constexpr std::size_t kCacheLine = 64;
// Hot words sit 128 bytes apart: the adjacent-line prefetcher moves lines in pairs.
inline constexpr std::size_t kHotStride = 128;
inline constexpr std::uint64_t kMaxRingCapacity = std::uint64_t{1} << 24;
inline constexpr std::uint32_t kMaxRecordBytes = 1u << 24;

enum class SlotState : std::uint32_t {
  kFree = 0,
  kWriting = 1,
  kFull = 2,
  kSkip = 3,
  kReading = 4,
  kOrphan = 5,
};

inline constexpr int kSlotOwnerBits = kPidBits;  // 22
inline constexpr int kSlotStateBits = 3;
inline constexpr int kSlotPositionShift = kSlotOwnerBits + kSlotStateBits;  // 25
inline constexpr int kSlotPositionBits = 64 - kSlotPositionShift;           // 39
inline constexpr std::uint64_t kSlotPositionMask = (std::uint64_t{1} << kSlotPositionBits) - 1;

constexpr std::uint64_t MakeSlotWord(std::uint64_t position, SlotState state, std::uint32_t owner) {
  return (position << kSlotPositionShift) | (static_cast<std::uint64_t>(state) << kSlotOwnerBits) |
         (owner & kPidMask);
}
constexpr std::uint64_t SlotPosition(std::uint64_t word) { return word >> kSlotPositionShift; }
constexpr SlotState SlotStateOf(std::uint64_t word) {
  return static_cast<SlotState>((word >> kSlotOwnerBits) & ((1u << kSlotStateBits) - 1));
}
constexpr std::uint32_t SlotOwner(std::uint64_t word) {
  return static_cast<std::uint32_t>(word & kPidMask);
}
// (slot position - position) as a signed number, both taken modulo 2^39.
constexpr std::int64_t PositionDiff(std::uint64_t slot_position, std::uint64_t position) {
  const std::uint64_t d = (slot_position - position) & kSlotPositionMask;
  return static_cast<std::int64_t>(d << kSlotPositionShift) >> kSlotPositionShift;
}

// A futex word, the number of threads (all processes) about to sleep or sleeping on it, and whether
// a wake has been sent that no sleeper has picked up yet (so that a producer racing ahead of a
// consumer that is still being scheduled makes one wake call, not one per record).
struct WaitCell {
  std::uint32_t sequence;  // bumped by a waker; sleepers wait while it is unchanged
  std::uint32_t waiters;
  std::uint32_t wake_pending;
  std::uint32_t reserved;
};

// Rare events, counted for all processes.
struct RingEventCounters {
  std::uint32_t orphan_hint;  // > 0: some slot may be kOrphan (a hint, repaired by scans)
  std::uint32_t reserved0;
  std::uint64_t reclaimed_writes;  // kWriting slots of dead producers turned into kSkip
  std::uint64_t reclaimed_reads;   // kReading slots of dead consumers turned into kOrphan
  std::uint64_t reaped_processes;  // process entries of dead processes freed
};

struct RingHeader {
  // Immutable after creation.
  std::uint64_t magic;    // kRingMagic
  std::uint32_t version;  // kRingLayoutVersion
  std::uint32_t record_bytes;
  std::uint64_t capacity;                  // a power of two
  std::uint64_t slot_stride;               // bytes per slot, a multiple of kCacheLine
  std::uint64_t data_offset;               // record offset inside a slot: 8 or kCacheLine
  std::uint64_t slots_offset;              // from the start of this header
  std::uint64_t total_bytes;               // header + slots
  alignas(kHotStride) std::uint64_t head;  // next position to produce
  alignas(kHotStride) std::uint64_t tail;  // next position to consume
  alignas(kHotStride) WaitCell not_empty;  // consumers sleep here
  alignas(kHotStride) WaitCell not_full;   // producers sleep here
  alignas(kHotStride) RingEventCounters events;
  alignas(kHotStride) ProcessTable processes;
};
static_assert(std::is_trivially_copyable_v<RingHeader>);
static_assert(std::is_standard_layout_v<RingHeader>);
static_assert(offsetof(RingHeader, head) == 128);
static_assert(offsetof(RingHeader, tail) == 256);
static_assert(offsetof(RingHeader, not_empty) == 384);
static_assert(offsetof(RingHeader, not_full) == 512);
static_assert(offsetof(RingHeader, events) == 640);
static_assert(offsetof(RingHeader, processes) == 768);
static_assert(sizeof(RingHeader) == 768 + sizeof(ProcessTable));
static_assert(sizeof(RingHeader) % kHotStride == 0);

// Index of the wait cells in ProcessEntry::waiting.
inline constexpr int kConsumerCell = 0;  // not_empty
inline constexpr int kProducerCell = 1;  // not_full

}  // namespace az::shm
