#pragma once

// Helpers shared by the replay tests: a temporary directory and records whose bytes are a function
// of a key, so that a test can tell a record's identity (and whether it is torn) from its bytes.

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/base/check.h"

namespace az::replay::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "az_replay_test.XXXXXX").string();
    AZ_CHECK(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::uint64_t Mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// Fills `out` with bytes derived from `key`.
inline void FillRecord(std::uint64_t key, std::span<std::byte> out) {
  for (std::size_t i = 0; i < out.size(); i += 8) {
    const std::uint64_t word = Mix(key * 0x9e3779b97f4a7c15ULL + i);
    std::memcpy(out.data() + i, &word, std::min<std::size_t>(8, out.size() - i));
  }
}

inline std::vector<std::byte> MakeRecord(std::uint64_t key, std::size_t size) {
  std::vector<std::byte> record(size);
  FillRecord(key, record);
  return record;
}

// `count` records with keys first, first + 1, ... back to back.
inline std::vector<std::byte> MakeRecords(std::uint64_t first, std::size_t count,
                                          std::size_t size) {
  std::vector<std::byte> records(count * size);
  for (std::size_t i = 0; i < count; ++i) {
    FillRecord(first + i, std::span(records).subspan(i * size, size));
  }
  return records;
}

inline bool RecordMatches(std::uint64_t key, std::span<const std::byte> record) {
  const std::vector<std::byte> expected = MakeRecord(key, record.size());
  return std::memcmp(expected.data(), record.data(), record.size()) == 0;
}

}  // namespace az::replay::testing
