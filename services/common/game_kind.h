#pragma once

// The game a service runs, as flags, configs and wire records carry it: the id of a game registered
// in core/games/registry.h (games::Chess::kId, games::ConnectFour::kId, ...).

#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/games/registry.h"

namespace az::service {

using GameKind = games::GameId;

// A registered game's name (the --game flag: "chess", "connect4", "tictactoe", ...) to its id;
// InvalidArgument listing the known names otherwise.
Result<GameKind> ParseGameKind(std::string_view name);
// The registered name of `kind` (checked: a registered id).
std::string_view GameKindName(GameKind kind);
// "chess|connect4|tictactoe": for flag help.
std::string GameKindChoices();
// "chess 6x64, connect4 3x32, tictactoe 2x32": each game's default network (its kNet), for flag
// help, so that the help follows the games' definitions.
std::string GameKindNetShapes();
// "chess 2, connect4 8, tictactoe 2": one field of each game's default network, e.g.
// &games::NetShape::policy_channels, for the help of the flag that overrides it.
std::string GameKindNetField(int games::NetShape::*field);
// {"chess", "connect4", "tictactoe"}: for a flag's check (CLI::IsMember).
std::vector<std::string> GameKindNames();

template <typename G>
struct GameKindOf {
  static constexpr GameKind kValue = G::kId;
};

}  // namespace az::service
