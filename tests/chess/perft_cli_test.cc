// Runs the real az-perft binary as a child process and checks its output and exit codes.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct ToolRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Arguments are passed through the shell in single quotes (none of ours contain one).
ToolRun RunPerft(const std::vector<std::string>& args) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("az_perft_cli_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string command = std::string("'") + AZ_BINARY_DIR + "/bin/az-perft'";
  for (const std::string& a : args) command += " '" + a + "'";
  command += " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int status = std::system(command.c_str());
  ToolRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadFile(dir / "out");
  run.err = ReadFile(dir / "err");
  std::filesystem::remove_all(dir);
  return run;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(PerftCliTest, LastLineHasNodesAndRate) {
  const ToolRun run = RunPerft({"--depth", "4"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 1u);
  std::istringstream last(lines.back());
  std::string nodes_word, nps_word;
  std::uint64_t nodes = 0, nps = 0;
  last >> nodes_word >> nodes >> nps_word >> nps;
  EXPECT_EQ(nodes_word, "nodes");
  EXPECT_EQ(nodes, 197281u);
  EXPECT_EQ(nps_word, "nps");
  EXPECT_TRUE(last.eof() || last.peek() == EOF);
}

TEST(PerftCliTest, DivideListsEachRootMoveThenTheTotal) {
  const ToolRun run =
      RunPerft({"--fen", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                "--depth", "2", "--divide"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = Lines(run.out);
  ASSERT_EQ(lines.size(), 49u);  // 48 root moves and the total
  std::uint64_t sum = 0;
  bool saw_castling = false;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::size_t colon = lines[i].find(": ");
    ASSERT_NE(colon, std::string::npos) << lines[i];
    const std::string move = lines[i].substr(0, colon);
    EXPECT_TRUE(move.size() == 4 || move.size() == 5) << move;
    saw_castling |= move == "e1g1";
    sum += std::stoull(lines[i].substr(colon + 2));
  }
  EXPECT_TRUE(saw_castling);
  EXPECT_EQ(sum, 2039u);
  EXPECT_EQ(lines.back().rfind("nodes 2039 nps ", 0), 0u) << lines.back();
}

TEST(PerftCliTest, BadFenExitsTwoWithTheReasonOnStderr) {
  const ToolRun run = RunPerft(
      {"--fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "--depth", "3"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("bad piece letter 'X'"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

TEST(PerftCliTest, BadDepthExitsTwoWithTheReasonOnStderr) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--depth", "0"},
                                               {"--depth", "-3"},
                                               {"--depth", "x"},
                                               {"--depth", "99"},
                                               {}}) {
    const ToolRun run = RunPerft(args);
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find("--depth"), std::string::npos) << run.err;
  }
}

}  // namespace
