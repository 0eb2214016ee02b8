// The game names and default network shapes that the services' flag help is built from: they
// come from the registered games' definitions (core/games/registry.h), so that changing a game's
// kNet changes every help text with it.

#include "services/common/game_kind.h"

#include <gtest/gtest.h>

#include <string>

#include "core/games/registry.h"

namespace az::service {
namespace {

TEST(GameKindTest, NamesRoundTripThroughIds) {
  for (const std::string& name : GameKindNames()) {
    Result<GameKind> kind = ParseGameKind(name);
    ASSERT_TRUE(kind.ok()) << kind.status().ToString();
    EXPECT_EQ(GameKindName(*kind), name);
  }
  EXPECT_EQ(GameKindChoices(), "chess|connect4|tictactoe");
  EXPECT_FALSE(ParseGameKind("checkers").ok());
}

TEST(GameKindTest, NetShapesFollowEachGamesDefinition) {
  const std::string shapes = GameKindNetShapes();
  for (const games::GameInfo& game : games::AllGames()) {
    const std::string entry = std::string(game.name) + " " + std::to_string(game.net.blocks) + "x" +
                              std::to_string(game.net.filters);
    EXPECT_NE(shapes.find(entry), std::string::npos) << shapes << " lacks " << entry;
  }
}

TEST(GameKindTest, NetFieldFollowsEachGamesDefinition) {
  const std::string channels = GameKindNetField(&games::NetShape::policy_channels);
  for (const games::GameInfo& game : games::AllGames()) {
    const std::string entry =
        std::string(game.name) + " " + std::to_string(game.net.policy_channels);
    EXPECT_NE(channels.find(entry), std::string::npos) << channels << " lacks " << entry;
  }
}

}  // namespace
}  // namespace az::service
