#pragma once

// Helpers for the replay server's in-process tests: a real store in a temporary directory, and
// records that carry their id and a pattern derived from it, so a torn or mixed record is seen.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "core/replay/replay_store.h"
#include "tests/ipc/test_util.h"

namespace az::replayd::testing {

using ipc::testing::TempDir;
using ipc::testing::WaitFor;

inline constexpr std::size_t kRecordBytes = 64;

inline std::unique_ptr<replay::ReplayStore> OpenStore(const std::string& path,
                                                      std::uint64_t capacity,
                                                      std::uint64_t record_bytes = kRecordBytes,
                                                      double alpha = 0.6) {
  replay::ReplayStoreOptions options;
  options.path = path;
  options.capacity = capacity;
  options.record_size = record_bytes;
  options.alpha = alpha;
  Result<std::unique_ptr<replay::ReplayStore>> store = replay::ReplayStore::Open(options);
  AZ_CHECK(store.ok(), store.status().ToString());
  return std::move(store).value();
}

// A record with `id` in its first 8 bytes and a pattern derived from it in the rest.
inline std::vector<std::byte> IdRecord(std::uint64_t id, std::size_t bytes = kRecordBytes) {
  std::vector<std::byte> record(bytes);
  std::memcpy(record.data(), &id, sizeof id);
  for (std::size_t b = sizeof id; b < bytes; ++b) {
    record[b] = static_cast<std::byte>((id * 131 + b * 7) & 0xff);
  }
  return record;
}

// The id of an IdRecord; nullopt when its pattern is broken.
inline std::optional<std::uint64_t> RecordId(std::span<const std::byte> record) {
  std::uint64_t id = 0;
  std::memcpy(&id, record.data(), sizeof id);
  for (std::size_t b = sizeof id; b < record.size(); ++b) {
    if (record[b] != static_cast<std::byte>((id * 131 + b * 7) & 0xff)) return std::nullopt;
  }
  return id;
}

// Inserts IdRecords first_id .. first_id + count - 1.
inline void InsertIds(replay::ReplayStore& store, std::uint64_t first_id, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<std::byte> record = IdRecord(first_id + i, store.record_size());
    AZ_CHECK(store.Insert(record).ok(), "insert");
  }
}

// The ids of every record in the store, in slot order (a broken record counts as id -1).
inline std::vector<std::uint64_t> StoredIds(const replay::ReplayStore& store) {
  std::vector<std::uint64_t> ids;
  std::vector<std::byte> bytes(store.record_size());
  for (std::uint64_t slot = 0; slot < store.capacity(); ++slot) {
    if (store.ReadRecord(slot, bytes).ok()) ids.push_back(RecordId(bytes).value_or(~0ULL));
  }
  return ids;
}

}  // namespace az::replayd::testing
