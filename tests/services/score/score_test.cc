// az-score: every reachable tic-tac-toe position is scored, random Connect Four positions by band,
// search (PUCT or Gumbel) scores above the first legal move, networks of the game load, the rest is
// refused; the stored position sets (position_set.h): the shipped ones load and agree with the
// solver, the generator is deterministic, malformed files are refused by line, and scoring a set
// needs no solver; --one-ply-value takes every win in one; scripts/connect4-tactics splits
// az-score's count by kind of position and agrees with it.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "core/base/check.h"
#include "core/games/connect4/connect_four_solver.h"
#include "core/games/registry.h"
#include "core/games/tictactoe/tictactoe.h"
#include "core/nn/game_network.h"
#include "core/nn/network.h"
#include "services/score/position_set.h"
#include "services/score/solver_score.h"

namespace az::score {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("az_score_" + name + "_" + std::to_string(getpid())))
      .string();
}

// Runs a shell command; its stdout and stderr together, and its exit code.
std::pair<std::string, int> RunCommand(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  std::string text;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) text += buffer;
  const int status = pclose(pipe);
  return {text, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// Saves an untrained network of the game's default shape to a temporary file; its path.
std::string SaveUntrainedNetwork(const std::string& game, const std::string& name) {
  const games::GameInfo* info = *games::FindGame(game);
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kCpu;
  runtime.input_layout = nn::ToInputLayout(info->input.layout);
  auto network = nn::Network::Create({nn::DefaultNetConfig(*info), runtime});
  AZ_CHECK(network.ok(), network.status().ToString());
  const std::string path = TempPath(name);
  AZ_CHECK((*network)->SaveWeights(path, 1).ok());
  return path;
}

// A small Connect Four set in late plies, where solving is quick.
GenerateOptions TinyConnectFour() {
  return {.game = "connect4", .positions = 12, .bands = {{20, 24}, {25, 30}}, .strong_from = 18};
}

TEST(ScoreTest, TicTacToeScoresEveryReachablePosition) {
  Result<ScoreReport> first = ScoreModel({.game = "tictactoe"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // 5,478 reachable positions, 958 of them over: 4,520 with a move to play.
  EXPECT_EQ(first->positions, 4520);
  int banded = 0;
  for (const BandScore& band : first->bands) banded += band.positions;
  EXPECT_EQ(banded, first->positions);
  // Split by the solver's value for the side to move: every lost position is trivial (each move
  // loses), so a value-keeping share means something only for wins and draws.
  ASSERT_EQ(first->values.size(), 3u);
  EXPECT_EQ(first->values[0].value, "win");
  EXPECT_EQ(first->values[1].value, "draw");
  EXPECT_EQ(first->values[2].value, "loss");
  EXPECT_EQ(first->values[2].trivial, first->values[2].positions);
  EXPECT_EQ(first->values[2].kept, first->values[2].positions);
  int valued = 0;
  for (const ValueScore& value : first->values) valued += value.positions;
  EXPECT_EQ(valued, first->positions);
  EXPECT_GT(first->kept, first->trivial);
  EXPECT_LT(first->kept, first->positions);  // the first legal move is often a mistake
  // A uniform search with enough playouts finds the wins and blocks the threats.
  Result<ScoreReport> searched = ScoreModel({.game = "tictactoe", .simulations = 400});
  ASSERT_TRUE(searched.ok());
  EXPECT_GT(searched->share(), first->share() + 0.1);
  // So does self-play's Gumbel root, without its noise; it needs playouts and a positive scale.
  Result<ScoreReport> gumbel =
      ScoreModel({.game = "tictactoe", .simulations = 64, .gumbel = true, .gumbel_c_scale = 1.0f});
  ASSERT_TRUE(gumbel.ok()) << gumbel.status().ToString();
  EXPECT_TRUE(gumbel->gumbel);
  EXPECT_GT(gumbel->share(), first->share() + 0.1);
  EXPECT_EQ(
      ScoreModel({.game = "tictactoe", .gumbel = true, .gumbel_c_scale = 1.0f}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(ScoreModel({.game = "tictactoe", .simulations = 8, .gumbel = true, .gumbel_c_scale = 0})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  // PUCT's constant reaches the search and the report: a uniform search that explores far less
  // than the default keeps the value in other positions; a constant out of (0, 100] is refused.
  EXPECT_FLOAT_EQ(searched->c_puct, 1.5f);
  Result<ScoreReport> greedy =
      ScoreModel({.game = "tictactoe", .simulations = 400, .c_puct = 0.01f});
  ASSERT_TRUE(greedy.ok()) << greedy.status().ToString();
  EXPECT_FLOAT_EQ(greedy->c_puct, 0.01f);
  EXPECT_NE(greedy->kept, searched->kept);
  for (const float bad : {0.0f, -1.0f, 1000.0f}) {
    EXPECT_EQ(ScoreModel({.game = "tictactoe", .simulations = 8, .c_puct = bad}).status().code(),
              StatusCode::kInvalidArgument)
        << bad;
  }
}

TEST(ScoreTest, ConnectFourScoresRandomPositionsInTheirPlies) {
  Result<ScoreReport> report =
      ScoreModel({.game = "connect4", .positions = 40, .min_ply = 24, .max_ply = 30});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->positions, 40);
  for (const BandScore& band : report->bands) {
    if (band.positions > 0) {
      EXPECT_GE(band.max_ply, 24);
    }
  }
  // The same seed gives the same set, so runs compare.
  Result<ScoreReport> again =
      ScoreModel({.game = "connect4", .positions = 40, .min_ply = 24, .max_ply = 30});
  EXPECT_EQ(again->kept, report->kept);
  EXPECT_EQ(again->trivial, report->trivial);
}

TEST(ScoreTest, LoadsANetworkOfTheGameAndRefusesTheRest) {
  const std::string path = SaveUntrainedNetwork("tictactoe", "ttt");
  Result<ScoreReport> raw = ScoreModel({.game = "tictactoe", .model = path});
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->positions, 4520);
  EXPECT_EQ(ScoreModel({.game = "connect4", .model = path}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ScoreModel({.game = "chess"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ScoreModel({.game = "tictactoe", .model = "/nonexistent"}).status().code(),
            StatusCode::kNotFound);

  // The binary: JSON with the same figures.
  const std::string command =
      std::string(AZ_BINARY_DIR) + "/bin/az-score --game tictactoe --json --model " + path;
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

TEST(ScoreTest, ShippedConnectFourSetsLoadAndAgreeWithTheSolver) {
  struct Shipped {
    std::string name;
    int positions;
    int stride;  // every stride-th position is solved again here
  };
  // The full set (1,500 positions) is still being generated: only the small one ships so far.
  for (const Shipped& shipped : {Shipped{"small", 300, 30}}) {
    SCOPED_TRACE(shipped.name);
    Result<PositionSet> set = ReadPositionSet(ShippedSetPath("connect4", shipped.name));
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    EXPECT_EQ(set->game, "connect4");
    EXPECT_FALSE(set->trivial_included);
    ASSERT_EQ(static_cast<int>(set->positions.size()), shipped.positions);
    ASSERT_EQ(set->bands, (std::vector<PlyBand>{{8, 11}, {12, 19}, {20, 30}}));
    // Every band and source holds its share: a ninth each, give or take one.
    int group[3][kSources] = {};
    for (const StoredPosition& p : set->positions) ++group[p.band][p.source];
    for (const auto& band : group) {
      for (int count : band) EXPECT_NEAR(count, shipped.positions / 9, 1);
    }
    games::ConnectFourSolver solver;
    for (std::size_t i = 0; i < set->positions.size();
         i += static_cast<std::size_t>(shipped.stride)) {
      const StoredPosition& p = set->positions[i];
      Result<games::ConnectFourPosition> position = games::ConnectFour::ParsePosition(p.moves);
      ASSERT_TRUE(position.ok());
      const auto values = solver.MoveValues(*position);
      for (int column = 0; column < games::kConnectFourWidth; ++column) {
        const int expected =
            values[static_cast<std::size_t>(column)] == games::ConnectFourSolver::kIllegal
                ? kUnplayable
                : values[static_cast<std::size_t>(column)];
        EXPECT_EQ(p.values[static_cast<std::size_t>(column)], expected)
            << p.moves << " column " << column + 1;
      }
    }
  }
}

TEST(ScoreTest, ConnectFourScoresTheShippedSmallSetByDefaultWithoutSolving) {
  Result<ScoreReport> report = ScoreModel({.game = "connect4"});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->set, ShippedSetPath("connect4", "small"));
  EXPECT_EQ(report->positions, 300);
  EXPECT_EQ(report->trivial, 0);  // the shipped sets exclude them
  ASSERT_EQ(report->bands.size(), 3u);
  ASSERT_EQ(report->sources.size(), 3u);
  int banded = 0;
  int sourced = 0;
  for (const BandScore& band : report->bands) banded += band.kept;
  for (const SourceScore& source : report->sources) sourced += source.kept;
  EXPECT_EQ(banded, report->kept);
  EXPECT_EQ(sourced, report->kept);
  // The onestep baseline wins and blocks where the first legal move does not.
  Result<ScoreReport> onestep = ScoreModel({.game = "connect4", .model = "onestep"});
  ASSERT_TRUE(onestep.ok());
  EXPECT_GT(onestep->kept, report->kept);

  // A network's raw policy on the small set: no solving, so well under a second of work.
  const std::string path = SaveUntrainedNetwork("connect4", "net");
  Result<ScoreReport> raw = ScoreModel({.game = "connect4", .model = path});
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->positions, 300);
  EXPECT_LT(raw->seconds, 5.0);  // about 0.1 s on this project's box; generous for loaded runners
  std::filesystem::remove(path);
}

TEST(ScoreTest, GeneratedSetsAreDeterministicAndReadBack) {
  Result<PositionSet> set = GeneratePositionSet(TinyConnectFour());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->positions.size(), 12u);
  Result<PositionSet> again = GeneratePositionSet(TinyConnectFour());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(FormatPositionSet(*set), FormatPositionSet(*again));
  for (int threads : {2, 7}) {  // groups (a band's positions from one source) made at once
    GenerateOptions threaded = TinyConnectFour();
    threaded.threads = threads;
    EXPECT_EQ(FormatPositionSet(*GeneratePositionSet(threaded)), FormatPositionSet(*set))
        << threads << " threads";
  }
  GenerateOptions other = TinyConnectFour();
  other.seed = 2;
  EXPECT_NE(FormatPositionSet(*GeneratePositionSet(other)), FormatPositionSet(*set));

  Result<PositionSet> read = ParsePositionSet(FormatPositionSet(*set), "tiny");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->positions, set->positions);
  EXPECT_EQ(read->bands, set->bands);
  EXPECT_EQ(read->seed, 1u);
  EXPECT_EQ(read->strong_from, 18);
  for (const StoredPosition& p : read->positions) {
    const PlyBand& band = read->bands[static_cast<std::size_t>(p.band)];
    EXPECT_GE(p.ply, band.min_ply);
    EXPECT_LE(p.ply, band.max_ply);
    EXPECT_EQ(p.values.size(), 7u);
  }

  // Any game with a solver: tic-tac-toe, trivial positions kept.
  Result<PositionSet> tictactoe = GeneratePositionSet({.game = "tictactoe",
                                                       .positions = 6,
                                                       .bands = {{2, 4}, {5, 6}},
                                                       .strong_from = 0,
                                                       .include_trivial = true});
  ASSERT_TRUE(tictactoe.ok()) << tictactoe.status().ToString();
  Result<PositionSet> tictactoe_read = ParsePositionSet(FormatPositionSet(*tictactoe), "ttt");
  ASSERT_TRUE(tictactoe_read.ok()) << tictactoe_read.status().ToString();
  EXPECT_TRUE(tictactoe_read->trivial_included);
  EXPECT_EQ(tictactoe_read->positions, tictactoe->positions);

  // Few positions to reach (tic-tac-toe after two or three plies): the sources of a band reach the
  // same ones, and the merge replaces a later source's copy, the same way on any thread count.
  const GenerateOptions crowded = {.game = "tictactoe",
                                   .positions = 24,
                                   .bands = {{2, 3}},
                                   .strong_from = 1,
                                   .include_trivial = true};
  Result<PositionSet> crowded_set = GeneratePositionSet(crowded);
  ASSERT_TRUE(crowded_set.ok()) << crowded_set.status().ToString();
  ASSERT_EQ(crowded_set->positions.size(), 24u);
  std::set<std::pair<int, int>> distinct;  // the marks of the side to move and of the other
  for (const StoredPosition& p : crowded_set->positions) {
    Result<games::TicTacToePosition> position = games::TicTacToe::ParsePosition(p.moves);
    ASSERT_TRUE(position.ok()) << p.moves;
    distinct.insert({position->ToRecord().own, position->ToRecord().opponent});
  }
  EXPECT_EQ(distinct.size(), 24u);
  GenerateOptions crowded_threaded = crowded;
  crowded_threaded.threads = 3;
  EXPECT_EQ(FormatPositionSet(*GeneratePositionSet(crowded_threaded)),
            FormatPositionSet(*crowded_set));

  EXPECT_EQ(GeneratePositionSet({.game = "chess"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GeneratePositionSet({.game = "connect4", .bands = {{12, 19}, {8, 11}}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ScoreTest, UniformModelOnATinySetPlaysTheFirstLegalMove) {
  Result<PositionSet> set = GeneratePositionSet(TinyConnectFour());
  ASSERT_TRUE(set.ok());
  const std::string path = TempPath("tiny");
  ASSERT_TRUE(WritePositionSet(*set, path).ok());
  // The expected figures, straight from the stored values: the first playable column's value
  // against the best.
  int kept = 0;
  int band_kept[2] = {};
  int source_kept[kSources] = {};
  std::map<std::string, std::pair<int, int>> by_value;  // value: positions, kept
  for (const StoredPosition& p : set->positions) {
    const int best = *std::max_element(p.values.begin(), p.values.end());
    const int first =
        *std::find_if(p.values.begin(), p.values.end(), [](int v) { return v != kUnplayable; });
    kept += first == best;
    band_kept[p.band] += first == best;
    source_kept[p.source] += first == best;
    auto& [value_positions, value_kept] = by_value[std::string(kValueNames[1 - best])];
    ++value_positions;
    value_kept += first == best;
  }
  Result<ScoreReport> report = ScoreModel({.game = "connect4", .positions_file = path});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->set, path);
  EXPECT_EQ(report->positions, 12);
  EXPECT_EQ(report->kept, kept);
  EXPECT_EQ(report->trivial, 0);
  EXPECT_DOUBLE_EQ(report->nontrivial_share(), report->share());
  ASSERT_EQ(report->bands.size(), 2u);
  for (int b = 0; b < 2; ++b) {
    EXPECT_EQ(report->bands[b].positions, 6);
    EXPECT_EQ(report->bands[b].kept, band_kept[b]);
  }
  ASSERT_EQ(report->sources.size(), 3u);
  for (int s = 0; s < kSources; ++s) {
    EXPECT_EQ(report->sources[s].source, kSourceNames[s]);
    EXPECT_EQ(report->sources[s].positions, 4);
    EXPECT_EQ(report->sources[s].kept, source_kept[s]);
  }
  // One entry per value the set holds, win before draw.
  ASSERT_EQ(report->values.size(), by_value.size());
  for (const ValueScore& value : report->values) {
    EXPECT_EQ(value.positions, by_value[value.value].first) << value.value;
    EXPECT_EQ(value.kept, by_value[value.value].second) << value.value;
  }
  EXPECT_EQ(report->values.front().value, "win");
  // Search finds more of the value-keeping moves than the first legal move does.
  Result<ScoreReport> searched =
      ScoreModel({.game = "connect4", .simulations = 400, .positions_file = path});
  ASSERT_TRUE(searched.ok());
  EXPECT_GE(searched->kept, report->kept);

  // Options that conflict, and sets that cannot be used.
  EXPECT_EQ(
      ScoreModel({.game = "connect4", .positions_file = path, .positions = 10}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ScoreModel({.game = "connect4", .positions_file = path, .set = "small"}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(ScoreModel({.game = "connect4", .model = "onestep", .simulations = 8}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ScoreModel({.game = "tictactoe", .positions_file = path}).status().code(),
            StatusCode::kInvalidArgument);  // a Connect Four set
  EXPECT_EQ(ScoreModel({.game = "connect4", .positions_file = path + ".missing"}).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ScoreModel({.game = "connect4", .set = "nonexistent"}).status().code(),
            StatusCode::kNotFound);
  std::filesystem::remove(path);
}

// --one-ply-value values every move's resulting position with the network, and a move that ends
// the game exactly: so a win in one is taken whatever an untrained network believes.
TEST(ScoreTest, OnePlyValueTakesEveryWinInOneWithAnUntrainedNetwork) {
  // Positions from seeded random play at plies 14-24 where the side to move can win at once, with
  // the solver's value of every column.
  games::ConnectFourSolver solver(18);
  std::string text =
      "az-score-positions 1 game=connect4 positions=24 seed=1 strong-from=8 trivial=excluded "
      "bands=14-24\n";
  std::uint64_t seed = 7;
  int found = 0;
  while (found < 24) {
    games::ConnectFourPosition position;
    std::string moves;
    const int plies = 14 + static_cast<int>((seed >> 40) % 11);
    for (int tries = 0; position.moves_played() < plies && tries < 1000; ++tries) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const int column = static_cast<int>((seed >> 33) % 7);
      if (!position.CanPlay(column) || position.IsWinningMove(column)) continue;
      position.Play(column);
      moves += static_cast<char>('1' + column);
    }
    if (position.moves_played() < plies) continue;
    bool wins = false;
    for (int c = 0; c < 7; ++c) wins = wins || (position.CanPlay(c) && position.IsWinningMove(c));
    const std::array<int, 7> values = solver.MoveValues(position);
    const bool trivial = *std::min_element(values.begin(), values.end(), [](int a, int b) {
      return (a == games::ConnectFourSolver::kIllegal ? 2 : a) <
             (b == games::ConnectFourSolver::kIllegal ? 2 : b);
    }) == 1;
    if (!wins || trivial) continue;
    text += moves + " band=14-24 source=random values=";
    for (int c = 0; c < 7; ++c) {
      if (c > 0) text += ",";
      text += values[c] == games::ConnectFourSolver::kIllegal ? "x" : std::to_string(values[c]);
    }
    text += "\n";
    ++found;
  }
  const std::string set_path = TempPath("wins_in_one");
  std::ofstream(set_path) << text;

  const std::string model = SaveUntrainedNetwork("connect4", "c4_model");

  Result<ScoreReport> value = ScoreModel(
      {.game = "connect4", .model = model, .one_ply_value = true, .positions_file = set_path});
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_EQ(value->positions, 24);
  EXPECT_EQ(value->kept, 24);
  EXPECT_TRUE(value->one_ply_value);
  Result<ScoreReport> raw =
      ScoreModel({.game = "connect4", .model = model, .positions_file = set_path});
  ASSERT_TRUE(raw.ok());
  EXPECT_FALSE(raw->one_ply_value);

  // It needs a network and no search.
  for (const ScoreOptions& bad :
       {ScoreOptions{.game = "connect4", .model = model, .simulations = 8, .one_ply_value = true},
        ScoreOptions{.game = "connect4", .model = "uniform", .one_ply_value = true},
        ScoreOptions{.game = "connect4", .model = "onestep", .one_ply_value = true}}) {
    EXPECT_EQ(ScoreModel(bad).status().code(), StatusCode::kInvalidArgument);
  }

  // The binary says which chooser it scored, in text and in JSON.
  const std::string binary = std::string(AZ_BINARY_DIR) + "/bin/az-score --game connect4 --model " +
                             model + " --positions-file " + set_path + " --one-ply-value";
  const auto [line, code] = RunCommand(binary);
  EXPECT_EQ(code, 0) << line;
  EXPECT_EQ(line.rfind("score connect4 one-ply-value positions 24 kept 24 (100.0%)", 0), 0u)
      << line;
  const auto [json_text, json_code] = RunCommand(binary + " --json");
  ASSERT_EQ(json_code, 0) << json_text;
  const nlohmann::json json = nlohmann::json::parse(json_text);
  EXPECT_EQ(json["one_ply_value"], true);
  EXPECT_EQ(json["kept"], 24);
  std::filesystem::remove(set_path);
  std::filesystem::remove(model);
}

TEST(ScoreTest, MalformedSetsAreRefusedNamingTheLine) {
  const std::string header =
      "az-score-positions 1 game=connect4 positions=2 seed=1 strong-from=8 trivial=excluded "
      "bands=20-24,25-30\n";
  const std::string good1 =
      "1576237261421265614141 band=20-24 source=random values=x,1,-1,1,-1,1,-1\n";
  const std::string good2 =
      "46324676746444617113211771 band=25-30 source=mixed values=x,1,-1,x,1,1,1\n";
  ASSERT_TRUE(ParsePositionSet(header + "# a comment\n" + good1 + "\n" + good2, "f").ok());
  struct Case {
    std::string text;
    std::string error;  // a part of the message
  };
  const std::string two = header + good1;  // then line 3
  const Case cases[] = {
      {"", "f:1: not an az-score position set"},
      {"az-score-positions 2 game=connect4\n", "f:1: version 2; this az-score reads version 1"},
      {"az-score-positions 1 game=connect4 positions=0 seed=1 strong-from=8 trivial=excluded\n",
       "f:1: the header has no 'bands='"},
      {"az-score-positions 1 game=connect4 positions=0 seed=1 strong-from=8 trivial=excluded "
       "bands=1-2 colour=red\n",
       "f:1: unknown header field 'colour=red'"},
      {"az-score-positions 1 game=chess positions=0 seed=1 strong-from=8 trivial=excluded "
       "bands=1-2\n",
       "f:1: game chess has no solver"},
      {header + good1, "f:1: the header says 2 positions, the file has 1"},
      {two + "46324676746444617113211771 band=25-30 source=mixed\n", "f:3: expected '<moves>"},
      {two + "4632467674644461711321177 band=25-30 source=mixed values=x,1,-1,x,1,1,1\n",
       "f:3: value 1 ('x'): the action is playable"},
      {two + "46324676746444617113211771 band=25-30 source=mixed values=x,1,-1,x,1,1\n",
       "f:3: 6 values, connect4 has 7 actions"},
      {two + "46324676746444617113211771 band=25-30 source=mixed values=x,1,-1,x,1,1,2\n",
       "f:3: value 7 ('2'): values are 1, 0, -1 or x"},
      {two + "46324676746444617113211771 band=25-30 source=great values=x,1,-1,x,1,1,1\n",
       "f:3: source 'great' is not random, strong or mixed"},
      {two + "46324676746444617113211771 band=20-24 source=mixed values=x,1,-1,x,1,1,1\n",
       "f:3: position '46324676746444617113211771' has 26 plies, outside its band 20-24"},
      {two + "46324676746444617113211771 band=8-11 source=mixed values=x,1,-1,x,1,1,1\n",
       "f:3: band 8-11 is not in the header"},
      {two + "4632467674644461711321177a band=25-30 source=mixed values=x,1,-1,x,1,1,1\n",
       "f:3: position '4632467674644461711321177a'"},
      {two + "1576237261421265614141 band=20-24 source=random values=x,1,-1,1,-1,1,-1\n",
       "f:3: position '1576237261421265614141' is in the set twice"},
      {two + "46324676746444617113211771 band=25-30 source=mixed values=x,1,1,x,1,1,1\n",
       "f:3: position '46324676746444617113211771' is trivial"},
  };
  for (const Case& c : cases) {
    Result<PositionSet> set = ParsePositionSet(c.text, "f");
    ASSERT_FALSE(set.ok()) << c.text;
    EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(set.status().message().find(c.error), std::string::npos)
        << set.status().message() << "\n  wanted: " << c.error;
  }
  // The game over is refused too: four in a column.
  Result<PositionSet> over = ParsePositionSet(
      header + good1 + "1212121 band=25-30 source=random values=x,x,x,x,x,x,x\n", "f");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("f:3:"), std::string::npos) << over.status().message();
}

TEST(ScoreTest, BinaryGeneratesAndScoresASetAsJson) {
  const std::string bin = std::string(AZ_BINARY_DIR) + "/bin/az-score";
  const std::string path = TempPath("bin");
  auto [written, code] = RunCommand(bin + " --game connect4 --generate " + path +
                                    " --positions 9 --bands 22-26 --strong-from 20 --seed 3");
  ASSERT_EQ(code, 0) << written;
  EXPECT_NE(written.find("wrote 9 positions to " + path), std::string::npos) << written;

  auto [text, json_code] = RunCommand(bin + " --game connect4 --json --positions-file " + path);
  ASSERT_EQ(json_code, 0) << text;
  const nlohmann::json json = nlohmann::json::parse(text);
  EXPECT_EQ(json["game"], "connect4");
  EXPECT_EQ(json["model"], "uniform");
  EXPECT_EQ(json["simulations"], 0);
  EXPECT_FALSE(json.contains("c_puct"));  // a search's constant, without a search
  EXPECT_EQ(json["set"], path);
  EXPECT_EQ(json["positions"], 9);
  EXPECT_EQ(json["trivial"], 0);
  EXPECT_DOUBLE_EQ(json["share"].get<double>(), json["kept"].get<double>() / 9);
  EXPECT_DOUBLE_EQ(json["nontrivial_share"].get<double>(), json["share"].get<double>());
  EXPECT_TRUE(json["seconds"].is_number());
  ASSERT_EQ(json["bands"].size(), 1u);
  EXPECT_EQ(json["bands"][0]["min_ply"], 22);
  EXPECT_EQ(json["bands"][0]["max_ply"], 26);
  EXPECT_EQ(json["bands"][0]["positions"], 9);
  EXPECT_EQ(json["bands"][0]["kept"], json["kept"]);
  for (const char* field : {"trivial", "share", "nontrivial_share"}) {
    EXPECT_TRUE(json["bands"][0].contains(field)) << field;
  }
  ASSERT_EQ(json["sources"].size(), 3u);
  EXPECT_EQ(json["sources"][0]["source"], "random");
  EXPECT_EQ(json["sources"][1]["source"], "strong");
  EXPECT_EQ(json["sources"][2]["source"], "mixed");
  for (const auto& source : json["sources"]) EXPECT_EQ(source["positions"], 3);
  int valued = 0;
  for (const auto& value : json["values"]) {
    EXPECT_TRUE(value["value"] == "win" || value["value"] == "draw") << value;
    EXPECT_TRUE(value.contains("nontrivial_share")) << value;
    valued += value["positions"].get<int>();
  }
  EXPECT_EQ(valued, 9);

  // The text form names the set; a malformed set is exit 2 naming its line.
  auto [report, report_code] = RunCommand(bin + " --game connect4 --positions-file " + path);
  EXPECT_EQ(report_code, 0);
  EXPECT_EQ(report.rfind("score connect4 positions 9 kept ", 0), 0u) << report;
  {
    std::ofstream out(path, std::ios::app);
    out << "44 band=22-26 source=random values=0,0,0,0,0,0,0\n";
  }
  auto [refused, refused_code] = RunCommand(bin + " --game connect4 --positions-file " + path);
  EXPECT_EQ(refused_code, 2);
  EXPECT_NE(refused.find(path + ":"), std::string::npos) << refused;
  EXPECT_NE(refused.find("outside its band"), std::string::npos) << refused;
  std::filesystem::remove(path);
}

TEST(ScoreTest, TacticsBreakdownSplitsAzScoresShareByKindOfPosition) {
  // scripts/connect4-tactics (docs/learning.md) must count exactly what az-score counts, only
  // split: its total equals az-score's on the shipped set, the kinds partition the positions, and
  // every win-in-1 it finds is a won position in the set (the script refuses the set otherwise).
  const std::string bin = std::string(AZ_BINARY_DIR) + "/bin/az-score";
  auto [score_text, score_code] = RunCommand(bin + " --game connect4 --json");
  ASSERT_EQ(score_code, 0) << score_text;
  const nlohmann::json score = nlohmann::json::parse(score_text);

  auto [text, code] = RunCommand(std::string(AZ_SOURCE_DIR) + "/scripts/connect4-tactics --build " +
                                 AZ_BINARY_DIR + " --model uniform --json");
  ASSERT_EQ(code, 0) << text;
  const nlohmann::json rows = nlohmann::json::parse(text);
  int kinds_total = 0;
  int kinds_kept = 0;
  bool saw_all = false;
  for (const auto& row : rows) {
    EXPECT_LE(row["kept"].get<int>(), row["positions"].get<int>());
    if (row["kind"] == "all") {
      saw_all = true;
      EXPECT_EQ(row["positions"], score["positions"]);
      EXPECT_EQ(row["kept"], score["kept"]);
    } else if (row["source"] == "all") {
      EXPECT_TRUE(row["kind"] == "win-in-1" || row["kind"] == "must-block" ||
                  row["kind"] == "quiet")
          << row;
      EXPECT_GT(row["positions"].get<int>(), 0) << row;
      kinds_total += row["positions"].get<int>();
      kinds_kept += row["kept"].get<int>();
    }
  }
  EXPECT_TRUE(saw_all);
  EXPECT_EQ(kinds_total, score["positions"].get<int>());
  EXPECT_EQ(kinds_kept, score["kept"].get<int>());

  // A model file that is not there is an error, not an empty table.
  auto [missing, missing_code] =
      RunCommand(std::string(AZ_SOURCE_DIR) + "/scripts/connect4-tactics --build " + AZ_BINARY_DIR +
                 " --model /nonexistent.azw");
  EXPECT_NE(missing_code, 0);
  EXPECT_NE(missing.find("az-analyse failed"), std::string::npos) << missing;
}

}  // namespace
}  // namespace az::score
