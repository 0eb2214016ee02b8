// az-arena's players and matches: the baselines play what they promise, matches are fair and
// reproducible, and a weights file plays legal moves with and without search.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/games/connect4/connect_four.h"
#include "core/nn/trainer.h"
#include "services/arena/match.h"
#include "services/arena/players.h"
#include "tests/ipc/test_util.h"

namespace az::arena {
namespace {

using games::ConnectFourPosition;

ConnectFourPosition Position(std::string_view moves) {
  Result<ConnectFourPosition> p = ConnectFourPosition::FromMoves(moves);
  AZ_CHECK(p.ok(), p.status().ToString());
  return *p;
}

std::unique_ptr<Player> Make(const std::string& spec, int simulations = 8) {
  Result<std::unique_ptr<Player>> player = MakePlayer(spec, {.simulations = simulations});
  AZ_CHECK(player.ok(), player.status().ToString());
  return std::move(player).value();
}

TEST(ArenaTest, OneStepTakesAWinBlocksALossAndAvoidsHandingOneOver) {
  auto onestep = Make("onestep");
  mcts::Rng rng(1);
  // X has 1-2-3 on the bottom row and moves: 4 wins (column index 3).
  for (int i = 0; i < 20; ++i) EXPECT_EQ(*onestep->Choose(Position("112233"), rng), 3);
  // O to move, X threatens 4 on the bottom row: O blocks it.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(*onestep->Choose(Position("11223"), rng), 3);
  // X to move; O has 5-6-7 on the second row with 4's bottom cell empty: a stone in column 4
  // would let O complete the row on top of it, so X never plays there.
  const ConnectFourPosition trap = Position("55771616");
  EXPECT_EQ(WinningColumns(trap), 0u);
  for (int i = 0; i < 50; ++i) EXPECT_NE(*onestep->Choose(trap, rng), 3);
}

TEST(ArenaTest, OneStepBeatsRandomAndMatchesAreReproducible) {
  auto onestep = Make("onestep");
  auto random = Make("random");
  Result<MatchResult> result = PlayMatch(*onestep, *random, {.games = 100, .seed = 3});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->games, 100);
  EXPECT_EQ(result->a_wins + result->draws + result->b_wins, 100);
  EXPECT_GT(result->a_score, 0.8) << MatchResultToString(*result);
  EXPECT_GT(result->elo, 200);
  // The same seed plays the same games.
  Result<MatchResult> again = PlayMatch(*onestep, *random, {.games = 100, .seed = 3});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->a_wins, result->a_wins);
  EXPECT_EQ(again->b_wins, result->b_wins);
  // A player against itself scores one half: each opening is played from both sides.
  auto other = Make("onestep");
  Result<MatchResult> mirror = PlayMatch(*onestep, *other, {.games = 200, .seed = 4});
  ASSERT_TRUE(mirror.ok());
  EXPECT_NEAR(mirror->a_score, 0.5, 3 * mirror->a_score_ci95 + 0.01);
}

TEST(ArenaTest, AWeightsFilePlaysLegalMovesWithAndWithoutSearch) {
  ipc::testing::TempDir dir;
  nn::TrainerOptions options;
  options.net = nn::NetConfig::ConnectFour();
  options.runtime.device = nn::DeviceChoice::kCpu;
  options.runtime.input_layout = nn::InputLayout::kNchw;
  Result<std::unique_ptr<nn::Trainer>> trainer = nn::Trainer::Create(options);
  ASSERT_TRUE(trainer.ok());
  const std::string path = dir.path() + "/model-0.azw";
  ASSERT_TRUE((*trainer)->SaveWeights(path, 0).ok());

  auto random = Make("random");
  for (int simulations : {0, 16}) {
    auto network = Make(path, simulations);
    EXPECT_EQ(network->name(), path);
    // PlayMatch checks every move is playable; a full match means every move was.
    Result<MatchResult> result = PlayMatch(*network, *random, {.games = 6, .seed = 5});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->games, 6);
  }
  // With search, a one-move win is found whatever the network thinks.
  auto searcher = Make(path, 64);
  mcts::Rng rng(1);
  EXPECT_EQ(*searcher->Choose(Position("112233"), rng), 3);

  // A chess network is not a Connect Four player.
  nn::TrainerOptions chess = options;
  chess.net = nn::NetConfig::ChessSmall();
  chess.runtime.input_layout = nn::InputLayout::kNhwc;
  Result<std::unique_ptr<nn::Trainer>> chess_trainer = nn::Trainer::Create(chess);
  ASSERT_TRUE(chess_trainer.ok());
  ASSERT_TRUE((*chess_trainer)->SaveWeights(dir.path() + "/chess.azw", 0).ok());
  Result<std::unique_ptr<Player>> refused = MakePlayer(dir.path() + "/chess.azw", {});
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(MakePlayer(dir.path() + "/missing.azw", {}).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace az::arena
