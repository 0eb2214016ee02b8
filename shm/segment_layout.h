#pragma once

// The header every shared segment starts with. A process that opens a segment checks each field
// against what it expects and refuses a mismatch with a message that names it, so two builds with
// different record layouts never read each other's bytes.
//
//   offset 0     SegmentHeader (256 bytes)
//   offset 256   ProcessTable: the processes attached to the segment (2048 bytes)
//   offset 4096  payload: the layout named by layout_kind (a ring, a request channel, ...)
//
// Changing anything here means bumping kSegmentHeaderVersion; tests/shm/layout_test.cc pins it.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "shm/process_table.h"

namespace az::shm {

inline constexpr std::uint64_t kSegmentMagic = 0x31474553'4d485a41;  // "AZHMSEG1" little-endian
inline constexpr std::uint32_t kSegmentHeaderVersion = 1;
inline constexpr std::size_t kSegmentPayloadOffset = 4096;

// What the payload is. FourCC codes so a hex dump is readable.
inline constexpr std::uint32_t FourCc(char a, char b, char c, char d) {
  return static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b) << 8 |
         static_cast<std::uint32_t>(c) << 16 | static_cast<std::uint32_t>(d) << 24;
}

struct SegmentHeader {
  std::uint64_t magic;           // kSegmentMagic; stored last by the creator (release)
  std::uint32_t header_version;  // kSegmentHeaderVersion
  std::uint32_t layout_kind;     // FourCc of the payload layout
  std::uint32_t layout_version;  // version of that payload layout
  std::uint32_t record_bytes;    // bytes per record of the segment's main ring
  std::uint64_t capacity;        // records in the segment's main ring
  std::uint64_t total_bytes;     // size of the whole segment
  std::uint64_t payload_offset;  // kSegmentPayloadOffset
  std::uint64_t payload_bytes;   // total_bytes - payload_offset
  std::uint32_t creator_pid;     // who created it ...
  std::uint32_t reserved0;
  std::uint64_t creator_start_ticks;  // ... and when that process started (guards pid reuse)
  std::uint64_t created_unix_ns;      // wall-clock creation time, for diagnostics
  std::uint8_t reserved[256 - 80];
};
static_assert(std::is_trivially_copyable_v<SegmentHeader>);
static_assert(std::is_standard_layout_v<SegmentHeader>);
static_assert(sizeof(SegmentHeader) == 256);
static_assert(offsetof(SegmentHeader, magic) == 0);
static_assert(offsetof(SegmentHeader, record_bytes) == 20);
static_assert(offsetof(SegmentHeader, capacity) == 24);
static_assert(offsetof(SegmentHeader, creator_pid) == 56);
static_assert(offsetof(SegmentHeader, creator_start_ticks) == 64);
static_assert(offsetof(SegmentHeader, created_unix_ns) == 72);

// The fixed start of every segment.
struct SegmentPreamble {
  SegmentHeader header;
  ProcessTable attached;
};
static_assert(std::is_trivially_copyable_v<SegmentPreamble>);
static_assert(offsetof(SegmentPreamble, attached) == 256);
static_assert(sizeof(SegmentPreamble) <= kSegmentPayloadOffset);

}  // namespace az::shm
