// az-match's engine driver and match loop, in process, against real engines as child processes.
// Protects: the --engine words (quotes, options with spaces, clocks, errors that name the word,
// --each words under the engine's own), the go and position commands and the limits' text, how
// info lines are read; ChildProcess (lines both ways, deadlines, a child that exits, writing to a
// dead child without SIGPIPE, a missing program, reaping); the UCI handshake (name, options, a
// program that never says uciok); PlayChessGame refereed by core/chess between real engines
// (az-uci with the uniform model, Debian's stockfish): legal records, mates, the length limit,
// resign and draw adjudication, clocks without forfeits; and against a deliberately misbehaving
// fake engine (an illegal move, an exit mid-game, no answer, an answer only after stop, too slow,
// a bare bestmove), which loses, is marked for a restart, and lets the honest side win; RunMatch's
// colours, counts, SPRT stop and its JSON fields.

#include <errno.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/position.h"
#include "core/chess/uci.h"
#include "services/match/chess_game.h"
#include "services/match/child_process.h"
#include "services/match/engine_spec.h"
#include "services/match/match_loop.h"
#include "services/match/uci_client.h"
#include "tests/services/match/fake_engine.h"

namespace az::match {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

constexpr const char* kStockfish = "/usr/games/stockfish";

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

// ---------------------------------------------------------------------------------------------
// The --engine words.

TEST(SplitWordsTest, QuotesKeepSpacesTogetherAndAreRemoved) {
  Result<std::vector<std::string>> words =
      SplitWords(R"(name=az  cmd='az-uci --model m.azw'	"option.Skill Level=0")");
  ASSERT_TRUE(words.ok()) << words.status().ToString();
  EXPECT_THAT(*words, ElementsAre("name=az", "cmd=az-uci --model m.azw", "option.Skill Level=0"));
  // A quote of the other kind inside quotes is an ordinary character.
  EXPECT_THAT(*SplitWords(R"(cmd='run "my engine"')"), ElementsAre(R"(cmd=run "my engine")"));
  EXPECT_THAT(*SplitWords("   "), IsEmpty());
}

TEST(SplitWordsTest, AnUnclosedQuoteIsRefused) {
  Result<std::vector<std::string>> words = SplitWords("cmd='az-uci --model");
  ASSERT_FALSE(words.ok());
  EXPECT_EQ(words.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(words.status().message(), HasSubstr("unclosed quote"));
}

TEST(EngineSpecTest, EveryKeyIsParsed) {
  EngineSpec spec;
  const Status status = ApplyEngineWords(
      R"(name=az cmd='/opt/az-uci --model "my model.azw"' dir=/tmp 'option.Skill Level=0' )"
      R"(option.Hash=16 option.Name=a=b nodes=800 movetime=100 depth=8 tc=10+0.1)",
      spec);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(spec.name, "az");
  EXPECT_THAT(spec.argv, ElementsAre("/opt/az-uci", "--model", "my model.azw"));
  EXPECT_EQ(spec.working_dir, "/tmp");
  using Option = std::pair<std::string, std::string>;
  EXPECT_THAT(spec.options,
              ElementsAre(Option{"Skill Level", "0"}, Option{"Hash", "16"}, Option{"Name", "a=b"}));
  EXPECT_EQ(spec.nodes, 800);
  EXPECT_EQ(spec.movetime_ms, 100);
  EXPECT_EQ(spec.depth, 8);
  EXPECT_TRUE(spec.has_clock());
  EXPECT_EQ(spec.clock_base_ms, 10000);
  EXPECT_EQ(spec.clock_increment_ms, 100);
  EXPECT_TRUE(CheckEngineSpec(spec).ok());
}

TEST(EngineSpecTest, ClocksAreSecondsWithAnOptionalIncrement) {
  EngineSpec spec;
  ASSERT_TRUE(ApplyEngineWords("tc=60", spec).ok());
  EXPECT_EQ(spec.clock_base_ms, 60000);
  EXPECT_EQ(spec.clock_increment_ms, 0);
  ASSERT_TRUE(ApplyEngineWords("tc=0.5+0.05", spec).ok());
  EXPECT_EQ(spec.clock_base_ms, 500);
  EXPECT_EQ(spec.clock_increment_ms, 50);
  ASSERT_TRUE(ApplyEngineWords("tc=2+0", spec).ok());
  EXPECT_EQ(spec.clock_base_ms, 2000);
  EXPECT_EQ(spec.clock_increment_ms, 0);
}

TEST(EngineSpecTest, BadWordsAreRefusedNamingTheWord) {
  // Each text, and what the message must name.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nodes", "'nodes'"},
      {"=5", "'=5'"},
      {"nodes=0", "nodes=0"},
      {"nodes=-3", "nodes=-3"},
      {"nodes=12x", "nodes=12x"},
      {"nodes=", "nodes="},
      {"movetime=1.5", "movetime=1.5"},
      {"movetime=0", "movetime=0"},
      {"depth=0", "depth=0"},
      {"depth=1001", "depth=1001"},
      {"tc=0", "tc=0"},
      {"tc=abc", "tc=abc"},
      {"tc=10+", "tc=10+"},
      {"tc=+1", "tc=+1"},
      {"tc=10+x", "tc=10+x"},
      {"tc=-1", "tc=-1"},
      {"tc=inf", "tc=inf"},
      {"tc=0.0001", "tc=0.0001"},
      {"cmd=", "cmd="},
      {"cmd=''", "cmd="},
      {"speed=3", "speed"},
      {"option.=1", "option."},
      {"cmd='az-uci", "unclosed quote"},
  };
  for (const auto& [text, named] : cases) {
    EngineSpec spec;
    const Status status = ApplyEngineWords(text, spec);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(status.message(), HasSubstr(named)) << text;
  }
  // An unknown key's message lists the keys there are.
  EngineSpec spec;
  EXPECT_THAT(ApplyEngineWords("speed=3", spec).message(), HasSubstr("nodes"));
}

TEST(EngineSpecTest, AnEnginesOwnWordsWinOverEach) {
  EngineSpec spec;
  ASSERT_TRUE(
      ApplyEngineWords("name=each nodes=100 option.Hash=16 'option.Skill Level=5'", spec).ok());
  ASSERT_TRUE(ApplyEngineWords("name=own cmd=stockfish nodes=200 option.Hash=64", spec).ok());
  EXPECT_EQ(spec.name, "own");
  EXPECT_EQ(spec.nodes, 200);
  EXPECT_THAT(spec.argv, ElementsAre("stockfish"));
  using Option = std::pair<std::string, std::string>;
  // One Hash, the engine's; the --each option it did not name is kept.
  EXPECT_THAT(spec.options, ElementsAre(Option{"Skill Level", "5"}, Option{"Hash", "64"}));
}

TEST(EngineSpecTest, AnEngineNeedsACommandAndALimit) {
  EngineSpec spec;
  Status status = CheckEngineSpec(spec);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cmd="));
  ASSERT_TRUE(ApplyEngineWords("name=sf cmd=stockfish", spec).ok());
  status = CheckEngineSpec(spec);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("engine sf has no limit"));
  for (const char* limit : {"nodes=1", "movetime=10", "depth=1", "tc=1"}) {
    EngineSpec limited = spec;
    ASSERT_TRUE(ApplyEngineWords(limit, limited).ok());
    EXPECT_TRUE(CheckEngineSpec(limited).ok()) << limit;
  }
}

TEST(GoCommandTest, SaysTheSpecsLimitsAndTheClocks) {
  EngineSpec nodes{.nodes = 800};
  EXPECT_EQ(GoCommand(nodes, 0, 0, 0, 0), "go nodes 800");
  EXPECT_EQ(GoCommand(EngineSpec{.movetime_ms = 100}, 0, 0, 0, 0), "go movetime 100");
  EXPECT_EQ(GoCommand(EngineSpec{.depth = 8}, 0, 0, 0, 0), "go depth 8");
  const EngineSpec clock{.clock_base_ms = 10000, .clock_increment_ms = 100};
  EXPECT_EQ(GoCommand(clock, 9500, 10000, 100, 100), "go wtime 9500 btime 10000 winc 100 binc 100");
  // Each side's own increment; none at all: no winc/binc.
  EXPECT_EQ(GoCommand(clock, 9500, 10000, 100, 0), "go wtime 9500 btime 10000 winc 100 binc 0");
  EXPECT_EQ(GoCommand(clock, 9500, 10000, 0, 0), "go wtime 9500 btime 10000");
  // An overdrawn clock is sent as 1 ms, never as 0 or negative.
  EXPECT_EQ(GoCommand(clock, -20, 0, 0, 0), "go wtime 1 btime 1");
  const EngineSpec both{.nodes = 16, .clock_base_ms = 2000};
  EXPECT_EQ(GoCommand(both, 2000, 1500, 0, 0), "go wtime 2000 btime 1500 nodes 16");
}

TEST(DescribeLimitsTest, NamesEachLimit) {
  EXPECT_EQ(DescribeLimits(EngineSpec{.clock_base_ms = 10000, .clock_increment_ms = 100}),
            "10+0.1");
  EXPECT_EQ(DescribeLimits(EngineSpec{.nodes = 800}), "nodes 800");
  EXPECT_EQ(DescribeLimits(EngineSpec{.movetime_ms = 100}), "movetime 100 ms");
  EXPECT_EQ(DescribeLimits(EngineSpec{.depth = 8}), "depth 8");
  EXPECT_EQ(
      DescribeLimits(EngineSpec{.nodes = 16, .clock_base_ms = 2000, .clock_increment_ms = 50}),
      "2+0.05, nodes 16");
}

// ---------------------------------------------------------------------------------------------
// Info lines.

TEST(ReadInfoLineTest, ReadsCentipawnsDepthAndNodes) {
  MoveAnswer answer;
  ReadInfoLine(
      "info depth 12 seldepth 18 multipv 1 score cp -35 nodes 123456 nps 1000 time 5 "
      "hashfull 3 pv e2e4 e7e5",
      answer);
  ASSERT_TRUE(answer.score.has_value());
  EXPECT_EQ(answer.score->centipawns, -35);
  EXPECT_FALSE(answer.score->mate);
  EXPECT_EQ(answer.depth, 12);
  EXPECT_EQ(answer.nodes, 123456);
  // A later line replaces what it says and keeps the rest; a bound after the score is skipped.
  ReadInfoLine("info depth 13 score cp 40 lowerbound time 9", answer);
  EXPECT_EQ(answer.score->centipawns, 40);
  EXPECT_EQ(answer.depth, 13);
  EXPECT_EQ(answer.nodes, 123456);
}

TEST(ReadInfoLineTest, MatesRankAboveEveryCentipawnScoreShorterFirst) {
  MoveAnswer one, three, mated;
  ReadInfoLine("info depth 5 score mate 1 pv d1d8", one);
  ReadInfoLine("info depth 9 score mate 3 pv d1d8", three);
  ReadInfoLine("info depth 9 score mate -2 pv e8e7", mated);
  ASSERT_TRUE(one.score && three.score && mated.score);
  EXPECT_TRUE(one.score->mate);
  EXPECT_EQ(one.score->mate_moves, 1);
  EXPECT_EQ(three.score->mate_moves, 3);
  EXPECT_EQ(mated.score->mate_moves, -2);
  EXPECT_EQ(one.score->centipawns, 100000 - 1);    // mate in 1 ply
  EXPECT_EQ(three.score->centipawns, 100000 - 5);  // in 5 plies
  EXPECT_EQ(mated.score->centipawns, -(100000 - 4));
  EXPECT_GT(three.score->centipawns, 30000);
  EXPECT_LT(mated.score->centipawns, -30000);
}

TEST(ReadInfoLineTest, InfoStringAndThePvAreNotRead) {
  MoveAnswer answer;
  ReadInfoLine("info string score cp 500 depth 99 nodes 7", answer);
  EXPECT_FALSE(answer.score.has_value());
  EXPECT_EQ(answer.depth, 0);
  EXPECT_EQ(answer.nodes, 0);
  // Everything after pv is moves.
  ReadInfoLine("info depth 2 score cp 15 pv e2e4 depth 9 nodes 5 score cp 900", answer);
  ASSERT_TRUE(answer.score.has_value());
  EXPECT_EQ(answer.score->centipawns, 15);
  EXPECT_EQ(answer.depth, 2);
  EXPECT_EQ(answer.nodes, 0);
  // Lines that are not info, and numbers that are not numbers, change nothing.
  ReadInfoLine("bestmove e2e4 ponder e7e5", answer);
  ReadInfoLine("infodepth 7", answer);
  ReadInfoLine("info depth x score cp 1.5 nodes -", answer);
  EXPECT_EQ(answer.score->centipawns, 15);
  EXPECT_EQ(answer.depth, 2);
  EXPECT_EQ(answer.nodes, 0);
}

// ---------------------------------------------------------------------------------------------
// ChildProcess.

TEST(ChildProcessTest, LinesRoundTripThroughCat) {
  ChildProcess cat;
  const Status started = cat.Start({"cat"});  // found on PATH
  ASSERT_TRUE(started.ok()) << started.ToString();
  EXPECT_TRUE(cat.running());
  EXPECT_GT(cat.pid(), 0);
  for (const std::string line : {"uci", "position startpos moves e2e4 e7e5", "", "a last line"}) {
    ASSERT_TRUE(cat.WriteLine(line).ok());
    Result<std::string> echoed = cat.ReadLine(Clock::now() + seconds(30));
    ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
    EXPECT_EQ(*echoed, line);
  }
  // Lines written together come back one by one, in order; a '\r' before the newline goes.
  ASSERT_TRUE(cat.WriteLine("one\r").ok());
  ASSERT_TRUE(cat.WriteLine("two").ok());
  EXPECT_EQ(*cat.ReadLine(Clock::now() + seconds(30)), "one");
  EXPECT_EQ(*cat.ReadLine(Clock::now() + seconds(30)), "two");
  // A second Start while it runs is refused.
  EXPECT_EQ(cat.Start({"cat"}).code(), StatusCode::kFailedPrecondition);
}

TEST(ChildProcessTest, ReadLineWaitsUntilItsDeadlineAndNoLonger) {
  ChildProcess cat;
  ASSERT_TRUE(cat.Start({"/bin/cat"}).ok());
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + milliseconds(200);
  Result<std::string> line = cat.ReadLine(deadline);
  EXPECT_EQ(line.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_GE(Clock::now(), deadline - milliseconds(5));  // whole milliseconds of waiting
  EXPECT_LT(Since(start), seconds(10));  // generous: a loaded machine, but not a blocked read
  // A deadline already past answers at once.
  const Clock::time_point again = Clock::now();
  EXPECT_EQ(cat.ReadLine(again - seconds(1)).status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_LT(Since(again), seconds(10));
  // The child is still there to talk to.
  ASSERT_TRUE(cat.WriteLine("still here").ok());
  EXPECT_EQ(*cat.ReadLine(Clock::now() + seconds(30)), "still here");
}

TEST(ChildProcessTest, TheEndOfTheChildsOutputIsUnavailable) {
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/sh", "-c", "echo first; printf 'last, no newline'"}).ok());
  EXPECT_EQ(*child.ReadLine(Clock::now() + seconds(30)), "first");
  EXPECT_EQ(*child.ReadLine(Clock::now() + seconds(30)), "last, no newline");
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(child.ReadLine(Clock::now() + seconds(30)).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(child.ReadLine(Clock::now() + seconds(30)).status().code(), StatusCode::kUnavailable);
  EXPECT_LT(Since(start), seconds(20));  // not the deadline: the end of output is known
}

TEST(ChildProcessTest, WritingToAChildThatExitedFailsWithoutSigpipe) {
  // Start must protect its caller: with SIGPIPE's default action this process would die.
  ::signal(SIGPIPE, SIG_DFL);
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/true"}).ok());
  // Wait for its exit without reaping it (that stays the ChildProcess's job).
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(child.ReadLine(Clock::now() + seconds(30)).status().code(), StatusCode::kUnavailable);
  const std::string long_line(1 << 17, 'x');  // more than a pipe holds
  for (const std::string& line : {std::string("uci"), long_line}) {
    const Status written = child.WriteLine(line);
    EXPECT_EQ(written.code(), StatusCode::kUnavailable) << written.ToString();
  }
}

TEST(ChildProcessTest, AProgramThatDoesNotExistIsNotFound) {
  ChildProcess child;
  Status status = child.Start({"/nonexistent/az-no-such-engine", "--flag"});
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/az-no-such-engine"));
  EXPECT_FALSE(child.running());
  status = child.Start({"az-no-such-engine-on-the-path"});
  EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
  EXPECT_EQ(child.Start({}).code(), StatusCode::kInvalidArgument);
  // The same object starts a real program afterwards.
  ASSERT_TRUE(child.Start({"/bin/cat"}).ok());
  ASSERT_TRUE(child.WriteLine("ok").ok());
  EXPECT_EQ(*child.ReadLine(Clock::now() + seconds(30)), "ok");
}

TEST(ChildProcessTest, TheChildRunsInItsWorkingDirectory) {
  const std::filesystem::path dir =
      std::filesystem::canonical(std::filesystem::temp_directory_path());
  ChildProcess pwd;
  ASSERT_TRUE(pwd.Start({"/bin/sh", "-c", "pwd -P"}, dir.string()).ok());
  EXPECT_EQ(*pwd.ReadLine(Clock::now() + seconds(30)), dir.string());
}

// True when `pid` is neither running nor a zombie of ours.
bool Reaped(pid_t pid) {
  int status = 0;
  const bool not_our_child = ::waitpid(pid, &status, WNOHANG) < 0 && errno == ECHILD;
  const bool gone = ::kill(pid, 0) < 0 && errno == ESRCH;
  return not_our_child && gone;
}

TEST(ChildProcessTest, TheDestructorEndsAndReapsTheChild) {
  pid_t cat_pid = -1;
  {
    ChildProcess cat;
    ASSERT_TRUE(cat.Start({"/bin/cat"}).ok());
    cat_pid = cat.pid();
  }  // cat ends at the end of its input
  EXPECT_TRUE(Reaped(cat_pid));
  // A child that ignores its input is killed once the grace is over.
  pid_t sleeper_pid = -1;
  const Clock::time_point start = Clock::now();
  {
    ChildProcess sleeper;
    ASSERT_TRUE(sleeper.Start({"/bin/sleep", "600"}).ok());
    sleeper_pid = sleeper.pid();
  }
  EXPECT_LT(Since(start), seconds(60));
  EXPECT_TRUE(Reaped(sleeper_pid));
  // Stop is idempotent.
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/cat"}).ok());
  const pid_t child_pid = child.pid();
  child.Stop(milliseconds(500));
  EXPECT_FALSE(child.running());
  child.Stop(milliseconds(500));
  EXPECT_TRUE(Reaped(child_pid));
  EXPECT_EQ(child.WriteLine("x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(child.ReadLine(Clock::now() + seconds(1)).status().code(), StatusCode::kUnavailable);
}

// ---------------------------------------------------------------------------------------------
// Engines: az-uci, stockfish and the fake.

EngineSpec AzUci(const std::string& name, std::int64_t nodes) {
  return EngineSpec{.name = name,
                    .argv = {std::string(AZ_BINARY_DIR) + "/bin/az-uci", "--model", "uniform"},
                    .nodes = nodes};
}

EngineSpec Stockfish(const std::string& name, std::int64_t nodes) {
  return EngineSpec{.name = name, .argv = {kStockfish}, .nodes = nodes};
}

chess::Game GameFromFen(std::string_view fen) {
  Result<chess::Game> game = chess::Game::FromFen(fen);
  AZ_CHECK(game.ok(), game.status().ToString());
  return *game;
}

// The start position and then `moves` (UCI, checked legal).
chess::Game GameAfter(const std::vector<std::string>& moves) {
  chess::Game game;
  for (const std::string& move : moves) AZ_CHECK(game.PlayUci(move).ok(), move);
  return game;
}

// Honest engines: generous limits for a loaded machine.
ChessGameOptions Generous() {
  ChessGameOptions options;
  options.ready_timeout = seconds(60);
  options.move_timeout = seconds(60);
  options.stop_grace = seconds(5);
  return options;
}

// Replays `record` by core/chess: every move legal in its turn, one comment a move ("" for the
// opening's, the engine's otherwise), and an ending that agrees with the termination: a rules
// ending is the game's own outcome, an adjudication or a forfeit leaves the game unfinished.
void ExpectLegalRecord(const ChessGameRecord& record) {
  chess::Game game = record.start_fen.empty() ? chess::Game() : GameFromFen(record.start_fen);
  ASSERT_EQ(record.comments.size(), record.moves.size());
  ASSERT_LE(record.opening_plies, static_cast<int>(record.moves.size()));
  for (std::size_t i = 0; i < record.moves.size(); ++i) {
    ASSERT_FALSE(game.Outcome().is_terminal()) << "a move after the end, ply " << i;
    ASSERT_TRUE(game.LegalMoves().contains(record.moves[i]))
        << "ply " << i << ": " << chess::MoveToUci(record.moves[i]);
    EXPECT_EQ(record.comments[i].empty(), static_cast<int>(i) < record.opening_plies) << i;
    game.Play(record.moves[i]);
  }
  const chess::GameOutcome outcome = game.Outcome();
  const bool rules_ending = !record.termination.starts_with("adjudication") &&
                            record.termination != "time forfeit" &&
                            !record.termination.starts_with("illegal move") &&
                            !record.termination.starts_with("engine failed");
  if (rules_ending) {
    ASSERT_TRUE(outcome.is_terminal()) << record.termination;
    EXPECT_EQ(record.termination, chess::ToString(outcome.reason));
    const int white_score = outcome.result == chess::GameResult::kWhiteWins   ? 1
                            : outcome.result == chess::GameResult::kBlackWins ? -1
                                                                              : 0;
    EXPECT_EQ(record.white_score, white_score);
  } else {
    EXPECT_FALSE(outcome.is_terminal()) << record.termination;
  }
}

class MatchEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::temp_directory_path() /
           ("az_match_engine_test_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    fake_ = testing::WriteFakeEngine(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The fake in `mode`, logging to `log` (in the test's directory) when not empty.
  EngineSpec Fake(const std::string& mode, const std::string& limit_words,
                  const std::string& log = "", const std::string& slow_seconds = "") {
    EngineSpec spec;
    spec.argv = {fake_, mode, log.empty() ? "" : (dir_ / log).string()};
    if (!slow_seconds.empty()) spec.argv.push_back(slow_seconds);
    AZ_CHECK(ApplyEngineWords(limit_words, spec).ok(), limit_words);
    return spec;
  }

  std::vector<std::string> Log(const std::string& log) { return testing::ReadLog(dir_ / log); }

  // A started engine (the test fails when it does not start).
  std::unique_ptr<UciEngine> Started(EngineSpec spec) {
    auto engine = std::make_unique<UciEngine>(std::move(spec));
    const Status status = engine->Start(seconds(60));
    EXPECT_TRUE(status.ok()) << status.ToString();
    return engine;
  }

  std::filesystem::path dir_;
  std::string fake_;
};

TEST_F(MatchEngineTest, HandshakeNamesTheEngineAndSendsItsOptions) {
  EngineSpec spec = Fake("record", "nodes=5 'option.Skill Level=0' option.Hash=16", "log");
  UciEngine engine(spec);
  ASSERT_TRUE(engine.Start(seconds(60)).ok());
  EXPECT_TRUE(engine.running());
  EXPECT_EQ(engine.name(), "fake-record");  // its `id name`, as the spec gives none
  ASSERT_TRUE(engine.NewGame(seconds(60)).ok());
  Result<MoveAnswer> answer =
      engine.Go("position startpos", "go nodes 5", Clock::now() + seconds(60), seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->bestmove, "e2e4");
  ASSERT_TRUE(answer->score.has_value());
  EXPECT_EQ(answer->score->centipawns, 12);
  EXPECT_EQ(answer->depth, 1);
  engine.Quit();
  EXPECT_FALSE(engine.running());
  EXPECT_THAT(Log("log"),
              ElementsAre(StartsWith("start "), "< uci", "< setoption name Skill Level value 0",
                          "< setoption name Hash value 16", "< isready", "< ucinewgame",
                          "< isready", "< position startpos", "< go nodes 5", "< quit"));
}

TEST_F(MatchEngineTest, TheSpecsNameWinsOverTheEnginesIdName) {
  auto unnamed = Started(AzUci("", 16));
  EXPECT_EQ(unnamed->name(), "az-uci");
  auto named = Started(AzUci("mine", 16));
  EXPECT_EQ(named->name(), "mine");
}

TEST_F(MatchEngineTest, StartFailsWithinItsTimeoutWhenTheEngineNeverSaysUciok) {
  UciEngine engine(Fake("no_uciok", "nodes=1"));
  const Clock::time_point start = Clock::now();
  const Status status = engine.Start(milliseconds(500));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr("uci handshake"));
  EXPECT_LT(Since(start), seconds(20));  // the timeout, plus a generous margin
  EXPECT_FALSE(engine.running());
}

TEST_F(MatchEngineTest, StartRefusesASpecWithoutALimitAndAMissingProgram) {
  EngineSpec no_limit = AzUci("az", 16);
  no_limit.nodes = 0;
  EXPECT_EQ(UciEngine(no_limit).Start(seconds(10)).code(), StatusCode::kInvalidArgument);
  EngineSpec missing{.argv = {"/nonexistent/engine"}, .nodes = 1};
  EXPECT_EQ(UciEngine(missing).Start(seconds(10)).code(), StatusCode::kNotFound);
}

// ---------------------------------------------------------------------------------------------
// PlayChessGame between real engines.

TEST(PositionCommandTest, StartposOrFenThenTheMoves) {
  EXPECT_EQ(PositionCommand(chess::Game()), "position startpos");
  EXPECT_EQ(PositionCommand(GameAfter({"e2e4", "e7e5", "g1f3"})),
            "position startpos moves e2e4 e7e5 g1f3");
  // The start position given as a FEN is still startpos.
  EXPECT_EQ(PositionCommand(GameFromFen(chess::kStartFen)), "position startpos");
  const std::string fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
  EXPECT_EQ(PositionCommand(GameFromFen(fen)), "position fen " + fen);
  chess::Game game = GameFromFen(fen);
  ASSERT_TRUE(game.PlayUci("g1f1").ok());
  ASSERT_TRUE(game.PlayUci("g8f8").ok());
  EXPECT_EQ(PositionCommand(game), "position fen " + fen + " moves g1f1 g8f8");
}

TEST(ResultTextTest, WhitesScoreAsPgnResult) {
  EXPECT_EQ(ResultText(1), "1-0");
  EXPECT_EQ(ResultText(-1), "0-1");
  EXPECT_EQ(ResultText(0), "1/2-1/2");
}

TEST_F(MatchEngineTest, AzUciAgainstItselfFromTheStartPlaysALegalGame) {
  auto white = Started(AzUci("white", 16));
  auto black = Started(AzUci("black", 16));
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), Generous());
  ExpectLegalRecord(record);
  EXPECT_FALSE(record.termination.empty());
  EXPECT_TRUE(record.start_fen.empty());
  EXPECT_EQ(record.opening_plies, 0);
  EXPECT_GT(record.moves.size(), 0u);
  EXPECT_FALSE(record.white_failed);
  EXPECT_FALSE(record.black_failed);
  // The engines' comments: score/depth and seconds, as cutechess writes them.
  EXPECT_THAT(record.comments.front(),
              ::testing::MatchesRegex(R"([+-][0-9]+\.[0-9]{2}/[0-9]+ [0-9]+\.[0-9]{2}s)"));
}

TEST_F(MatchEngineTest, TheLengthLimitCountsOnlyTheEnginesPlies) {
  auto white = Started(AzUci("white", 16));
  auto black = Started(AzUci("black", 16));
  ChessGameOptions options = Generous();
  options.adjudication.max_plies = 10;
  const std::vector<std::string> opening = {"e2e4", "e7e5", "g1f3", "b8c6"};
  const ChessGameRecord record = PlayChessGame(*white, *black, GameAfter(opening), options);
  ExpectLegalRecord(record);
  EXPECT_EQ(record.termination, "adjudication: maximum length");
  EXPECT_EQ(record.white_score, 0);
  EXPECT_EQ(record.opening_plies, 4);
  ASSERT_EQ(record.moves.size(), 14u);
  for (std::size_t i = 0; i < opening.size(); ++i) {
    EXPECT_EQ(chess::MoveToUci(record.moves[i]), opening[i]);
  }
}

TEST_F(MatchEngineTest, AzUciMatesInOneForEitherSide) {
  auto a = Started(AzUci("a", 16));
  auto b = Started(AzUci("b", 16));
  const std::string fen = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";
  const ChessGameRecord white_mates = PlayChessGame(*a, *b, GameFromFen(fen), Generous());
  ExpectLegalRecord(white_mates);
  EXPECT_EQ(white_mates.start_fen, fen);
  EXPECT_EQ(white_mates.termination, "checkmate");
  EXPECT_EQ(white_mates.white_score, 1);
  ASSERT_EQ(white_mates.moves.size(), 1u);
  EXPECT_EQ(chess::MoveToUci(white_mates.moves[0]), "d1d8");
  EXPECT_THAT(white_mates.comments[0], StartsWith("+M1/"));
  // Fool's mate, after an opening of three plies.
  const ChessGameRecord black_mates =
      PlayChessGame(*a, *b, GameAfter({"f2f3", "e7e5", "g2g4"}), Generous());
  ExpectLegalRecord(black_mates);
  EXPECT_EQ(black_mates.termination, "checkmate");
  EXPECT_EQ(black_mates.white_score, -1);
  EXPECT_EQ(black_mates.opening_plies, 3);
  ASSERT_EQ(black_mates.moves.size(), 4u);
  EXPECT_EQ(chess::MoveToUci(black_mates.moves[3]), "d8h4");
}

TEST_F(MatchEngineTest, TheSideAQueenDownResignsWhenResignationIsOn) {
  auto white = Started(Stockfish("sf-white", 2000));
  auto black = Started(Stockfish("sf-black", 2000));
  // Black has no queen.
  const chess::Game opening =
      GameFromFen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
  ChessGameOptions options = Generous();
  options.adjudication.resign_moves = 3;
  options.adjudication.resign_score = 500;
  const ChessGameRecord record = PlayChessGame(*white, *black, opening, options);
  ExpectLegalRecord(record);
  EXPECT_EQ(record.termination, "adjudication: resignation");
  EXPECT_EQ(record.white_score, 1);
  EXPECT_GE(record.moves.size(), 6u);      // Black's third move at the earliest
  EXPECT_EQ(record.moves.size() % 2, 0u);  // after a move of Black's
  EXPECT_FALSE(record.white_failed || record.black_failed);
  // Resignation off: the same game goes on to the length limit.
  options.adjudication.resign_moves = 0;
  options.adjudication.max_plies = 8;
  const ChessGameRecord played_on = PlayChessGame(*white, *black, opening, options);
  EXPECT_EQ(played_on.termination, "adjudication: maximum length");
  EXPECT_EQ(played_on.moves.size(), 8u);
}

TEST_F(MatchEngineTest, ALevelBlockedEndgameIsAdjudicatedDrawn) {
  auto white = Started(Stockfish("sf-white", 2000));
  auto black = Started(Stockfish("sf-black", 2000));
  // Pawns locked on b, d and f: neither side can make progress, yet there is mating material.
  const chess::Game opening = GameFromFen("8/8/4k3/1p1p1p2/1P1P1P2/4K3/8/8 w - - 0 1");
  ChessGameOptions options = Generous();
  options.adjudication.draw_after_move = 0;
  options.adjudication.draw_moves = 3;
  options.adjudication.draw_score = 20;
  const ChessGameRecord record = PlayChessGame(*white, *black, opening, options);
  ExpectLegalRecord(record);
  EXPECT_EQ(record.termination, "adjudication: draw");
  EXPECT_EQ(record.white_score, 0);
  EXPECT_GE(record.moves.size(), 6u);  // three scores of each side
  // Not before draw_after_move.
  options.adjudication.draw_after_move = 1000;
  options.adjudication.max_plies = 8;
  const ChessGameRecord later = PlayChessGame(*white, *black, opening, options);
  EXPECT_EQ(later.termination, "adjudication: maximum length");
}

TEST_F(MatchEngineTest, AzUciAndStockfishOnAClockPlayAGameWithoutForfeit) {
  EngineSpec az = AzUci("az", 0);
  EngineSpec sf = Stockfish("sf", 0);
  ASSERT_TRUE(ApplyEngineWords("tc=2+0.05", az).ok());
  ASSERT_TRUE(ApplyEngineWords("tc=2+0.05", sf).ok());
  auto white = Started(az);
  auto black = Started(sf);
  ChessGameOptions options = Generous();
  options.adjudication.max_plies = 120;
  // Each engine manages its own clock; the margin only absorbs a loaded machine's hiccups.
  options.time_margin = milliseconds(1000);
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), options);
  ExpectLegalRecord(record);
  EXPECT_NE(record.termination, "time forfeit");
  EXPECT_FALSE(record.white_failed);
  EXPECT_FALSE(record.black_failed);
}

TEST_F(MatchEngineTest, ClocksSentAreEachSidesRemainingTimeWithIncrements) {
  // The fake (White) plays e2e4, then an illegal e7e5 on its second move; its log holds the go
  // commands it was sent.
  auto white = Started(Fake("record", "tc=10+0.1", "log"));
  EngineSpec az = AzUci("az", 0);
  ASSERT_TRUE(ApplyEngineWords("tc=5+0.2", az).ok());
  auto black = Started(az);
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), Generous());
  EXPECT_EQ(record.termination, "illegal move e7e5");
  EXPECT_TRUE(record.white_failed);
  white->Quit();
  std::vector<std::string> goes;
  for (const std::string& line : Log("log")) {
    if (line.starts_with("< go ")) goes.push_back(line.substr(2));
  }
  ASSERT_EQ(goes.size(), 2u);
  EXPECT_EQ(goes[0], "go wtime 10000 btime 5000 winc 100 binc 200");
  long long wtime = 0, btime = 0;
  ASSERT_EQ(
      std::sscanf(goes[1].c_str(), "go wtime %lld btime %lld winc 100 binc 200", &wtime, &btime), 2)
      << goes[1];
  // Each side's time less what its move took, plus its increment.
  EXPECT_LE(wtime, 10100);
  EXPECT_GT(wtime, 0);
  EXPECT_LE(btime, 5200);
  EXPECT_GT(btime, 0);
}

// ---------------------------------------------------------------------------------------------
// PlayChessGame against a misbehaving engine: it loses, is marked failed, the other side wins.

TEST_F(MatchEngineTest, AnIllegalMoveLosesTheGame) {
  auto white = Started(AzUci("az", 16));
  auto black = Started(Fake("illegal", "nodes=1"));
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), Generous());
  EXPECT_EQ(record.white_score, 1);
  EXPECT_EQ(record.termination, "illegal move e2e5");
  EXPECT_TRUE(record.black_failed);
  EXPECT_FALSE(record.white_failed);
  EXPECT_EQ(record.moves.size(), 1u);  // az-uci's first move; the illegal one is not recorded
  ExpectLegalRecord(record);
}

TEST_F(MatchEngineTest, AnEngineThatExitsMidGameLoses) {
  auto white = Started(Fake("exit", "nodes=1"));
  auto black = Started(AzUci("az", 16));
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), Generous());
  EXPECT_EQ(record.white_score, -1);
  EXPECT_THAT(record.termination, StartsWith("engine failed: "));
  EXPECT_TRUE(record.white_failed);
  EXPECT_FALSE(record.black_failed);
  EXPECT_EQ(record.moves.size(), 2u);  // e2e4 and az-uci's answer
  ExpectLegalRecord(record);
  // The failed engine starts afresh (as az-match does before the next game) and plays again.
  white->Quit();
  ASSERT_TRUE(white->Start(seconds(60)).ok());
  const ChessGameRecord again = PlayChessGame(*white, *black, chess::Game(), Generous());
  EXPECT_THAT(again.termination, StartsWith("engine failed: "));
  EXPECT_EQ(again.moves.size(), 2u);
}

TEST_F(MatchEngineTest, ABareBestmoveLosesTheGame) {
  auto white = Started(AzUci("az", 16));
  auto black = Started(Fake("nomove", "nodes=1"));
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), Generous());
  EXPECT_EQ(record.white_score, 1);
  EXPECT_THAT(record.termination, StartsWith("engine failed: "));
  EXPECT_THAT(record.termination, HasSubstr("bestmove"));
  EXPECT_TRUE(record.black_failed);
}

TEST_F(MatchEngineTest, AnEngineThatNeverAnswersGoLosesOnTime) {
  // The fake moves first, so the move timeout is its alone.
  auto white = Started(Fake("silent", "nodes=1", "log"));
  auto black = Started(AzUci("az", 16));
  ChessGameOptions options = Generous();
  options.move_timeout = milliseconds(500);
  options.stop_grace = milliseconds(500);
  const Clock::time_point start = Clock::now();
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), options);
  EXPECT_GE(Since(start), milliseconds(950));  // the timeout, then the grace after stop
  EXPECT_LT(Since(start), seconds(30));
  EXPECT_EQ(record.white_score, -1);
  EXPECT_EQ(record.termination, "time forfeit");
  EXPECT_TRUE(record.white_failed);
  EXPECT_FALSE(record.black_failed);
  EXPECT_TRUE(record.moves.empty());
  white->Quit();
  const std::vector<std::string> log = Log("log");
  EXPECT_NE(std::find(log.begin(), log.end(), "< stop"), log.end());
}

TEST_F(MatchEngineTest, AnAnswerOnlyAfterStopIsTooLate) {
  auto white = Started(Fake("after_stop", "movetime=100", "log"));
  auto black = Started(AzUci("az", 16));
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), Generous());
  EXPECT_EQ(record.white_score, -1);
  EXPECT_EQ(record.termination, "time forfeit");
  EXPECT_TRUE(record.white_failed);
  EXPECT_TRUE(record.moves.empty());  // its move, e2e4, came after stop and does not count
  white->Quit();
  const std::vector<std::string> log = Log("log");
  EXPECT_NE(std::find(log.begin(), log.end(), "< go movetime 100"), log.end());
  EXPECT_NE(std::find(log.begin(), log.end(), "< stop"), log.end());
}

TEST_F(MatchEngineTest, AnEngineSlowerThanItsMovetimeAndMarginLosesOnTime) {
  auto white = Started(AzUci("az", 16));
  auto black = Started(Fake("slow", "movetime=100", "", "3"));
  ChessGameOptions options = Generous();
  options.time_margin = milliseconds(100);
  options.stop_grace = milliseconds(500);
  const ChessGameRecord record = PlayChessGame(*white, *black, chess::Game(), options);
  EXPECT_EQ(record.white_score, 1);
  EXPECT_EQ(record.termination, "time forfeit");
  EXPECT_TRUE(record.black_failed);
  EXPECT_FALSE(record.white_failed);
  EXPECT_EQ(record.moves.size(), 1u);
}

// ---------------------------------------------------------------------------------------------
// RunMatch.

TEST(RunMatchTest, PlaysAnEvenNumberOfGamesAlternatingColours) {
  const std::vector<GameSummary> script = {
      {+1, "checkmate"}, {0, "threefold repetition"},      {-1, "time forfeit"}, {+1, "checkmate"},
      {0, ""},           {+1, "adjudication: resignation"}};
  std::vector<std::pair<int, bool>> calls;
  int progress_calls = 0;
  const MatchSettings settings{.a = "A", .b = "B", .games = 5};
  Result<MatchReport> report = RunMatch(
      settings,
      [&](int game, bool a_first) -> Result<GameSummary> {
        calls.emplace_back(game, a_first);
        return script.at(static_cast<std::size_t>(game));
      },
      [&](const MatchReport& r, const GameSummary& summary) {
        ++progress_calls;
        EXPECT_EQ(r.tally.games(), progress_calls);
        EXPECT_EQ(summary.termination,
                  script.at(static_cast<std::size_t>(progress_calls - 1)).termination);
      });
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->games_planned, 6);  // 5 rounded up: each opening twice
  ASSERT_EQ(calls.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(calls[i].first, i);
    EXPECT_EQ(calls[i].second, i % 2 == 0) << "A moves first in the even-numbered games";
  }
  EXPECT_EQ(progress_calls, 6);
  EXPECT_EQ(report->a, "A");
  EXPECT_EQ(report->b, "B");
  EXPECT_EQ(report->tally.wins, 3);
  EXPECT_EQ(report->tally.draws, 2);
  EXPECT_EQ(report->tally.losses, 1);
  EXPECT_DOUBLE_EQ(report->estimate.score, Estimate(report->tally).score);
  EXPECT_DOUBLE_EQ(report->estimate.elo, Estimate(report->tally).elo);
  // Terminations counted; a game that does not say is not.
  EXPECT_EQ(report->terminations, (std::map<std::string, int>{{"adjudication: resignation", 1},
                                                              {"checkmate", 2},
                                                              {"threefold repetition", 1},
                                                              {"time forfeit", 1}}));
  EXPECT_FALSE(report->sprt.has_value());
  EXPECT_GE(report->seconds, 0);
}

// A match whose results repeat `pattern` (A's scores) until the SPRT decides.
MatchReport RunPattern(const std::vector<int>& pattern, const SprtConfig& sprt, int* calls) {
  const MatchSettings settings{.a = "A", .b = "B", .games = 10000, .sprt = sprt};
  Result<MatchReport> report = RunMatch(settings, [&](int game, bool) -> Result<GameSummary> {
    ++*calls;
    return GameSummary{.a_score = pattern[static_cast<std::size_t>(game) % pattern.size()]};
  });
  AZ_CHECK(report.ok(), report.status().ToString());
  return *report;
}

TEST(RunMatchTest, TheSprtEndsTheMatchOnceItDecides) {
  const SprtConfig sprt{.elo0 = 0, .elo1 = 200};
  int calls = 0;
  const MatchReport stronger = RunPattern({+1, +1, 0, +1, -1, +1}, sprt, &calls);
  ASSERT_TRUE(stronger.sprt.has_value());
  EXPECT_EQ(stronger.sprt->decision, SprtDecision::kAcceptH1);
  EXPECT_GE(stronger.sprt->llr, stronger.sprt->upper);
  EXPECT_LT(stronger.tally.games(), 10000);
  EXPECT_EQ(calls, stronger.tally.games());  // no game after the decision
  EXPECT_EQ(stronger.games_planned, 10000);

  calls = 0;
  const MatchReport weaker = RunPattern({-1, 0, -1, +1, 0, -1}, sprt, &calls);
  ASSERT_TRUE(weaker.sprt.has_value());
  EXPECT_EQ(weaker.sprt->decision, SprtDecision::kAcceptH0);
  EXPECT_LE(weaker.sprt->llr, weaker.sprt->lower);
  EXPECT_LT(weaker.tally.games(), 10000);
  EXPECT_EQ(calls, weaker.tally.games());
}

TEST(RunMatchTest, AGameThatFailsEndsTheMatchWithItsError) {
  int calls = 0;
  Result<MatchReport> report = RunMatch(MatchSettings{.a = "A", .b = "B", .games = 10},
                                        [&](int game, bool) -> Result<GameSummary> {
                                          ++calls;
                                          if (game == 3)
                                            return Unavailable("the network went away");
                                          return GameSummary{.a_score = 1};
                                        });
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(report.status().message(), HasSubstr("network went away"));
  EXPECT_EQ(calls, 4);
}

TEST(MatchReportToJsonTest, HasArenasFieldsThenTheEloSprtAndTerminations) {
  int calls = 0;
  const MatchReport report =
      RunPattern({+1, +1, 0, +1, -1, +1}, SprtConfig{.elo0 = 0, .elo1 = 200}, &calls);
  const nlohmann::json json = MatchReportToJson(report);
  // The fields az-arena's JSON had (a, b, games, a_wins, draws, b_wins, a_score, a_score_ci95,
  // elo, seconds), with the same meaning: scripts that read az-arena's output read this.
  EXPECT_EQ(json.at("a"), "A");
  EXPECT_EQ(json.at("b"), "B");
  EXPECT_EQ(json.at("games"), report.tally.games());
  EXPECT_EQ(json.at("a_wins"), report.tally.wins);
  EXPECT_EQ(json.at("draws"), report.tally.draws);
  EXPECT_EQ(json.at("b_wins"), report.tally.losses);
  EXPECT_DOUBLE_EQ(json.at("a_score").get<double>(), report.estimate.score);
  EXPECT_DOUBLE_EQ(json.at("a_score_ci95").get<double>(), report.estimate.score_ci95);
  EXPECT_DOUBLE_EQ(json.at("elo").get<double>(), report.estimate.elo);
  EXPECT_DOUBLE_EQ(json.at("seconds").get<double>(), report.seconds);
  // az-match's own.
  EXPECT_DOUBLE_EQ(json.at("elo_low").get<double>(), report.estimate.elo_low);
  EXPECT_DOUBLE_EQ(json.at("elo_high").get<double>(), report.estimate.elo_high);
  EXPECT_DOUBLE_EQ(json.at("los").get<double>(), report.estimate.los);
  EXPECT_DOUBLE_EQ(json.at("draw_ratio").get<double>(), report.estimate.draw_ratio);
  EXPECT_EQ(json.at("games_planned"), 10000);
  EXPECT_TRUE(json.at("terminations").is_object());
  const nlohmann::json& sprt = json.at("sprt");
  EXPECT_EQ(sprt.at("decision"), "H1 accepted");
  EXPECT_DOUBLE_EQ(sprt.at("llr").get<double>(), report.sprt->llr);
  EXPECT_DOUBLE_EQ(sprt.at("lower").get<double>(), report.sprt->lower);
  EXPECT_DOUBLE_EQ(sprt.at("upper").get<double>(), report.sprt->upper);
  EXPECT_EQ(sprt.at("elo0"), 0.0);
  EXPECT_EQ(sprt.at("elo1"), 200.0);
  EXPECT_EQ(sprt.at("alpha"), 0.05);
  EXPECT_EQ(sprt.at("beta"), 0.05);
  // Without an SPRT there is no sprt object.
  MatchReport plain = report;
  plain.sprt.reset();
  plain.sprt_config.reset();
  EXPECT_FALSE(MatchReportToJson(plain).contains("sprt"));
  // Terminations by name.
  plain.terminations = {{"checkmate", 3}, {"illegal move e2e5", 1}};
  EXPECT_EQ(MatchReportToJson(plain).at("terminations"),
            (nlohmann::json{{"checkmate", 3}, {"illegal move e2e5", 1}}));
}

}  // namespace
}  // namespace az::match
