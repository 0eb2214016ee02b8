#pragma once

// What the daemon knows about the records it stores. The store itself holds opaque bytes of a fixed
// size; with a game's layout (any game of core/games/registry.h: chess, connect4, tictactoe, ...)
// the daemon also checks every record that arrives (from the sample ring or an `insert`) with the
// game's sample validation, and reads the model version that produced it, for the staleness
// metric. The `bytes` layout stores any fixed-size record unchecked (tests, other producers).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/games/registry.h"

namespace az::replayd {

struct RecordLayout {
  const games::GameInfo* game = nullptr;  // nullptr: opaque bytes

  static RecordLayout Bytes() { return {}; }
  static RecordLayout Of(const games::GameInfo& info) { return {&info}; }
  friend bool operator==(const RecordLayout&, const RecordLayout&) = default;
};

// A registered game's name or "bytes"; InvalidArgument naming the choices otherwise.
Result<RecordLayout> ParseRecordLayout(std::string_view name);
// The game's name, or "bytes".
std::string_view RecordLayoutName(RecordLayout layout);
// "chess|connect4|tictactoe|bytes": for flag help.
std::string RecordLayoutChoices();

// InvalidArgument when `record_bytes` does not fit the layout (a game: exactly its sample's size).
Status CheckRecordSize(RecordLayout layout, std::uint64_t record_bytes);

// Checks one arriving record with the game's sample validation (chess: about a microsecond, legality
// included). The error names what is wrong. Always OK for bytes.
Status CheckRecord(RecordLayout layout, std::span<const std::byte> record);

// The model version a record was produced with; nullopt for bytes, or a record of the wrong size.
std::optional<std::uint32_t> ModelVersionOf(RecordLayout layout, std::span<const std::byte> record);

}  // namespace az::replayd
