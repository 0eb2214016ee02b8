#include "services/replay/record_layout.h"

#include <cstring>

#include "core/sample/chess_sample.h"

namespace az::replayd {

Result<RecordLayout> ParseRecordLayout(std::string_view name) {
  if (name == "chess") return RecordLayout::kChess;
  if (name == "bytes") return RecordLayout::kBytes;
  return InvalidArgument("record layout must be 'chess' or 'bytes', got '" + std::string(name) +
                         "'");
}

std::string_view RecordLayoutName(RecordLayout layout) {
  return layout == RecordLayout::kChess ? "chess" : "bytes";
}

Status CheckRecordSize(RecordLayout layout, std::uint64_t record_bytes) {
  if (layout == RecordLayout::kChess && record_bytes != sizeof(sample::ChessSample)) {
    return InvalidArgument("the chess record layout has " +
                           std::to_string(sizeof(sample::ChessSample)) + "-byte records, not " +
                           std::to_string(record_bytes) +
                           " (use --record-layout bytes for other records)");
  }
  return Status::Ok();
}

Status CheckRecord(RecordLayout layout, std::span<const std::byte> record) {
  if (layout != RecordLayout::kChess) return Status::Ok();
  if (record.size() != sizeof(sample::ChessSample)) {
    return InvalidArgument("a chess sample has " + std::to_string(sizeof(sample::ChessSample)) +
                           " bytes, got " + std::to_string(record.size()));
  }
  // The bytes may sit anywhere (a ring slot, a frame): copy before reading them as the struct.
  sample::ChessSample sample;
  std::memcpy(&sample, record.data(), sizeof sample);
  AZ_RETURN_IF_ERROR(sample::ValidateSample(sample));
  return sample::CheckPolicyIsLegal(sample);
}

std::optional<std::uint32_t> ModelVersionOf(RecordLayout layout,
                                            std::span<const std::byte> record) {
  if (layout != RecordLayout::kChess || record.size() < sizeof(sample::ChessSample)) {
    return std::nullopt;
  }
  std::uint32_t version = 0;
  std::memcpy(&version, record.data() + offsetof(sample::ChessSample, model_version),
              sizeof version);
  return version;
}

}  // namespace az::replayd
