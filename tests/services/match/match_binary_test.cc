// The az-match binary as a real child process, with its stdout and stderr captured apart.
// Protects: a UCI match between az-uci (uniform model) and Debian's stockfish (an option with a
// space in its name, --each limits, an opening book) exits 0 with exactly one JSON line on stdout
// whose counts agree with the PGN file, every PGN game replaying legally by core/chess from its
// SAN; in-process matches of other games (onestep beats random at connect4; an SPRT at
// tic-tac-toe); called by its other name, az-arena, it plays connect4 without progress lines;
// bad input exits 2 with a message on stderr and nothing on stdout; an engine that sends illegal
// moves loses every game, the termination is counted, and it is restarted so that the match goes
// on.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/position.h"
#include "services/match/pgn.h"
#include "tests/services/match/fake_engine.h"

extern char** environ;

namespace az::match {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

const std::string kAzMatch = std::string(AZ_BINARY_DIR) + "/bin/az-match";
const std::string kAzUci = std::string(AZ_BINARY_DIR) + "/bin/az-uci";
const std::string kBook = std::string(AZ_SOURCE_DIR) + "/deploy/openings/chess.txt";
constexpr const char* kStockfish = "/usr/games/stockfish";

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class MatchBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::temp_directory_path() /
           ("az_match_binary_test_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs az-match with `args` (no shell), stdin from /dev/null, stdout and stderr to files; kills
  // it after `limit` (a hung match fails the test rather than the ctest timeout).
  RunResult Run(const std::vector<std::string>& args, const std::string& program = kAzMatch,
                seconds limit = seconds(240)) {
    std::vector<std::string> argv = {program};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> pointers;
    for (std::string& arg : argv) pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    const std::string out = (dir_ / "stdout").string();
    const std::string err = (dir_ / "stderr").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    const int spawned =
        ::posix_spawn(&pid, pointers[0], &actions, nullptr, pointers.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    RunResult result;
    if (spawned != 0) {
      ADD_FAILURE() << "cannot start " << program;
      return result;
    }
    const Clock::time_point deadline = Clock::now() + limit;
    int status = 0;
    for (;;) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (Clock::now() >= deadline) {
        ADD_FAILURE() << "az-match ran longer than " << limit.count() << " s; killed";
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = ReadFile(out);
    result.err = ReadFile(err);
    return result;
  }

  // stdout as one JSON object on exactly one line.
  static nlohmann::json OneJsonLine(const RunResult& run) {
    const std::vector<std::string> lines = Lines(run.out);
    EXPECT_EQ(lines.size(), 1u) << run.out;
    EXPECT_TRUE(run.out.ends_with("\n"));
    if (lines.empty()) return {};
    const nlohmann::json json =
        nlohmann::json::parse(lines[0], nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(json.is_object()) << lines[0];
    return json;
  }

  std::filesystem::path dir_;
};

// One game of a PGN file: its tags and the tokens of its movetext (comments removed).
struct PgnRecord {
  std::map<std::string, std::string> tags;
  std::vector<std::string> tokens;
};

std::vector<PgnRecord> ParsePgn(const std::string& text) {
  std::vector<PgnRecord> games;
  bool in_movetext = false;
  std::string movetext;
  const auto finish = [&] {
    std::string without_comments;
    int depth = 0;
    for (const char c : movetext) {
      if (c == '{') ++depth;
      if (depth == 0) without_comments += c;
      if (c == '}') --depth;
    }
    std::istringstream words(without_comments);
    for (std::string word; words >> word;) games.back().tokens.push_back(word);
    movetext.clear();
    in_movetext = false;
  };
  for (const std::string& line : Lines(text)) {
    if (line.starts_with("[")) {
      if (in_movetext) finish();
      if (games.empty() || !games.back().tokens.empty() || in_movetext) games.emplace_back();
      const std::size_t space = line.find(' ');
      const std::size_t open = line.find('"');
      const std::size_t close = line.rfind('"');
      EXPECT_TRUE(space != std::string::npos && open != close) << line;
      if (space == std::string::npos || open == close) continue;
      games.back().tags[line.substr(1, space - 1)] = line.substr(open + 1, close - open - 1);
    } else if (!line.empty()) {
      in_movetext = true;
      movetext += line + "\n";
    } else if (in_movetext) {
      finish();
    }
  }
  if (in_movetext) finish();
  return games;
}

// Replays a game's SAN by core/chess: each token must be the SAN of exactly one legal move.
// Returns the final game (the test fails at the first token that is not).
chess::Game ReplayPgn(const PgnRecord& record) {
  chess::Game game;
  if (record.tags.contains("FEN")) {
    Result<chess::Game> from = chess::Game::FromFen(record.tags.at("FEN"));
    EXPECT_TRUE(from.ok()) << record.tags.at("FEN");
    if (from.ok()) game = *from;
  }
  int plies = 0;
  for (std::size_t i = 0; i < record.tokens.size(); ++i) {
    const std::string& token = record.tokens[i];
    if (i + 1 == record.tokens.size()) {
      EXPECT_EQ(token, record.tags.at("Result")) << "the movetext ends with the result";
      break;
    }
    if (std::isdigit(static_cast<unsigned char>(token[0]))) continue;  // "12." or "12..."
    int found = 0;
    chess::Move played{};
    for (const chess::Move move : game.LegalMoves()) {
      if (MoveToSan(game.position(), move) == token) {
        ++found;
        played = move;
      }
    }
    EXPECT_EQ(found, 1) << "'" << token << "' at ply " << plies << " of round "
                        << record.tags.at("Round");
    if (found != 1) break;
    game.Play(played);
    ++plies;
  }
  EXPECT_EQ(std::to_string(plies), record.tags.at("PlyCount"));
  return game;
}

TEST_F(MatchBinaryTest, AzUciAgainstStockfishGivesOneJsonLineAndAPgnThatAgrees) {
  const std::string pgn = (dir_ / "games.pgn").string();
  const RunResult run =
      Run({"--engine", "name=a cmd='" + kAzUci + " --model uniform'", "--engine",
           std::string("name=sf cmd=") + kStockfish + " 'option.Skill Level=0'", "--each",
           "nodes=200", "--games", "2", "--openings", kBook, "--pgn", pgn, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json json = OneJsonLine(run);
  EXPECT_EQ(json.at("a"), "a");
  EXPECT_EQ(json.at("b"), "sf");
  EXPECT_EQ(json.at("games"), 2);
  EXPECT_EQ(json.at("games_planned"), 2);
  // Progress went to stderr, one line a game.
  EXPECT_THAT(run.err, HasSubstr("game 1/2"));
  EXPECT_THAT(run.err, HasSubstr("game 2/2"));

  const std::vector<PgnRecord> games = ParsePgn(ReadFile(pgn));
  ASSERT_EQ(games.size(), 2u);
  int a_wins = 0, draws = 0, b_wins = 0;
  std::map<std::string, int> terminations;
  for (const PgnRecord& game : games) {
    for (const char* tag : {"Event", "Site", "Date", "Round", "White", "Black", "Result",
                            "Termination", "PlyCount"}) {
      EXPECT_TRUE(game.tags.contains(tag)) << tag;
    }
    const std::string& result = game.tags.at("Result");
    const std::string& white = game.tags.at("White");
    ASSERT_TRUE(result == "1-0" || result == "0-1" || result == "1/2-1/2") << result;
    if (result == "1/2-1/2") {
      ++draws;
    } else {
      ((result == "1-0") == (white == "a") ? a_wins : b_wins) += 1;
    }
    ++terminations[game.tags.at("Termination")];
    // The book's opening is part of the game: the PGN starts from the standard position.
    EXPECT_FALSE(game.tags.contains("FEN"));
    const chess::Game final_game = ReplayPgn(game);
    const chess::GameOutcome outcome = final_game.Outcome();
    if (!game.tags.at("Termination").starts_with("adjudication")) {
      ASSERT_TRUE(outcome.is_terminal()) << game.tags.at("Termination");
      EXPECT_EQ(game.tags.at("Termination"), chess::ToString(outcome.reason));
    }
  }
  // Colours alternate: A is White in round 1, Black in round 2.
  EXPECT_EQ(games[0].tags.at("Round"), "1");
  EXPECT_EQ(games[0].tags.at("White"), "a");
  EXPECT_EQ(games[0].tags.at("Black"), "sf");
  EXPECT_EQ(games[1].tags.at("White"), "sf");
  EXPECT_EQ(games[1].tags.at("Black"), "a");
  EXPECT_EQ(json.at("a_wins"), a_wins);
  EXPECT_EQ(json.at("draws"), draws);
  EXPECT_EQ(json.at("b_wins"), b_wins);
  EXPECT_EQ(json.at("terminations"), nlohmann::json(terminations));
}

TEST_F(MatchBinaryTest, OnestepBeatsRandomAtConnectFourInProcess) {
  const RunResult run =
      Run({"--game", "connect4", "--a", "onestep", "--b", "random", "--games", "40", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json json = OneJsonLine(run);
  EXPECT_EQ(json.at("a"), "onestep");
  EXPECT_EQ(json.at("b"), "random");
  EXPECT_EQ(json.at("games"), 40);
  EXPECT_GT(json.at("a_score").get<double>(), 0.8) << run.out;
  EXPECT_GT(json.at("elo").get<double>(), 0);
  EXPECT_FALSE(json.contains("sprt"));
}

TEST_F(MatchBinaryTest, AnSprtRunsAtTicTacToe) {
  const RunResult run = Run({"--game", "tictactoe", "--a", "random", "--b", "random", "--games",
                             "10", "--sprt", "elo0=0,elo1=400", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json json = OneJsonLine(run);
  EXPECT_LE(json.at("games").get<int>(), 10);
  EXPECT_GE(json.at("games").get<int>(), 1);
  const nlohmann::json& sprt = json.at("sprt");
  EXPECT_EQ(sprt.at("elo0"), 0.0);
  EXPECT_EQ(sprt.at("elo1"), 400.0);
  const std::string decision = sprt.at("decision");
  EXPECT_TRUE(decision == "continue" || decision == "H0 accepted" || decision == "H1 accepted")
      << decision;
  // The text report names the SPRT too.
  const RunResult text = Run({"--game", "tictactoe", "--a", "random", "--b", "random", "--games",
                              "10", "--sprt", "elo0=0,elo1=400"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("SPRT [0.0, 400.0]"));
}

TEST_F(MatchBinaryTest, CalledAsAzArenaItPlaysConnectFourQuietly) {
  // az-arena is a link to az-match: connect4 by default, no per-game lines, its flags accepted.
  const std::string arena = std::string(AZ_BINARY_DIR) + "/bin/az-arena";
  const RunResult run = Run({"--a", "onestep", "--b", "random", "--games", "4", "--json"}, arena);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json json = OneJsonLine(run);
  EXPECT_EQ(json.at("a"), "onestep");
  EXPECT_EQ(json.at("games"), 4);
  EXPECT_THAT(run.err, Not(HasSubstr("game 1/4")));
  // The same match as az-match --game connect4 (same seed, same openings, same players).
  const RunResult same = Run({"--game", "connect4", "--a", "onestep", "--b", "random", "--games",
                              "4", "--json", "--quiet"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const nlohmann::json other = OneJsonLine(same);
  for (const char* field : {"a_wins", "draws", "b_wins"}) {
    EXPECT_EQ(json.at(field), other.at(field)) << field;
  }
  EXPECT_THAT(same.err, Not(HasSubstr("game 1/4")));
}

TEST_F(MatchBinaryTest, BadInputExitsTwoWithAMessageOnStderr) {
  const std::string az = "cmd='" + kAzUci + " --model uniform'";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--engine", "name=a nodes=1 " + az}, "give --engine twice"},
      {{"--engine", "name=a " + az, "--engine", "name=b nodes=1 " + az}, "has no limit"},
      {{"--engine", "name=a nodes=1 cmd=/nonexistent/engine", "--engine", "name=b nodes=1 " + az},
       "/nonexistent/engine"},
      {{"--engine", "name=a nodes=1 speed=3 " + az, "--engine", "name=b nodes=1 " + az},
       "unknown key 'speed'"},
      {{"--engine", "nodes=1 " + az, "--engine", "nodes=1 " + az}, "tell them apart"},
      {{"--engine", "name=a nodes=1 " + az, "--engine", "name=b nodes=1 " + az, "--openings",
        "/nonexistent/book.txt"},
       "--openings"},
      {{"--game", "tictactoe", "--a", "random", "--sprt", "elo0=5,elo1=1"}, "--sprt"},
      {{"--game", "tictactoe", "--a", "/nonexistent/model.azw"}, "player A"},
      {{"--game", "tictactoe"}, "--a"},
  };
  for (const Case& c : cases) {
    std::string shown;
    for (const std::string& arg : c.args) shown += " " + arg;
    const RunResult run = Run(c.args, kAzMatch, seconds(120));
    EXPECT_EQ(run.exit_code, 2) << shown << "\n" << run.err;
    EXPECT_THAT(run.err, HasSubstr("az-match")) << shown;
    EXPECT_THAT(run.err, HasSubstr(c.message)) << shown;
    EXPECT_THAT(run.out, IsEmpty()) << shown;
  }
}

TEST_F(MatchBinaryTest, AnEngineSendingIllegalMovesLosesEveryGameAndIsRestarted) {
  const std::string fake = testing::WriteFakeEngine(dir_);
  const std::string log = (dir_ / "fake.log").string();
  const RunResult run = Run({"--engine", "name=bad cmd='" + fake + " illegal " + log + "'",
                             "--engine", "name=az cmd='" + kAzUci + " --model uniform'", "--each",
                             "nodes=16", "--games", "4", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json json = OneJsonLine(run);
  EXPECT_EQ(json.at("games"), 4);
  EXPECT_EQ(json.at("a_wins"), 0);
  EXPECT_EQ(json.at("draws"), 0);
  EXPECT_EQ(json.at("b_wins"), 4);
  EXPECT_EQ(json.at("terminations"), (nlohmann::json{{"illegal move e2e5", 4}}));
  EXPECT_THAT(run.err, HasSubstr("restarting it"));
  // Started once, then afresh after each lost game (at least before each of games 2 to 4), a new
  // process every time.
  std::set<std::string> pids;
  int starts = 0;
  for (const std::string& line : testing::ReadLog(log)) {
    if (!line.starts_with("start ")) continue;
    ++starts;
    pids.insert(line.substr(6));
  }
  EXPECT_GE(starts, 4);
  EXPECT_EQ(pids.size(), static_cast<std::size_t>(starts));
}

}  // namespace
}  // namespace az::match
