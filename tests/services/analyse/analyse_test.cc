// az-analyse: one answer per input line, for every registered game; the raw policy and MCTS; error
// lines that do not stop the rest; real network files; the binary's stdin/stdout and exit codes.

#include "services/analyse/analyser.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/games/registry.h"
#include "core/nn/game_network.h"
#include "core/nn/network.h"

namespace az::analyse {
namespace {

std::string Field(const std::string& answer, const std::string& key) {
  std::istringstream fields(answer);
  std::string word;
  while (fields >> word) {
    if (word == key && fields >> word) return word;
  }
  return "";
}

std::unique_ptr<Analyser> Make(const std::string& game, int simulations,
                               const std::string& model = "uniform") {
  Result<std::unique_ptr<Analyser>> analyser =
      CreateAnalyser({.game = game, .model = model, .simulations = simulations});
  EXPECT_TRUE(analyser.ok()) << analyser.status().ToString();
  return std::move(analyser).value();
}

// A fresh (untrained, seeded) network of the game's default shape, saved as a weights file.
std::string SaveFreshNetwork(const std::string& game, const std::string& path) {
  const games::GameInfo* info = *games::FindGame(game);
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kCpu;
  runtime.input_layout = nn::ToInputLayout(info->input.layout);
  auto network = nn::Network::Create({nn::DefaultNetConfig(*info), runtime});
  EXPECT_TRUE(network.ok());
  EXPECT_TRUE((*network)->SaveWeights(path, 3).ok());
  return path;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("az_analyse_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

TEST(AnalyserTest, SearchFindsTheWinInEveryGame) {
  // Connect Four: X has 4 5 6 on the bottom row; 3 or 7 wins.
  const std::string c4 = Make("connect4", 200)->AnalyseLine("445566");
  EXPECT_TRUE(c4.starts_with("bestmove 3 ") || c4.starts_with("bestmove 7 ")) << c4;
  EXPECT_GT(std::stod(Field(c4, "value")), 0.5) << c4;
  EXPECT_EQ(Field(c4, "visits"), "200");
  // Tic-tac-toe: X 1 2, O 4 5; X completes the top row at 3.
  EXPECT_TRUE(Make("tictactoe", 100)->AnalyseLine("1425").starts_with("bestmove 3 value"));
  // Chess: Ra8 mates.
  EXPECT_TRUE(Make("chess", 300)
                  ->AnalyseLine("6k1/5ppp/8/8/8/8/8/R6K w - - 0 1")
                  .starts_with("bestmove a1a8 value"));
}

TEST(AnalyserTest, PositionFormsOfEachGame) {
  auto chess = Make("chess", 0);
  EXPECT_TRUE(chess->AnalyseLine("startpos").starts_with("bestmove "));
  EXPECT_TRUE(chess->AnalyseLine("startpos moves e2e4 e7e5").starts_with("bestmove "));
  EXPECT_TRUE(chess->AnalyseLine("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
                  .starts_with("bestmove "));
  EXPECT_TRUE(Make("connect4", 0)->AnalyseLine("start").starts_with("bestmove 1 value 0.0000"));
  EXPECT_TRUE(Make("tictactoe", 0)->AnalyseLine("start").starts_with("bestmove 1 value 0.0000"));
}

TEST(AnalyserTest, BadLinesGetAnErrorAndTheRestGoOn) {
  auto analyser = Make("connect4", 16);
  std::istringstream in("44\n\n48\nx\n4152637\n11111111\n4\n");
  std::ostringstream out;
  EXPECT_EQ(AnalyseStream(*analyser, in, out), 5);
  std::vector<std::string> lines;
  std::istringstream answers(out.str());
  for (std::string line; std::getline(answers, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_TRUE(lines[0].starts_with("bestmove "));
  EXPECT_TRUE(lines[1].starts_with("error empty line"));
  EXPECT_TRUE(lines[2].starts_with("error ")) << lines[2];  // column 8
  EXPECT_TRUE(lines[3].starts_with("error ")) << lines[3];  // not a digit
  EXPECT_EQ(lines[4], "error the game is over in this position");
  EXPECT_TRUE(lines[5].starts_with("error ")) << lines[5];  // column 1 is full
  EXPECT_TRUE(lines[6].starts_with("bestmove "));
  // Chess: an illegal move in the list, a broken FEN.
  auto chess = Make("chess", 0);
  EXPECT_TRUE(chess->AnalyseLine("startpos moves e2e5").starts_with("error "));
  EXPECT_TRUE(chess->AnalyseLine("8/8/8 w - - 0 1").starts_with("error "));
  EXPECT_EQ(chess->AnalyseLine("7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"),
            "error the game is over in this position");  // black is mated
}

TEST(AnalyserTest, ANetworkFileGivesItsRawPolicyAndSearch) {
  const std::string path = SaveFreshNetwork("tictactoe", TempPath("ttt.azw"));
  auto raw = Make("tictactoe", 0, path);
  const std::string answer = raw->AnalyseLine("5");
  ASSERT_TRUE(answer.starts_with("bestmove ")) << answer;
  EXPECT_NE(answer.substr(9, 1), "5");  // the centre is taken
  const double value = std::stod(Field(answer, "value"));
  EXPECT_TRUE(value >= -1 && value <= 1);
  EXPECT_FALSE(Field(answer, "prior").empty());
  // With search, a network still finds the immediate win.
  EXPECT_TRUE(Make("tictactoe", 200, path)->AnalyseLine("1425").starts_with("bestmove 3 value"));
  // Another game's network is refused, naming the game.
  Result<std::unique_ptr<Analyser>> wrong =
      CreateAnalyser({.game = "connect4", .model = path, .simulations = 0});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(wrong.status().message().find("connect4"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(AnalyserTest, RefusesUnknownGamesAndMissingModels) {
  EXPECT_EQ(CreateAnalyser({.game = "go"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateAnalyser({.game = "chess", .model = "/nonexistent.azw"}).status().code(),
            StatusCode::kNotFound);
}

struct RunResult {
  int exit_code = -1;
  std::vector<std::string> lines;
};

// Runs the binary with `input` on stdin; stdout's lines.
RunResult RunBinary(const std::string& arguments, const std::string& input) {
  const std::string in_path = TempPath("stdin.txt");
  std::ofstream(in_path) << input;
  const std::string command = std::string(AZ_BINARY_DIR) + "/bin/az-analyse " + arguments + " <" +
                              in_path + " 2>/dev/null";
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::string text;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) text += buffer;
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) result.lines.push_back(line);
  std::filesystem::remove(in_path);
  return result;
}

TEST(AnalyseBinaryTest, OneLinePerInputLineAndExitCodes) {
  const RunResult ok = RunBinary("--game tictactoe --model uniform --simulations 50", "1425\nstart\n");
  EXPECT_EQ(ok.exit_code, 0);
  ASSERT_EQ(ok.lines.size(), 2u);
  EXPECT_TRUE(ok.lines[0].starts_with("bestmove 3 value"));

  const RunResult some_bad = RunBinary("--game connect4 --simulations 0", "4\n9\n44\n");
  EXPECT_EQ(some_bad.exit_code, 1);
  ASSERT_EQ(some_bad.lines.size(), 3u);
  EXPECT_TRUE(some_bad.lines[1].starts_with("error "));
  EXPECT_TRUE(some_bad.lines[2].starts_with("bestmove "));

  const RunResult chess =
      RunBinary("--game chess --simulations 300 --threads 1", "6k1/5ppp/8/8/8/8/8/R6K w - - 0 1\n");
  EXPECT_EQ(chess.exit_code, 0);
  ASSERT_EQ(chess.lines.size(), 1u);
  EXPECT_TRUE(chess.lines[0].starts_with("bestmove a1a8 value"));

  EXPECT_EQ(RunBinary("--game go", "").exit_code, 2);
  EXPECT_EQ(RunBinary("--game chess --model /nonexistent.azw", "startpos\n").exit_code, 2);
}

}  // namespace
}  // namespace az::analyse
