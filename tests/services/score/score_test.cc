// az-score: every reachable tic-tac-toe position is scored, random Connect Four positions by band,
// search scores above the first legal move, networks of the game load, the rest is refused.

#include "services/score/solver_score.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/games/registry.h"
#include "core/nn/game_network.h"
#include "core/nn/network.h"

namespace az::score {
namespace {

TEST(ScoreTest, TicTacToeScoresEveryReachablePosition) {
  Result<ScoreReport> first = ScoreModel({.game = "tictactoe"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // 5,478 reachable positions, 958 of them over: 4,520 with a move to play.
  EXPECT_EQ(first->positions, 4520);
  int banded = 0;
  for (const BandScore& band : first->bands) banded += band.positions;
  EXPECT_EQ(banded, first->positions);
  EXPECT_GT(first->kept, first->trivial);
  EXPECT_LT(first->kept, first->positions);  // the first legal move is often a mistake
  // A uniform search with enough playouts finds the wins and blocks the threats.
  Result<ScoreReport> searched = ScoreModel({.game = "tictactoe", .simulations = 400});
  ASSERT_TRUE(searched.ok());
  EXPECT_GT(searched->share(), first->share() + 0.1);
}

TEST(ScoreTest, ConnectFourScoresRandomPositionsInTheirPlies) {
  Result<ScoreReport> report =
      ScoreModel({.game = "connect4", .positions = 40, .min_ply = 24, .max_ply = 30});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->positions, 40);
  for (const BandScore& band : report->bands) {
    if (band.positions > 0) EXPECT_GE(band.max_ply, 24);
  }
  // The same seed gives the same set, so runs compare.
  Result<ScoreReport> again =
      ScoreModel({.game = "connect4", .positions = 40, .min_ply = 24, .max_ply = 30});
  EXPECT_EQ(again->kept, report->kept);
  EXPECT_EQ(again->trivial, report->trivial);
}

TEST(ScoreTest, LoadsANetworkOfTheGameAndRefusesTheRest) {
  const games::GameInfo* info = *games::FindGame("tictactoe");
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kCpu;
  runtime.input_layout = nn::ToInputLayout(info->input.layout);
  auto network = nn::Network::Create({nn::DefaultNetConfig(*info), runtime});
  ASSERT_TRUE(network.ok());
  const std::string path =
      (std::filesystem::temp_directory_path() / ("az_score_" + std::to_string(getpid()))).string();
  ASSERT_TRUE((*network)->SaveWeights(path, 1).ok());
  Result<ScoreReport> raw = ScoreModel({.game = "tictactoe", .model = path});
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->positions, 4520);
  EXPECT_EQ(ScoreModel({.game = "connect4", .model = path}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ScoreModel({.game = "chess"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ScoreModel({.game = "tictactoe", .model = "/nonexistent"}).status().code(),
            StatusCode::kNotFound);

  // The binary: JSON with the same figures.
  const std::string command = std::string(AZ_BINARY_DIR) +
                              "/bin/az-score --game tictactoe --json --model " + path;
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) text += buffer;
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json["positions"], 4520);
  EXPECT_EQ(json["kept"], raw->kept);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace az::score
