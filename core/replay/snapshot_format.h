#pragma once

// Snapshot file layouts. All integers little-endian (the only byte order we build for), entries
// packed with no padding, read and written with memcpy.
//
// Version 2 (written now):
//   SnapshotHeaderV2 (128 bytes; header_crc32c covers it with that field zeroed)
//   metadata (metadata_size bytes: opaque to this library, e.g. the daemon's model version)
//   record_count x { SnapshotEntryV2 (generation, priority as double), record bytes }
//   body_crc32c in the header covers metadata and entries.
//
// Version 1 (still read; the checked-in tests/replay/data/snapshot_v1.azsnap is one):
//   SnapshotHeaderV1 (64 bytes)
//   record_count x { float priority, record bytes }
//   uint32 CRC-32C of every byte before it.
//
// What version 2 added: per-record insert generations and the next generation, so that a snapshot
// reloaded into a store of the same capacity puts every record back in its slot with its generation
// (a learner's outstanding priority updates still apply); the source capacity; priorities as
// double; an application metadata blob; and a header checksum separate from the body's, so a
// damaged header is recognised as such before its sizes are trusted.

#include <cstdint>
#include <type_traits>

namespace az::replay {

inline constexpr char kSnapshotMagic[8] = {'A', 'Z', 'R', 'S', 'N', 'A', 'P', '\0'};
inline constexpr std::uint32_t kSnapshotVersion = 2;
inline constexpr std::uint32_t kOldestSnapshotVersion = 1;

struct SnapshotHeaderV1 {
  char magic[8];          // kSnapshotMagic
  std::uint32_t version;  // 1
  std::uint32_t record_size;
  std::uint64_t record_count;
  double alpha;
  std::uint8_t reserved[32];
};
static_assert(std::is_trivially_copyable_v<SnapshotHeaderV1>);
static_assert(sizeof(SnapshotHeaderV1) == 64 && alignof(SnapshotHeaderV1) == 8);
inline constexpr std::uint64_t kSnapshotV1EntryHeader = sizeof(float);  // the priority

struct SnapshotHeaderV2 {
  char magic[8];              // kSnapshotMagic
  std::uint32_t version;      // 2
  std::uint32_t header_size;  // 128
  std::uint64_t record_size;
  std::uint64_t record_count;
  std::uint64_t source_capacity;
  std::uint64_t next_generation;
  double alpha;
  std::uint64_t metadata_size;
  std::uint64_t created_unix_seconds;
  std::uint32_t body_crc32c;
  std::uint32_t header_crc32c;  // of this header with header_crc32c = 0
  std::uint8_t reserved[48];
};
static_assert(std::is_trivially_copyable_v<SnapshotHeaderV2>);
static_assert(sizeof(SnapshotHeaderV2) == 128 && alignof(SnapshotHeaderV2) == 8);

struct SnapshotEntryV2 {
  std::uint64_t generation;
  double priority;
};
static_assert(std::is_trivially_copyable_v<SnapshotEntryV2>);
static_assert(sizeof(SnapshotEntryV2) == 16);

// Largest metadata blob a snapshot may carry.
inline constexpr std::uint64_t kMaxSnapshotMetadata = std::uint64_t{1} << 20;

}  // namespace az::replay
