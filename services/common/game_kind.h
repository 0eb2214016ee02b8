#pragma once

// The games the services run, as a value that flags, configs and wire records carry, and the
// compile-time link from a game type (core/games) to it.

#include <cstdint>
#include <string_view>

#include "core/base/status.h"
#include "core/games/chess.h"
#include "core/games/connect_four.h"

namespace az::service {

enum class GameKind : std::uint8_t {
  kChess = 1,
  kConnectFour = 2,
};

// "chess" or "connect4" (the --game flag); InvalidArgument otherwise.
Result<GameKind> ParseGameKind(std::string_view name);
std::string_view GameKindName(GameKind kind);

template <typename G>
struct GameKindOf;
template <>
struct GameKindOf<games::Chess> {
  static constexpr GameKind kValue = GameKind::kChess;
};
template <>
struct GameKindOf<games::ConnectFour> {
  static constexpr GameKind kValue = GameKind::kConnectFour;
};

}  // namespace az::service
