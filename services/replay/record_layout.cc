#include "services/replay/record_layout.h"

namespace az::replayd {

Result<RecordLayout> ParseRecordLayout(std::string_view name) {
  if (name == "bytes") return RecordLayout::Bytes();
  Result<const games::GameInfo*> game = games::FindGame(name);
  if (!game.ok()) {
    return InvalidArgument("record layout must be one of " + RecordLayoutChoices() + ", got '" +
                           std::string(name) + "'");
  }
  return RecordLayout::Of(**game);
}

std::string_view RecordLayoutName(RecordLayout layout) {
  return layout.game == nullptr ? "bytes" : layout.game->name;
}

std::string RecordLayoutChoices() { return games::GameNames("|") + "|bytes"; }

Status CheckRecordSize(RecordLayout layout, std::uint64_t record_bytes) {
  if (layout.game != nullptr && record_bytes != layout.game->sample_bytes) {
    return InvalidArgument("the " + std::string(layout.game->name) + " record layout has " +
                           std::to_string(layout.game->sample_bytes) + "-byte records, not " +
                           std::to_string(record_bytes) +
                           " (use --record-layout bytes for other records)");
  }
  return Status::Ok();
}

Status CheckRecord(RecordLayout layout, std::span<const std::byte> record) {
  if (layout.game == nullptr) return Status::Ok();
  return layout.game->validate_sample(record);
}

std::optional<std::uint32_t> ModelVersionOf(RecordLayout layout,
                                            std::span<const std::byte> record) {
  if (layout.game == nullptr || record.size() != layout.game->sample_bytes) return std::nullopt;
  return layout.game->sample_model_version(record);
}

}  // namespace az::replayd
