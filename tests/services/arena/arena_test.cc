// az-match's in-process players and matches (services/arena): the baselines play what they promise, matches are fair and
// reproducible, a weights file plays legal moves with and without search, and the same code plays
// chess (legal games, mate in one found and never allowed by onestep).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/games/chess/chess.h"
#include "core/games/connect4/connect_four.h"
#include "core/nn/trainer.h"
#include "services/arena/match.h"
#include "services/arena/players.h"
#include "tests/ipc/test_util.h"

namespace az::arena {
namespace {

using games::ConnectFour;
using games::ConnectFourPosition;
using C4Player = Player<ConnectFour>;

ConnectFourPosition Position(std::string_view moves) {
  Result<ConnectFourPosition> p = ConnectFourPosition::FromMoves(moves);
  AZ_CHECK(p.ok(), p.status().ToString());
  return *p;
}

std::unique_ptr<C4Player> Make(const std::string& spec, int simulations = 8) {
  Result<std::unique_ptr<C4Player>> player =
      MakePlayer<ConnectFour>(spec, {.simulations = simulations});
  AZ_CHECK(player.ok(), player.status().ToString());
  return std::move(player).value();
}

TEST(ArenaTest, OneStepTakesAWinBlocksALossAndAvoidsHandingOneOver) {
  auto onestep = Make("onestep");
  mcts::Rng rng(1);
  // X has 1-2-3 on the bottom row and moves: 4 wins (column index 3).
  for (int i = 0; i < 20; ++i) EXPECT_EQ(onestep->Choose(Position("112233"), rng)->column, 3);
  // O to move, X threatens 4 on the bottom row: O blocks it.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(onestep->Choose(Position("11223"), rng)->column, 3);
  // X to move; O has 5-6-7 on the second row with 4's bottom cell empty: a stone in column 4
  // would let O complete the row on top of it, so X never plays there.
  const ConnectFourPosition trap = Position("55771616");
  EXPECT_TRUE(WinningMoves<ConnectFour>(trap).empty());
  for (int i = 0; i < 50; ++i) EXPECT_NE(onestep->Choose(trap, rng)->column, 3);
}

TEST(ArenaTest, OneStepBeatsRandomAndMatchesAreReproducible) {
  auto onestep = Make("onestep");
  auto random = Make("random");
  Result<match::MatchReport> result = PlayMatch<ConnectFour>(*onestep, *random, {.games = 100, .seed = 3});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->tally.games(), 100);
  EXPECT_EQ(result->tally.wins + result->tally.draws + result->tally.losses, 100);
  EXPECT_GT(result->estimate.score, 0.8) << match::MatchReportToText(*result);
  EXPECT_GT(result->estimate.elo, 200);
  // The same seed plays the same games.
  Result<match::MatchReport> again = PlayMatch<ConnectFour>(*onestep, *random, {.games = 100, .seed = 3});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->tally.wins, result->tally.wins);
  EXPECT_EQ(again->tally.losses, result->tally.losses);
  // A player against itself scores one half: each opening is played from both sides.
  auto other = Make("onestep");
  Result<match::MatchReport> mirror = PlayMatch<ConnectFour>(*onestep, *other, {.games = 200, .seed = 4});
  ASSERT_TRUE(mirror.ok());
  EXPECT_NEAR(mirror->estimate.score, 0.5, 3 * mirror->estimate.score_ci95 + 0.01);
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
    Result<match::MatchReport> result = PlayMatch<ConnectFour>(*network, *random, {.games = 6, .seed = 5});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->tally.games(), 6);
  }
  // With search, a one-move win is found whatever the network thinks.
  auto searcher = Make(path, 64);
  mcts::Rng rng(1);
  EXPECT_EQ(searcher->Choose(Position("112233"), rng)->column, 3);

  // A chess network is not a Connect Four player.
  nn::TrainerOptions chess = options;
  chess.net = nn::NetConfig::ChessSmall();
  chess.runtime.input_layout = nn::InputLayout::kNhwc;
  Result<std::unique_ptr<nn::Trainer>> chess_trainer = nn::Trainer::Create(chess);
  ASSERT_TRUE(chess_trainer.ok());
  ASSERT_TRUE((*chess_trainer)->SaveWeights(dir.path() + "/chess.azw", 0).ok());
  Result<std::unique_ptr<C4Player>> refused =
      MakePlayer<ConnectFour>(dir.path() + "/chess.azw", {});
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(MakePlayer<ConnectFour>(dir.path() + "/missing.azw", {}).status().code(),
            StatusCode::kNotFound);

  // The chess network plays chess: a short match against random from book positions, every move
  // legal (PlayMatch checks), raw policy and search.
  for (int simulations : {0, 8}) {
    Result<std::unique_ptr<Player<games::Chess>>> chess_player =
        MakePlayer<games::Chess>(dir.path() + "/chess.azw", {.simulations = simulations});
    ASSERT_TRUE(chess_player.ok()) << chess_player.status().ToString();
    Result<std::unique_ptr<Player<games::Chess>>> chess_random =
        MakePlayer<games::Chess>("random", {});
    ASSERT_TRUE(chess_random.ok());
    Result<match::MatchReport> chess_match = PlayMatch<games::Chess>(
        **chess_player, **chess_random, {.games = 2, .opening_plies = 4, .seed = 2, .max_plies = 40});
    ASSERT_TRUE(chess_match.ok()) << chess_match.status().ToString();
    EXPECT_EQ(chess_match->tally.games(), 2);
  }
}

TEST(ArenaTest, ChessOneStepMatesInOneAndNeverAllowsOne) {
  Result<std::unique_ptr<Player<games::Chess>>> onestep = MakePlayer<games::Chess>("onestep", {});
  ASSERT_TRUE(onestep.ok());
  mcts::Rng rng(1);
  // A back-rank mate: Ra8#.
  Result<games::Chess::State> mate = games::Chess::ParsePosition("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
  ASSERT_TRUE(mate.ok()) << mate.status().ToString();
  const std::vector<games::Chess::Move> wins = WinningMoves<games::Chess>(*mate);
  ASSERT_FALSE(wins.empty());
  for (int i = 0; i < 5; ++i) {
    const games::Chess::Move move = *(*onestep)->Choose(*mate, rng);
    EXPECT_TRUE(WinsAtOnce<games::Chess>(*mate, move));
  }
  // Fool's mate threatened: after 1. f3 e5 2. g4?? black mates; white to move after 1. f3 e5
  // must not play g4 (which allows Qh4#).
  Result<games::Chess::State> fools = games::Chess::ParsePosition("startpos moves f2f3 e7e5");
  ASSERT_TRUE(fools.ok()) << fools.status().ToString();
  for (int i = 0; i < 30; ++i) {
    const games::Chess::Move move = *(*onestep)->Choose(*fools, rng);
    games::Chess::State next = *fools;
    games::Chess::Apply(next, move);
    EXPECT_TRUE(WinningMoves<games::Chess>(next).empty())
        << games::Chess::MoveText(*fools, move) << " allows a mate in one";
  }
}

TEST(ArenaTest, ChessMatchesPlayLegalGamesToTheirEnd) {
  Result<std::unique_ptr<Player<games::Chess>>> onestep = MakePlayer<games::Chess>("onestep", {});
  Result<std::unique_ptr<Player<games::Chess>>> random = MakePlayer<games::Chess>("random", {});
  ASSERT_TRUE(onestep.ok() && random.ok());
  Result<match::MatchReport> result = PlayMatch<games::Chess>(**onestep, **random,
                                                       {.games = 4, .opening_plies = 2, .seed = 9});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->tally.games(), 4);
  EXPECT_EQ(result->tally.wins + result->tally.draws + result->tally.losses, 4);
  // Onestep never loses to random by a mate in one; it may draw (random moves rarely mate).
  EXPECT_EQ(result->tally.losses, 0) << match::MatchReportToText(*result);
}

}  // namespace
}  // namespace az::arena
