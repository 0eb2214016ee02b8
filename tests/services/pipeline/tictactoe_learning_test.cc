// Tic-tac-toe learns perfect play in two minutes: scripts/run --game tictactoe with its defaults
// (but --minutes 2: six runs of 1.5 and 2 minutes all played perfectly, docs/learning.md), as a
// user starts it, then the newest model is scored against the game's exact solver (az-score)
// as a player: in every position it can face, playing either side from the start against every
// reply of the opponent's, its move keeps the game's value. No opponent can then make it lose a
// game it could draw, or draw one it could win.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>

#include "tests/services/scripted_run.h"

namespace az {
namespace {

using ipc::testing::ScriptedRun;
using ipc::testing::TempDir;

// The newest models/model-N.azw of a run.
std::string NewestModel(const std::string& run_dir) {
  std::string newest;
  long best = -1;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir + "/models")) {
    const std::string name = entry.path().filename().string();
    long version = -1;
    if (std::sscanf(name.c_str(), "model-%ld.azw", &version) == 1 && version > best) {
      best = version;
      newest = entry.path().string();
    }
  }
  return newest;
}

nlohmann::json Score(const std::string& model, const std::string& flags) {
  const std::string command = std::string(AZ_BINARY_DIR) +
                              "/bin/az-score --game tictactoe --json --model " + model + " " +
                              flags;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return nlohmann::json::object();
  std::string text;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) text += buffer;
  const int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return nlohmann::json::object();
  return nlohmann::json::parse(text, nullptr, false);
}

TEST(TicTacToeLearningTest, TwoMinutesOfScriptsRunGivePerfectPlay) {
  TempDir dir;
  ScriptedRun run(dir.path() + "/run",
                  {"--game", "tictactoe", "--minutes", "2", "--metrics-ports", "auto"});
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(run.WaitForOutput("run: done", std::chrono::minutes(7))) << run.Output();
  const std::string output = run.Output();
  // The run scored itself against the solver along the way and at the end.
  EXPECT_NE(output.find("solver     positions 4520 kept"), std::string::npos) << output;

  const std::string model = NewestModel(run.run_dir());
  ASSERT_FALSE(model.empty()) << output;
  const nlohmann::json player = Score(model, "--as-player --simulations 64");
  ASSERT_TRUE(player.contains("share")) << player.dump();
  EXPECT_EQ(player["kept"], player["positions"])
      << "not perfect as a player with 64 playouts: " << player.dump() << "\n" << output;
  // The raw policy alone, over every position where the game goes on: far above the first legal
  // move's 58.7% (a figure for the docs, not a demand of perfection).
  const nlohmann::json all = Score(model, "");
  ASSERT_TRUE(all.contains("share")) << all.dump();
  EXPECT_GT(all["share"].get<double>(), 0.85) << all.dump();
}

}  // namespace
}  // namespace az
