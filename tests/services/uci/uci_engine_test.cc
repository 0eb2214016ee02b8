// The az-uci engine in process, driven by scripted command lines: the handshake and options,
// isready while searching, positions, every kind of go (nodes, movetime, clocks, depth,
// infinite + stop), one legal move, no legal move, bad input, quit, tree reuse, a real network
// file, and a failing evaluator.

#include "services/uci/uci_engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/uci.h"
#include "core/nn/network.h"
#include "tests/services/uci/tiny_network.h"
#include "services/uci/uci_commands.h"
#include "tests/services/uci/transcript.h"

namespace az::uci {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Transcript;
using Clock = std::chrono::steady_clock;

constexpr char kMateInOneFen[] = "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1";  // d1d8#
constexpr char kOneLegalMoveFen[] = "7k/8/8/8/8/8/6q1/7K w - - 0 1";       // only h1g2

std::vector<std::string> Words(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

// The value after `key` in an info line, or "".
std::string Field(const std::string& line, const std::string& key) {
  const std::vector<std::string> words = Words(line);
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == key) return words[i + 1];
  }
  return "";
}

// The pv of an info line.
std::vector<std::string> Pv(const std::string& line) {
  const std::vector<std::string> words = Words(line);
  std::vector<std::string> pv;
  bool in_pv = false;
  for (const std::string& word : words) {
    if (in_pv) pv.push_back(word);
    in_pv = in_pv || word == "pv";
  }
  return pv;
}

// Whether `moves` can be played one after the other from the position `command` sets up.
bool LegalSequence(const std::string& position_arguments, const std::vector<std::string>& moves) {
  PositionCommand command = ParsePosition(position_arguments);
  if (!command.game) return false;
  for (const std::string& move : moves) {
    if (!command.game->PlayUci(move).ok()) return false;
  }
  return true;
}

class UciEngineTest : public ::testing::Test {
 protected:
  void Start(EngineOptions options = {}, EvaluatorFactory factory = LoadChessEvaluator) {
    Result<std::unique_ptr<UciEngine>> made = UciEngine::Create(
        options, [this](std::string_view line) { transcript_.Add(line); }, std::move(factory));
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    engine_ = std::move(*made);
  }

  void Send(std::string_view line) { EXPECT_TRUE(engine_->HandleLine(line)) << line; }

  // Sends `go`, waits for its bestmove and returns the move; `elapsed` gets the time it took.
  std::string Go(const std::string& go, milliseconds* elapsed = nullptr,
                 milliseconds limit = milliseconds(60'000)) {
    const std::size_t from = transcript_.size();
    const Clock::time_point start = Clock::now();
    Send(go);
    const std::optional<std::size_t> at = transcript_.WaitFor("bestmove ", limit, from);
    if (elapsed != nullptr) {
      *elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    }
    if (!at) {
      ADD_FAILURE() << "no bestmove after '" << go << "':\n" << transcript_.Text();
      return "";
    }
    // Exactly one bestmove for this go.
    EXPECT_EQ(transcript_.Matching("bestmove ", from).size(), 1u) << transcript_.Text();
    return Words(transcript_.Lines()[*at])[1];
  }

  // The last `info depth` line.
  std::string LastInfo() const {
    const std::vector<std::string> infos = transcript_.Matching("info depth ");
    return infos.empty() ? std::string() : infos.back();
  }

  Transcript transcript_;  // declared first: outlives the engine, which may print as it ends
  std::unique_ptr<UciEngine> engine_;
};

TEST_F(UciEngineTest, HandshakeListsTheOptionsThenUciok) {
  Start();
  Send("uci");
  const std::vector<std::string> lines = transcript_.Lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "id name az-uci");
  EXPECT_EQ(lines.back(), "uciok");
  const std::string text = transcript_.Text();
  for (const char* option :
       {"option name WeightsFile type string default uniform",
        "option name Threads type spin default 1 min 1 max 256",
        "option name Hash type spin default 256 min 1 max 65536",
        "option name NNCacheSize type spin default 65536 min 0 max 16777216",
        "option name MinibatchSize type spin default 16 min 1 max 1024",
        "option name CPuct type string default 1.5", "option name RiskBeta type string default 0",
        "option name Move Overhead type spin default 100 min 0 max 10000",
        "option name UCI_ShowWDL type check default true"}) {
    EXPECT_NE(text.find(std::string(option) + "\n"), std::string::npos) << option << "\n" << text;
  }
  Send("isready");
  EXPECT_EQ(transcript_.Lines().back(), "readyok");
}

TEST_F(UciEngineTest, GoNodesPlaysExactlyThatManyPlayoutsAndReportsThem) {
  Start();
  Send("position startpos moves e2e4 e7e5");
  const std::string best = Go("go nodes 300");
  EXPECT_TRUE(LegalSequence("startpos moves e2e4 e7e5", {best})) << best;
  EXPECT_EQ(engine_->last_report().playouts, 300u);
  const std::string info = LastInfo();
  EXPECT_EQ(Field(info, "nodes"), "300") << info;
  EXPECT_GE(std::stoi(Field(info, "depth")), 1) << info;
  EXPECT_GE(std::stoi(Field(info, "seldepth")), std::stoi(Field(info, "depth"))) << info;
  EXPECT_FALSE(Field(info, "time").empty()) << info;
  EXPECT_FALSE(Field(info, "nps").empty()) << info;
  EXPECT_FALSE(Field(info, "cp").empty()) << info;
  const std::vector<std::string> words = Words(info);
  const auto wdl = std::find(words.begin(), words.end(), "wdl");
  ASSERT_TRUE(wdl != words.end() && words.end() - wdl > 3) << info;
  EXPECT_EQ(std::stoi(wdl[1]) + std::stoi(wdl[2]) + std::stoi(wdl[3]), 1000) << info;
  const std::vector<std::string> pv = Pv(info);
  ASSERT_FALSE(pv.empty()) << info;
  EXPECT_EQ(pv.front(), best);
  EXPECT_TRUE(LegalSequence("startpos moves e2e4 e7e5", pv)) << info;
}

TEST_F(UciEngineTest, PositionFenFindsTheMateInOne) {
  Start();
  Send(std::string("position fen ") + kMateInOneFen);
  EXPECT_EQ(Go("go nodes 2000"), "d1d8");
  EXPECT_NE(LastInfo().find(" score mate 1 "), std::string::npos) << LastInfo();
  // Black's side of a FEN with moves: after the mate there is nothing to play.
  Send(std::string("position fen ") + kMateInOneFen + " moves d1d8");
  EXPECT_EQ(Go("go nodes 10"), "0000");
  EXPECT_FALSE(transcript_.Matching("info string no legal move: checkmate").empty());
}

TEST_F(UciEngineTest, IsReadyIsAnsweredWhileSearchingAndStopEndsGoInfinite) {
  Start();
  Send("position startpos");
  const std::size_t from = transcript_.size();
  Send("go infinite");
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_TRUE(engine_->searching());
  Send("isready");
  ASSERT_TRUE(transcript_.WaitFor("readyok", seconds(5), from).has_value());
  EXPECT_TRUE(transcript_.Matching("bestmove", from).empty()) << "go infinite answered by itself";
  const Clock::time_point stop_sent = Clock::now();
  Send("stop");  // returns once the search has ended and printed its move
  EXPECT_LT(Clock::now() - stop_sent, seconds(2));
  EXPECT_FALSE(engine_->searching());
  const std::vector<std::string> bestmoves = transcript_.Matching("bestmove ", from);
  ASSERT_EQ(bestmoves.size(), 1u) << transcript_.Text();
  EXPECT_TRUE(LegalSequence("startpos", {Words(bestmoves[0])[1]})) << bestmoves[0];
  EXPECT_GT(engine_->last_report().playouts, 0u);
  // Nothing more comes later, and a second stop does nothing.
  Send("stop");
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(transcript_.Matching("bestmove ", from).size(), 1u);
}

TEST_F(UciEngineTest, MovetimeIsKept) {
  Start();
  Send("position startpos moves d2d4");
  milliseconds elapsed{};
  const std::string best = Go("go movetime 400", &elapsed);
  EXPECT_TRUE(LegalSequence("startpos moves d2d4", {best}));
  // The budget is 300 ms (the 100 ms overhead kept back): the move comes within the move time,
  // with room for a loaded machine's scheduling.
  EXPECT_GE(elapsed, milliseconds(200));
  EXPECT_LT(elapsed, milliseconds(3'000));
  EXPECT_GE(engine_->last_report().elapsed_ms, 250);
}

TEST_F(UciEngineTest, AGameOnSmallClocksNeverRunsOutOfTime) {
  Start();
  std::int64_t clock_ms[2] = {1'000, 1'000};
  const std::int64_t increment_ms = 20;
  std::string moves;
  for (int ply = 0; ply < 12; ++ply) {
    Send("position startpos" + (moves.empty() ? std::string() : " moves" + moves));
    milliseconds elapsed{};
    const std::string best = Go("go wtime " + std::to_string(clock_ms[0]) + " btime " +
                                    std::to_string(clock_ms[1]) + " winc 20 binc 20",
                                &elapsed);
    ASSERT_FALSE(best.empty());
    std::int64_t& ours = clock_ms[ply % 2];
    EXPECT_LT(elapsed.count(), ours) << "lost on time at ply " << ply;
    // The engine keeps well inside its share: never more than half of what is left.
    EXPECT_LE(engine_->last_report().elapsed_ms, ours / 2 + 50) << "ply " << ply;
    ours += increment_ms - elapsed.count();
    ASSERT_GT(ours, 0);
    moves += " " + best;
    ASSERT_TRUE(LegalSequence("startpos moves" + moves, {})) << moves;
  }
  // Almost no time left (100 ms usable): a budget of a few ms, answered well inside the clock.
  Send("position startpos");
  milliseconds elapsed{};
  EXPECT_FALSE(Go("go wtime 200 btime 200", &elapsed).empty());
  EXPECT_LT(elapsed, milliseconds(200));
}

TEST_F(UciEngineTest, OneLegalMoveIsAnsweredAtOnce) {
  Start();
  Send(std::string("position fen ") + kOneLegalMoveFen);
  milliseconds elapsed{};
  EXPECT_EQ(Go("go wtime 600000 btime 600000", &elapsed), "h1g2");
  EXPECT_LT(elapsed, milliseconds(2'000));  // no search: a searched one would take ~20 s
  EXPECT_FALSE(engine_->last_report().searched);
  // With go infinite it still waits for stop.
  const std::size_t from = transcript_.size();
  Send("go infinite");
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_TRUE(transcript_.Matching("bestmove", from).empty());
  Send("stop");
  EXPECT_EQ(transcript_.Matching("bestmove h1g2", from).size(), 1u) << transcript_.Text();
}

TEST_F(UciEngineTest, BadInputIsAnsweredWithInfoStringsAndTheEngineCarriesOn) {
  Start();
  const auto expect_info_string = [&](const std::string& line, const std::string& part) {
    const std::size_t from = transcript_.size();
    Send(line);
    const std::vector<std::string> said = transcript_.Matching("info string ", from);
    ASSERT_EQ(said.size(), 1u) << line << "\n" << transcript_.Text();
    EXPECT_NE(said[0].find(part), std::string::npos) << said[0];
  };
  expect_info_string("flubber 1 2", "unknown command 'flubber'");
  expect_info_string("position fen this/is/not/a/fen w - - 0 1", "bad FEN");
  expect_info_string("position", "startpos");
  expect_info_string("setoption name Hash value lots", "Hash");
  expect_info_string("setoption name Hash value -5", "Hash");
  expect_info_string("setoption name Threads value 100000", "Threads");
  expect_info_string("setoption name CPuct value zero", "CPuct");
  expect_info_string("setoption name UCI_ShowWDL value maybe", "true or false");
  expect_info_string("setoption name Nonsense value 1", "unknown option 'Nonsense'");
  expect_info_string("setoption", "name");
  expect_info_string("position startpos moves e2e4 e7e5 e1e3 d2d4", "e1e3");
  // The moves before the illegal one stand: white is to move after e2e4 e7e5.
  EXPECT_TRUE(LegalSequence("startpos moves e2e4 e7e5", {Go("go nodes 50")}));
  // A go whose limits cannot be read still answers, after a short search.
  const std::size_t from = transcript_.size();
  milliseconds elapsed{};
  EXPECT_FALSE(Go("go nodes many", &elapsed).empty());
  EXPECT_FALSE(transcript_.Matching("info string go nodes needs an integer", from).empty());
  EXPECT_LT(elapsed, milliseconds(5'000));
  Send("isready");
  EXPECT_EQ(transcript_.Lines().back(), "readyok");
  // Empty lines and the commands with nothing to do print nothing.
  const std::size_t quiet = transcript_.size();
  Send("");
  Send("   ");
  Send("debug on");
  Send("ponderhit");
  EXPECT_EQ(transcript_.size(), quiet);
}

TEST_F(UciEngineTest, QuitDuringASearchStopsItAndEndsTheSession) {
  Start();
  Send("position startpos");
  Send("go infinite");
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(engine_->HandleLine("quit"));
  EXPECT_FALSE(engine_->searching());
  EXPECT_EQ(transcript_.Matching("bestmove ").size(), 1u);
}

TEST_F(UciEngineTest, EndOfInputCountsAsQuit) {
  Start();
  std::istringstream input("uci\nisready\nposition startpos\ngo nodes 40\n");
  engine_->Run(input);
  EXPECT_EQ(transcript_.Matching("bestmove ").size(), 1u) << transcript_.Text();
  EXPECT_FALSE(engine_->searching());
}

TEST_F(UciEngineTest, TheTreeIsReusedWhenTheGameGoesOn) {
  Start();
  Send("position startpos");
  const std::string first = Go("go nodes 600");
  const std::vector<std::string> pv = Pv(LastInfo());
  ASSERT_GE(pv.size(), 2u) << LastInfo();
  Send("position startpos moves " + pv[0] + " " + pv[1]);
  Go("go nodes 100");
  EXPECT_GT(engine_->last_report().inherited_visits, 0u);
  EXPECT_EQ(engine_->last_report().playouts, 100u);
  // A new game, or a position that does not continue this one, starts afresh.
  Send("ucinewgame");
  Send("position startpos moves " + pv[0] + " " + pv[1]);
  Go("go nodes 100");
  EXPECT_EQ(engine_->last_report().inherited_visits, 0u);
  Send("position startpos moves g1f3");
  Go("go nodes 100");
  EXPECT_EQ(engine_->last_report().inherited_visits, 0u);
  EXPECT_EQ(first, pv[0]);
}

TEST_F(UciEngineTest, SetOptionAppliesBetweenSearchesAndIsRefusedDuringOne) {
  Start();
  Send("setoption name Hash value 1");
  Send("setoption name minibatchsize value 1");  // names are case-insensitive
  Send("setoption name RiskBeta value -0.5");
  Send("setoption name UCI_ShowWDL value false");
  Send("setoption name Move Overhead value 10");
  EXPECT_TRUE(transcript_.Matching("info string").empty()) << transcript_.Text();
  Send("position startpos");
  EXPECT_FALSE(Go("go nodes 2000").empty());
  const std::string info = LastInfo();
  EXPECT_EQ(info.find(" wdl "), std::string::npos) << info;
  EXPECT_FALSE(Field(info, "hashfull").empty());
  Send("uci");
  EXPECT_FALSE(
      transcript_.Matching("option name Hash type spin default 1 min 1 max 65536").empty());

  const std::size_t from = transcript_.size();
  Send("go infinite");
  Send("setoption name Hash value 2");
  EXPECT_FALSE(transcript_.Matching("info string setoption ignored", from).empty());
  Send("stop");
  Send("uci");
  EXPECT_FALSE(
      transcript_.Matching("option name Hash type spin default 1 min 1 max 65536", from).empty());
}

TEST_F(UciEngineTest, GoDepthSearchesUntilTheAverageDepthIsReached) {
  Start();
  Send("position startpos");
  EXPECT_FALSE(Go("go depth 3").empty());
  EXPECT_GE(std::stoi(Field(LastInfo(), "depth")), 3) << LastInfo();
  // A depth the tree cannot reach in its memory: the search ends when the tree is full.
  Send("setoption name Hash value 1");
  milliseconds elapsed{};
  EXPECT_FALSE(Go("go depth 60", &elapsed).empty());
  EXPECT_GE(std::stoi(Field(LastInfo(), "hashfull")), 990) << LastInfo();
  EXPECT_LT(elapsed, milliseconds(30'000));
}

TEST_F(UciEngineTest, GoDuringASearchEndsThatSearchFirst) {
  Start();
  Send("position startpos");
  Send("go infinite");
  std::this_thread::sleep_for(milliseconds(100));
  Send("go nodes 50");
  ASSERT_TRUE(transcript_.WaitFor("bestmove", seconds(30)).has_value());
  std::this_thread::sleep_for(milliseconds(100));
  Send("isready");
  ASSERT_TRUE(transcript_.WaitFor("readyok", seconds(30)).has_value());
  // Wait for the second search's move.
  for (int i = 0; i < 300 && transcript_.Matching("bestmove ").size() < 2; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(transcript_.Matching("bestmove ").size(), 2u) << transcript_.Text();
}

TEST_F(UciEngineTest, InfoLinesComeRegularlyDuringASearch) {
  EngineOptions options;
  options.info_interval_ms = 50;
  Start(options);
  Send("position startpos");
  Go("go movetime 600");
  EXPECT_GE(transcript_.Matching("info depth ").size(), 4u) << transcript_.Text();
}

TEST_F(UciEngineTest, APositionDrawnByOurRulesStillGetsALegalMove) {
  Start();
  // The start position a third time: a threefold repetition, which the GUI may not claim.
  const std::string repeated = "startpos moves g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8";
  Send("position " + repeated);
  const std::string best = Go("go nodes 100");
  EXPECT_TRUE(LegalSequence(repeated, {best})) << best;
  EXPECT_FALSE(transcript_.Matching("info string the game is already drawn").empty());
}

// An evaluator that always fails, as a broken network would.
class FailingEvaluator final : public ChessEvaluator {
 public:
  Status Evaluate(std::span<const mcts::Leaf<games::Chess>>, std::span<mcts::LeafEval>) override {
    return Internal("the device went away");
  }
};

TEST_F(UciEngineTest, AnEvaluatorErrorStillEndsInALegalMove) {
  Start({}, [](const EvaluatorSettings&) -> Result<LoadedEvaluator> {
    return LoadedEvaluator{std::make_unique<FailingEvaluator>(), true, "failing"};
  });
  Send("position startpos moves e2e4");
  const std::string best = Go("go nodes 100");
  EXPECT_TRUE(LegalSequence("startpos moves e2e4", {best})) << best;
  EXPECT_FALSE(transcript_.Matching("info string search stopped by an error").empty())
      << transcript_.Text();
}

TEST(UciEngineCreateTest, RefusesBadOptionsAndMissingModels) {
  const auto sink = [](std::string_view) {};
  EngineOptions options;
  options.hash_mb = 0;
  EXPECT_EQ(UciEngine::Create(options, sink).status().code(), StatusCode::kInvalidArgument);
  options = {};
  options.model = "/nonexistent/model.azw";
  EXPECT_EQ(UciEngine::Create(options, sink).status().code(), StatusCode::kNotFound);
}

class UciEngineWithModelTest : public UciEngineTest {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("az_uci_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A freshly initialised tiny chess network, saved.
  std::string SaveTinyChessNetwork() {
    const std::string path = (dir_ / "chess.azw").string();
    const Status saved = testing::SaveTinyChessNetwork(path, 7);
    EXPECT_TRUE(saved.ok()) << saved.ToString();
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(UciEngineWithModelTest, PlaysWithANetworkBehindTheCache) {
  const std::string path = SaveTinyChessNetwork();
  EngineOptions options;
  options.model = path;
  options.nn_cache_entries = 4096;
  Start(options);
  Send("uci");
  EXPECT_FALSE(transcript_.Matching("option name WeightsFile type string default " + path).empty());
  Send("position startpos moves e2e4");
  EXPECT_TRUE(LegalSequence("startpos moves e2e4", {Go("go nodes 64")}));
  // The same search again: a fresh tree, every position answered by the cache now.
  Send("ucinewgame");
  Send("position startpos moves e2e4");
  EXPECT_TRUE(LegalSequence("startpos moves e2e4", {Go("go nodes 64")}));

  Send("setoption name NNCacheSize value 0");
  const std::vector<std::string> loaded = transcript_.Matching("info string evaluator: network");
  ASSERT_EQ(loaded.size(), 1u) << transcript_.Text();
  EXPECT_NE(loaded[0].find("nn cache off"), std::string::npos) << loaded[0];
  Send("setoption name WeightsFile value /nonexistent/model.azw");
  EXPECT_FALSE(transcript_.Matching("info string cannot load the evaluator").empty());
  EXPECT_TRUE(LegalSequence("startpos moves e2e4", {Go("go nodes 32")}));
  Send("setoption name WeightsFile value uniform");
  EXPECT_TRUE(LegalSequence("startpos moves e2e4", {Go("go nodes 32")}));
}

}  // namespace
}  // namespace az::uci
