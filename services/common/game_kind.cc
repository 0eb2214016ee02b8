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

std::string GameKindNetShapes() {
  std::string shapes;
  for (const games::GameInfo& game : games::AllGames()) {
    if (!shapes.empty()) shapes += ", ";
    shapes += std::string(game.name) + " " + std::to_string(game.net.blocks) + "x" +
              std::to_string(game.net.filters);
  }
  return shapes;
}

std::string GameKindNetField(int games::NetShape::*field) {
  std::string values;
  for (const games::GameInfo& game : games::AllGames()) {
    if (!values.empty()) values += ", ";
    values += std::string(game.name) + " " + std::to_string(game.net.*field);
  }
  return values;
}

std::vector<std::string> GameKindNames() {
  std::vector<std::string> names;
  for (const games::GameInfo& game : games::AllGames()) names.emplace_back(game.name);
  return names;
}

}  // namespace az::service
