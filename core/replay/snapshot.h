#pragma once

// Snapshots of a replay store to a separate file: versioned, checksummed (CRC-32C), written under a
// temporary name, synced and renamed, so that a crash never leaves a half-written file under the
// real name. Loading accepts the current version (2) and the one before (1); the layouts and what
// changed are in snapshot_format.h and docs/replay.md.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/replay/replay_store.h"

namespace az::replay {

struct SnapshotInfo {
  std::uint32_t version = 0;
  std::uint64_t records_in_file = 0;
  std::uint64_t records_loaded = 0;   // min(records_in_file, capacity): the newest ones
  std::uint64_t records_dropped = 0;  // the oldest records beyond the capacity
  // True when every record went back to its original slot with its original generation (version 2,
  // same capacity, and the store had not issued later generations); otherwise records got new ones.
  bool generations_preserved = false;
  std::vector<std::byte> metadata;  // the metadata saved with it (empty for version 1)
};

// Writes every committed record of `store` (oldest first, each with its generation and priority)
// and `metadata` (at most 1 MiB) to `path` in the current version. Records inserted while it runs
// may or may not be included; each included record is intact. Inserts, samples and updates go on
// meanwhile. Returns the number of records written. Unavailable for I/O errors (the real name is
// not touched); InvalidArgument for oversized metadata.
Result<std::uint64_t> SaveSnapshot(const ReplayStore& store, const std::string& path,
                                   std::span<const std::byte> metadata = {});

// Replaces the contents of `store` with the snapshot at `path`. The whole file is verified first
// (header, sizes, checksums, generations): a missing, truncated, corrupt or incompatible file is
// refused with a message that says what is wrong and the store is left untouched. NotFound;
// DataLoss for a truncated or corrupt file; FailedPrecondition when its record size or alpha
// differs from the store's, its version is unknown, or inserts advanced the store's generations
// while the file was being verified (retry; nothing was changed); Unavailable for I/O errors. A
// snapshot larger than the capacity keeps its newest records. Blocks the store's other calls while
// the records are written back (see ReplayStore::Replace).
Result<SnapshotInfo> LoadSnapshot(ReplayStore& store, const std::string& path);

}  // namespace az::replay
