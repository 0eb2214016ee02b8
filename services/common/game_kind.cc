#include "services/common/game_kind.h"

#include <string>

#include "core/base/check.h"

namespace az::service {

Result<GameKind> ParseGameKind(std::string_view name) {
  AZ_ASSIGN_OR_RETURN(const games::GameInfo* game, games::FindGame(name));
  return game->id;
}

std::string_view GameKindName(GameKind kind) {
  const games::GameInfo* game = games::FindGameById(kind);
  AZ_CHECK(game != nullptr, "GameKindName: no registered game has id " + std::to_string(kind));
  return game->name;
}

std::string GameKindChoices() { return games::GameNames("|"); }

namespace {

// "chess V, connect4 V, ..." with each game's V = value(its network shape).
template <typename Value>
std::string JoinPerGame(Value value) {
  std::string joined;
  for (const games::GameInfo& game : games::AllGames()) {
    if (!joined.empty()) joined += ", ";
    joined += std::string(game.name) + " " + value(game.net);
  }
  return joined;
}

}  // namespace

std::string GameKindNetShapes() {
  return JoinPerGame([](const games::NetShape& net) {
    return std::to_string(net.blocks) + "x" + std::to_string(net.filters);
  });
}

std::string GameKindNetField(int games::NetShape::*field) {
  return JoinPerGame([field](const games::NetShape& net) { return std::to_string(net.*field); });
}

std::vector<std::string> GameKindNames() {
  std::vector<std::string> names;
  for (const games::GameInfo& game : games::AllGames()) names.emplace_back(game.name);
  return names;
}

}  // namespace az::service
