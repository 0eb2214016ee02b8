// az-search as a real child process: mates found with the uniform evaluator, the output format,
// terminal positions, bad input, and a real network file loaded with --model.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/chess/movegen.h"
#include "core/chess/position.h"
#include "core/chess/uci.h"
#include "core/nn/network.h"
#include "services/search/search_tool.h"

namespace az::search_tool {
namespace {

struct RunResult {
  int exit_code = -1;
  std::vector<std::string> lines;  // stdout and stderr together
  std::string text;
};

RunResult RunSearch(const std::string& arguments) {
  const std::string command = std::string(AZ_BINARY_DIR) + "/bin/az-search " + arguments + " 2>&1";
  RunResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) result.text += buffer;
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream stream(result.text);
  for (std::string line; std::getline(stream, line);) result.lines.push_back(line);
  return result;
}

// The "<uci> visits <N> ..." lines: move and visits.
std::vector<std::pair<std::string, long>> MoveLines(const RunResult& result) {
  std::vector<std::pair<std::string, long>> moves;
  for (const std::string& line : result.lines) {
    std::istringstream fields(line);
    std::string move, key;
    long visits = 0;
    if (fields >> move >> key >> visits && key == "visits") moves.emplace_back(move, visits);
  }
  return moves;
}

void ExpectMateFound(const std::string& fen, const std::string& mate) {
  const RunResult result = RunSearch("--fen '" + fen + "' --simulations 300");
  ASSERT_EQ(result.exit_code, 0) << result.text;
  ASSERT_FALSE(result.lines.empty());
  EXPECT_EQ(result.lines.back(), "bestmove " + mate) << result.text;
  const auto moves = MoveLines(result);
  long total = 0;
  for (const auto& [move, visits] : moves) total += visits;
  EXPECT_EQ(total, 300) << result.text;
  // Every legal move is listed, the most visited first.
  const chess::Position position = *chess::Position::FromFen(fen);
  EXPECT_EQ(moves.size(), static_cast<std::size_t>(chess::LegalMoves(position).size()));
  ASSERT_FALSE(moves.empty());
  EXPECT_EQ(moves.front().first, mate);
}

TEST(SearchCliTest, FindsWhitesBackRankMateWithTheUniformEvaluator) {
  ExpectMateFound("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "d1d8");
}

TEST(SearchCliTest, FindsBlacksMateWithTheUniformEvaluator) {
  ExpectMateFound("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", "d8h4");
}

TEST(SearchCliTest, GameOverPositionsReportTheReasonAndNoMove) {
  const RunResult stalemate = RunSearch("--fen '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1'");
  EXPECT_EQ(stalemate.exit_code, 0);
  EXPECT_NE(stalemate.text.find("info terminal stalemate"), std::string::npos) << stalemate.text;
  EXPECT_EQ(stalemate.lines.back(), "bestmove 0000");
  const RunResult mated = RunSearch("--fen '3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1'");
  EXPECT_NE(mated.text.find("info terminal checkmate"), std::string::npos) << mated.text;
}

TEST(SearchCliTest, BadInputExitsTwoWithTheReason) {
  const RunResult fen = RunSearch("--fen 'not a fen' --simulations 10");
  EXPECT_EQ(fen.exit_code, 2);
  EXPECT_NE(fen.text.find("az-search: INVALID_ARGUMENT"), std::string::npos) << fen.text;
  EXPECT_EQ(RunSearch("--simulations 0").exit_code, 2);
  EXPECT_EQ(RunSearch("--virtual-loss sideways").exit_code, 2);
  const RunResult model = RunSearch("--model /nonexistent/weights.bin --simulations 10");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_NE(model.text.find("az-search:"), std::string::npos) << model.text;
  EXPECT_EQ(RunSearch("--help").exit_code, 0);
}

class SearchWithModelTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("az_search_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes a freshly initialised network of `config` and returns its path.
  std::string SaveNetwork(const nn::NetConfig& config, const std::string& name) {
    nn::NetworkOptions options;
    options.net = config;
    options.runtime.device = nn::DeviceChoice::kCpu;
    Result<std::unique_ptr<nn::Network>> network = nn::Network::Create(options);
    EXPECT_TRUE(network.ok()) << network.status().ToString();
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE((*network)->SaveWeights(path, 42).ok());
    return path;
  }

  std::filesystem::path dir_;
};

nn::NetConfig TinyChessNet() {
  nn::NetConfig config = nn::NetConfig::ChessSmall();
  config.blocks = 1;
  config.filters = 8;
  config.value_hidden = 16;
  return config;
}

TEST_F(SearchWithModelTest, LoadsTheNetworkAndSearchesWithIt) {
  const std::string path = SaveNetwork(TinyChessNet(), "chess.weights");
  const RunResult result = RunSearch("--model " + path + " --simulations 64 --batch 8");
  ASSERT_EQ(result.exit_code, 0) << result.text;
  EXPECT_NE(result.text.find("info evaluator network"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("model_version 42"), std::string::npos) << result.text;
  // Priors come from the network: a softmax over the legal moves, summing to 1.
  double prior_sum = 0;
  for (const std::string& line : result.lines) {
    const auto at = line.find(" prior ");
    if (at != std::string::npos && line.find(" visits ") != std::string::npos) {
      prior_sum += std::stod(line.substr(at + 7));
    }
  }
  EXPECT_NEAR(prior_sum, 1.0, 0.01);
  const std::string best = result.lines.back().substr(std::string("bestmove ").size());
  EXPECT_TRUE(chess::ParseUciMove(chess::Position(), best).ok()) << best;
}

TEST_F(SearchWithModelTest, RefusesANetworkForAnotherGame) {
  const std::string path = SaveNetwork(nn::NetConfig::ConnectFour(), "c4.weights");
  std::ostringstream out;
  SearchToolOptions options;
  options.model_path = path;
  options.simulations = 10;
  const Status status = RunSearchTool(options, out);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("not a chess network"), std::string::npos) << status.message();
}

TEST(SearchToolTest, InProcessOutputEndsWithTheBestMove) {
  std::ostringstream out;
  SearchToolOptions options;
  options.fen = "6k1/8/8/8/8/1r6/r7/6K1 b - - 0 1";
  options.simulations = 200;
  ASSERT_TRUE(RunSearchTool(options, out).ok());
  const std::string text = out.str();
  EXPECT_NE(text.find("info evaluator uniform fpu_base 0.00"), std::string::npos) << text;
  EXPECT_NE(text.find("\nbestmove b3b1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace az::search_tool
