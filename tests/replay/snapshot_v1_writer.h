#pragma once

// Writes the version-1 snapshot layout (core/replay/snapshot_format.h), as builds before version 2
// did. Used to regenerate the checked-in tests/replay/data/snapshot_v1.azsnap (make_v1_snapshot)
// and by the test that pins that file's bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace az::replay::testing {

struct V1Record {
  float priority;
  std::vector<std::byte> bytes;
};

Status WriteSnapshotV1(const std::string& path, std::uint32_t record_size, double alpha,
                       const std::vector<V1Record>& records);

// The content of the checked-in file: 6 records of 20 bytes, byte j of record i = 16 * i + j,
// priority 0.5 * (i + 1), alpha 0.6.
inline constexpr std::uint32_t kV1RecordSize = 20;
inline constexpr double kV1Alpha = 0.6;
std::vector<V1Record> CheckedInV1Records();

}  // namespace az::replay::testing
