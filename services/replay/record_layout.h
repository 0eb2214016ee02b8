#pragma once

// What the daemon knows about the records it stores. The store itself holds opaque bytes of a fixed
// size; with the chess layout the daemon also checks every record that arrives (from the sample
// ring or an `insert`) and reads the model version that produced it, for the staleness metric.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::replayd {

enum class RecordLayout {
  kChess,  // sample::ChessSample (1160 bytes), validated on arrival
  kBytes,  // any fixed size, not looked into
};

// "chess" or "bytes"; InvalidArgument otherwise.
Result<RecordLayout> ParseRecordLayout(std::string_view name);
std::string_view RecordLayoutName(RecordLayout layout);

// InvalidArgument when `record_bytes` does not fit the layout (chess: exactly sizeof(ChessSample)).
Status CheckRecordSize(RecordLayout layout, std::uint64_t record_bytes);

// Checks one arriving record: for chess, sample::ValidateSample and sample::CheckPolicyIsLegal
// (about a microsecond). The error names what is wrong. Always OK for kBytes.
Status CheckRecord(RecordLayout layout, std::span<const std::byte> record);

// The model version a record was produced with (chess: ChessSample::model_version); nullopt for
// layouts that do not carry one.
std::optional<std::uint32_t> ModelVersionOf(RecordLayout layout, std::span<const std::byte> record);

}  // namespace az::replayd
