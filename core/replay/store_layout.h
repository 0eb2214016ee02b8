#pragma once

// The on-disk layout of the memory-mapped replay store (one file):
//
//   [StoreHeader, 128 bytes][zeros to 4096]
//   [SlotMeta x capacity][zeros to the next 4096]
//   [record data: capacity x record_stride bytes]
//
// A slot's SlotMeta::state is its commit marker: 0 = empty; an even value = a record is being
// written (claimed, not committed); an odd value = committed. Both non-zero forms carry the slot's
// insert generation as (generation + 1) << 1. A record is committed by storing the odd state last
// (release), after its bytes and its priority, so a process killed mid-write leaves an even state,
// which the next open treats as empty. Bump kStoreLayoutVersion on any change here; tests pin the
// sizes and offsets.

#include <cstdint>
#include <type_traits>

namespace az::replay {

inline constexpr char kStoreMagic[8] = {'A', 'Z', 'R', 'E', 'P', 'L', 'A', 'Y'};
inline constexpr std::uint32_t kStoreLayoutVersion = 1;
inline constexpr std::uint64_t kStorePageSize = 4096;

struct StoreHeader {
  char magic[8];                         // kStoreMagic
  std::uint32_t layout_version;          // kStoreLayoutVersion
  std::uint32_t header_size;             // sizeof(StoreHeader)
  std::uint64_t record_size;             // bytes per record, as created
  std::uint64_t record_stride;           // record_size rounded up to 8
  std::uint64_t capacity;                // slots
  double alpha;                          // priority exponent the priorities were computed with
  std::uint32_t priority_fraction_bits;  // fixed-point priority units: 2^-bits each (priority.h)
  std::uint32_t reserved0;
  std::uint64_t meta_offset;  // file offset of SlotMeta[capacity]
  std::uint64_t data_offset;  // file offset of the record data
  std::uint64_t file_size;
  std::uint64_t creator_pid;
  std::uint64_t created_unix_seconds;
  // The only field written after creation (on Replace() and on close): generations below it were
  // issued, so a reopened store never hands one out again even if every record was lost.
  std::uint64_t next_generation_floor;
  std::uint8_t reserved[24];
};
static_assert(std::is_trivially_copyable_v<StoreHeader>);
static_assert(sizeof(StoreHeader) == 128 && alignof(StoreHeader) == 8);

struct SlotMeta {
  std::uint64_t state;           // commit marker and generation, see above; accessed atomically
  std::uint64_t priority_units;  // fixed-point priority; accessed atomically
};
static_assert(std::is_trivially_copyable_v<SlotMeta>);
static_assert(sizeof(SlotMeta) == 16 && alignof(SlotMeta) == 8);

inline constexpr std::uint64_t kSlotEmpty = 0;
inline constexpr std::uint64_t WritingState(std::uint64_t generation) {
  return (generation + 1) << 1;
}
inline constexpr std::uint64_t CommittedState(std::uint64_t generation) {
  return WritingState(generation) | 1;
}
inline constexpr bool IsCommitted(std::uint64_t state) { return (state & 1) != 0; }
inline constexpr bool IsWriting(std::uint64_t state) {
  return state != kSlotEmpty && !IsCommitted(state);
}
inline constexpr std::uint64_t GenerationOf(std::uint64_t state) { return (state >> 1) - 1; }

// Where everything lies for a store of this shape.
struct StoreLayout {
  std::uint64_t record_stride;
  std::uint64_t meta_offset;
  std::uint64_t data_offset;
  std::uint64_t file_size;
};

inline constexpr StoreLayout ComputeStoreLayout(std::uint64_t capacity, std::uint64_t record_size) {
  auto round_up = [](std::uint64_t x, std::uint64_t to) { return (x + to - 1) / to * to; };
  StoreLayout layout{};
  layout.record_stride = round_up(record_size, 8);
  layout.meta_offset = kStorePageSize;
  layout.data_offset = round_up(layout.meta_offset + capacity * sizeof(SlotMeta), kStorePageSize);
  layout.file_size = layout.data_offset + capacity * layout.record_stride;
  return layout;
}

}  // namespace az::replay
