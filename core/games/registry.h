#pragma once

// The games the pipeline runs, found by name (the --game flag) or by id (wire records, stores).
// The services are generic over core/games/game.h's GameDefinition; they pick the game here, once,
// at start-up, and from then on run a template instantiated for it.
//
//   AZ_ASSIGN_OR_RETURN(const games::GameInfo* game, games::FindGame("connect4"));
//   games::VisitGame(game->id, [&]<games::GameDefinition G>() { RunFor<G>(...); });
//
// Adding a game: its folder under core/games/<name>/ (a CMakeLists.txt making az_game_<name>, and
// a header defining the GameDefinition), and its entry in RegisteredGames below.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/base/check.h"
#include "core/base/status.h"
#include "core/games/chess/chess.h"
#include "core/games/connect4/connect_four.h"
#include "core/games/game.h"
#include "core/games/tictactoe/tictactoe.h"

namespace az::games {

template <GameDefinition... Gs>
struct GameList {};

// The registration: one entry per game.
using RegisteredGames = GameList<Chess, ConnectFour, TicTacToe>;

using GameId = std::uint8_t;

// What the services need to know about a game without instantiating a template for it.
struct GameInfo {
  std::string_view name;  // the --game value
  GameId id = 0;          // G::kId
  std::size_t sample_bytes = 0;
  std::size_t record_bytes = 0;
  int policy_size = 0;
  int max_moves = 0;
  InputShape input;
  NetShape net;
  PlayDefaults play;
  int symmetries = 1;
  bool has_solver = false;
  // G::ValidateSample on `bytes`, any alignment: InvalidArgument when the size is not
  // sample_bytes, DataLoss for a bad magic, InvalidArgument naming the field otherwise.
  Status (*validate_sample)(std::span<const std::byte> bytes) = nullptr;
  // The model version that searched a sample of sample_bytes bytes (checked), not validated.
  std::uint32_t (*sample_model_version)(std::span<const std::byte> bytes) = nullptr;
};

// Every registered game, in RegisteredGames order.
std::span<const GameInfo> AllGames();
// The game called `name`; InvalidArgument listing the known names otherwise.
Result<const GameInfo*> FindGame(std::string_view name);
// The game with `id`, or nullptr.
const GameInfo* FindGameById(GameId id);
// The names joined by `separator`: "chess|connect4|tictactoe".
std::string GameNames(std::string_view separator = "|");

namespace registry_internal {

template <typename Fn, GameDefinition G, GameDefinition... Rest>
decltype(auto) Visit(GameId id, Fn& fn, GameList<G, Rest...>) {
  if constexpr (sizeof...(Rest) == 0) {
    AZ_CHECK(id == G::kId, "VisitGame: no registered game has id " + std::to_string(id));
    return fn.template operator()<G>();
  } else {
    if (id == G::kId) return fn.template operator()<G>();
    return Visit(id, fn, GameList<Rest...>{});
  }
}

template <GameDefinition... Gs>
constexpr bool IdsAndNamesUnique(GameList<Gs...>) {
  constexpr GameId ids[] = {Gs::kId...};
  constexpr std::string_view names[] = {Gs::kName...};
  for (std::size_t i = 0; i < sizeof...(Gs); ++i) {
    if (ids[i] == 0) return false;
    for (std::size_t j = i + 1; j < sizeof...(Gs); ++j) {
      if (ids[i] == ids[j] || names[i] == names[j]) return false;
    }
  }
  return true;
}
static_assert(IdsAndNamesUnique(RegisteredGames{}), "game ids and names must be unique, ids > 0");

}  // namespace registry_internal

// Calls fn.template operator()<G>() for the registered game G whose kId is `id` and returns what
// it returns (the same type for every game). An unknown id is a bug (checked): ids come from
// FindGame or FindGameById.
template <typename Fn>
decltype(auto) VisitGame(GameId id, Fn&& fn) {
  return registry_internal::Visit(id, fn, RegisteredGames{});
}

// Calls fn.template operator()<G>() for every registered game.
template <typename Fn>
void ForEachGame(Fn&& fn) {
  [&]<GameDefinition... Gs>(GameList<Gs...>) { (fn.template operator()<Gs>(), ...); }(
      RegisteredGames{});
}

}  // namespace az::games
