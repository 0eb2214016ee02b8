#include "tests/replay/snapshot_v1_writer.h"

#include <cstring>
#include <fstream>

#include "core/replay/crc32c.h"
#include "core/replay/snapshot_format.h"

namespace az::replay::testing {

Status WriteSnapshotV1(const std::string& path, std::uint32_t record_size, double alpha,
                       const std::vector<V1Record>& records) {
  std::vector<std::byte> file;
  auto append = [&](const void* p, std::size_t n) {
    const auto* bytes = static_cast<const std::byte*>(p);
    file.insert(file.end(), bytes, bytes + n);
  };
  SnapshotHeaderV1 header{};
  std::memcpy(header.magic, kSnapshotMagic, sizeof(header.magic));
  header.version = 1;
  header.record_size = record_size;
  header.record_count = records.size();
  header.alpha = alpha;
  append(&header, sizeof(header));
  for (const V1Record& record : records) {
    if (record.bytes.size() != record_size) return InvalidArgument("record of the wrong size");
    append(&record.priority, sizeof(record.priority));
    append(record.bytes.data(), record.bytes.size());
  }
  const std::uint32_t crc = Crc32c(file);
  append(&crc, sizeof(crc));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(file.size()));
  out.close();
  if (!out) return Unavailable("writing " + path + " failed");
  return Status::Ok();
}

std::vector<V1Record> CheckedInV1Records() {
  std::vector<V1Record> records;
  for (int i = 0; i < 6; ++i) {
    V1Record record{0.5f * static_cast<float>(i + 1), std::vector<std::byte>(kV1RecordSize)};
    for (std::uint32_t j = 0; j < kV1RecordSize; ++j) {
      record.bytes[j] = static_cast<std::byte>(16 * i + static_cast<int>(j));
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace az::replay::testing
