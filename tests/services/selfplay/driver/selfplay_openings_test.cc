// The self-play driver's openings and adjudication, in process over the fake evaluator and sink:
// random opening plies make games differ and are not recorded; a book's positions start the games;
// resignation ends a game after K plies below the threshold with z -1 for the loser; playthrough
// games are never adjudicated and count the false positives; draw adjudication; branched games.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "services/selfplay/driver/selfplay_engine.h"
#include "services/selfplay/selfplay_game.h"
#include "tests/services/selfplay/driver/fake_evaluator.h"
#include "tests/services/selfplay/driver/fake_sample_sink.h"

namespace az::selfplay {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeEvaluator;
using testing::FakeSampleSink;
using ::testing::HasSubstr;

using C4 = SelfPlayGame<games::ConnectFour>;
using C4Sample = C4::Sample;
using ChessGame = SelfPlayGame<games::Chess>;
using ChessSample = ChessGame::Sample;

EngineOptions ConnectFourOptions() {
  EngineOptions o;
  o.games = 4;
  o.groups = 2;
  o.simulations = 8;
  o.max_games = 6;
  o.max_plies = C4::kDefaults.max_plies;
  o.search.dirichlet_alpha = C4::kDefaults.dirichlet_alpha;
  o.search.seed = 17;
  // The adjudication tests steer the games by the fake evaluator's values alone ("the first
  // player loses"); the search's one-move lookahead and its proofs would let real wins override
  // them.
  o.search.detect_terminal_children = false;
  o.search.propagate_proofs = false;
  o.temperature.moves = C4::kDefaults.temperature_plies;
  o.eval_timeout = seconds(30);
  o.push_timeout = milliseconds(100);
  return o;
}

EngineOptions ChessOptions() {
  EngineOptions o = ConnectFourOptions();
  o.simulations = 4;
  o.max_games = 8;
  o.max_plies = 14;
  o.search.dirichlet_alpha = ChessGame::kDefaults.dirichlet_alpha;
  o.temperature.moves = ChessGame::kDefaults.temperature_plies;
  return o;
}

template <typename Sample>
struct Rig {
  FakeEvaluator* evaluator = nullptr;
  FakeSampleSink<Sample>* sink = nullptr;
  std::unique_ptr<SelfPlayEngine> engine;
  std::shared_ptr<std::vector<int>> finished = std::make_shared<std::vector<int>>();
};

template <typename Sample>
Result<Rig<Sample>> TryMakeRig(service::GameKind game, const EngineOptions& options,
                               FakeEvaluator::WdlFunction wdl = nullptr) {
  Rig<Sample> rig;
  auto evaluator = std::make_unique<FakeEvaluator>(7);
  evaluator->SetWdlFunction(std::move(wdl));
  auto sink = std::make_unique<FakeSampleSink<Sample>>();
  rig.evaluator = evaluator.get();
  rig.sink = sink.get();
  EngineObserver observer;
  observer.game_finished = [finished = rig.finished](int plies, GameResultKind) {
    finished->push_back(plies);
  };
  AZ_ASSIGN_OR_RETURN(rig.engine, CreateSelfPlayEngine(game, options, std::move(evaluator),
                                                       std::move(sink), observer));
  return rig;
}

template <typename Sample>
Rig<Sample> MakeRig(service::GameKind game, const EngineOptions& options,
                    FakeEvaluator::WdlFunction wdl = nullptr) {
  Result<Rig<Sample>> rig = TryMakeRig<Sample>(game, options, std::move(wdl));
  AZ_CHECK(rig.ok(), rig.status().ToString());
  return std::move(rig).value();
}

Status RunToEnd(SelfPlayEngine& engine) {
  while (!engine.Done()) AZ_RETURN_IF_ERROR(engine.Step());
  return Status::Ok();
}

// Each game's samples by ply; every sample valid.
template <typename Game>
std::map<std::uint64_t, std::vector<typename Game::Sample>> ByGame(
    const std::vector<typename Game::Sample>& samples) {
  std::map<std::uint64_t, std::vector<typename Game::Sample>> games;
  for (const auto& s : samples) {
    EXPECT_TRUE(Game::Validate(s).ok()) << Game::Validate(s).ToString();
    games[s.game_id].push_back(s);
  }
  for (auto& [id, game] : games) {
    std::sort(game.begin(), game.end(), [](const auto& a, const auto& b) { return a.ply < b.ply; });
  }
  return games;
}

// A network sure that the first player (to move on an empty Connect Four board) is lost: the
// side to move loses when the stone counts are equal, wins otherwise. Every root value is then
// -1 for the first player and +1 for the second.
std::array<float, 3> FirstPlayerLoses(std::span<const std::byte> bytes) {
  games::ConnectFourRecord record;
  AZ_CHECK(bytes.size() == sizeof(record));
  std::memcpy(&record, bytes.data(), sizeof(record));
  const bool first_to_move = std::popcount(record.own) == std::popcount(record.opponent);
  return first_to_move ? std::array<float, 3>{0.0f, 0.0f, 1.0f}
                       : std::array<float, 3>{1.0f, 0.0f, 0.0f};
}

TEST(SelfPlayOpeningsTest, RandomOpeningPliesGiveDifferentGamesAndAreNotRecorded) {
  EngineOptions o = ChessOptions();
  o.random_opening_plies_min = 4;
  o.random_opening_plies_max = 8;
  Rig<ChessSample> rig = MakeRig<ChessSample>(games::Chess::kId, o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const std::vector<ChessSample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.moves);  // one sample per searched move, none for random plies
  const auto games = ByGame<ChessGame>(samples);
  ASSERT_EQ(games.size(), 8u);
  std::uint64_t random_plies = 0;
  std::set<std::string> first_positions;
  std::multiset<int> lengths;
  for (const auto& [id, game] : games) {
    const std::uint32_t first = game.front().ply;
    EXPECT_GE(first, 4u) << "game " << id;
    EXPECT_LE(first, 8u) << "game " << id;
    for (std::size_t i = 0; i < game.size(); ++i) EXPECT_EQ(game[i].ply, first + i);
    random_plies += first;
    lengths.insert(static_cast<int>(game.back().ply) + 1);
    first_positions.insert(std::string(reinterpret_cast<const char*>(&game.front().position),
                                       sizeof(game.front().position)));
  }
  EXPECT_EQ(c.opening_plies, random_plies);
  EXPECT_EQ(first_positions.size(), games.size()) << "two games started from the same position";
  // The observer sees the whole game's length, random plies included.
  EXPECT_EQ(std::multiset<int>(rig.finished->begin(), rig.finished->end()), lengths);
}

TEST(SelfPlayOpeningsTest, RandomPliesFromTheRecordPlyAreSearchedAndRecordedOffPolicy) {
  EngineOptions o = ConnectFourOptions();
  o.max_games = 12;
  o.random_opening_plies_min = 4;
  o.random_opening_plies_max = 8;
  o.random_opening_record_from = 2;
  Rig<C4Sample> rig = MakeRig<C4Sample>(games::ConnectFour::kId, o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const std::vector<C4Sample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.moves);  // every searched move recorded, random ones included
  const auto games = ByGame<C4>(samples);
  ASSERT_EQ(games.size(), 12u);
  std::uint64_t random_plies = 0;
  std::uint64_t off_policy = 0;
  std::set<int> random_counts;
  for (const auto& [id, game] : games) {
    // The first two random plies are played unsearched; from ply 2 every position is recorded.
    EXPECT_EQ(game.front().ply, 2u) << "game " << id;
    for (std::size_t i = 0; i < game.size(); ++i) EXPECT_EQ(game[i].ply, 2 + i);
    // The random plies' samples come first, flagged; the search's own moves after them are not.
    std::size_t flagged = 0;
    while (flagged < game.size() && games::ConnectFour::SampleOffPolicy(game[flagged])) ++flagged;
    for (std::size_t i = flagged; i < game.size(); ++i) {
      EXPECT_FALSE(games::ConnectFour::SampleOffPolicy(game[i])) << "game " << id << " ply " << i;
    }
    EXPECT_GE(flagged, 2u) << "game " << id;  // 4-8 random plies, 2 of them unsearched
    EXPECT_LE(flagged, 6u) << "game " << id;
    random_counts.insert(static_cast<int>(flagged) + 2);
    random_plies += 2 + flagged;
    off_policy += flagged;
  }
  EXPECT_EQ(c.opening_plies, random_plies);
  EXPECT_EQ(c.opening_plies_recorded, off_policy);
  EXPECT_GT(random_counts.size(), 1u) << "every game drew the same number of random plies";

  // Left at -1, nothing random is searched: the first sample is where the random plies end.
  o.random_opening_record_from = -1;
  Rig<C4Sample> plain = MakeRig<C4Sample>(games::ConnectFour::kId, o);
  ASSERT_TRUE(RunToEnd(*plain.engine).ok());
  for (const auto& [id, game] : ByGame<C4>(plain.sink->Drain())) {
    EXPECT_GE(game.front().ply, 4u) << "game " << id;
    for (const C4Sample& s : game) EXPECT_FALSE(games::ConnectFour::SampleOffPolicy(s));
  }
  EXPECT_EQ(plain.engine->counters().opening_plies_recorded, 0u);
}

// Branched games: with branch_fraction 1 every game after the first ones (the pool is empty until
// a full search has played) starts one random ply away from a position some game recorded, and is
// counted; its samples are a game of its own from there. Out of [0, 1] is refused.
TEST(SelfPlayOpeningsTest, BranchedGamesStartOneRandomPlyFromARecordedPosition) {
  EngineOptions o = ConnectFourOptions();
  o.max_games = 40;
  o.branch_fraction = 1.0f;
  Rig<C4Sample> rig = MakeRig<C4Sample>(games::ConnectFour::kId, o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const std::vector<C4Sample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.moves);  // the branching ply is not recorded
  EXPECT_EQ(c.opening_plies, 0u);
  const auto games = ByGame<C4>(samples);
  ASSERT_EQ(games.size(), 40u);
  std::vector<games::ConnectFourRecord> recorded;
  for (const C4Sample& s : samples) recorded.push_back(s.position);
  // A record is the side to move's stones and the other side's: a ply later the mover's stones,
  // one more, are the opponent's.
  const auto one_ply_after = [](const games::ConnectFourRecord& parent,
                                const games::ConnectFourRecord& child) {
    return child.own == parent.opponent && (child.opponent & parent.own) == parent.own &&
           std::popcount(child.opponent ^ parent.own) == 1;
  };
  std::uint64_t branched = 0;
  for (const auto& [id, game] : games) {
    for (std::size_t i = 0; i < game.size(); ++i) EXPECT_EQ(game[i].ply, game.front().ply + i);
    if (game.front().ply == 0) continue;  // started from the empty board
    ++branched;
    // clang 14 cannot capture a structured binding: name the start position first.
    const games::ConnectFourRecord& start = game.front().position;
    EXPECT_TRUE(std::any_of(
        recorded.begin(), recorded.end(),
        [&](const games::ConnectFourRecord& parent) { return one_ply_after(parent, start); }))
        << "game " << id << " starts at ply " << game.front().ply
        << " one ply from no recorded position";
  }
  EXPECT_EQ(c.games_branched, branched);
  EXPECT_GE(branched, 30u);  // all but the first games' starts (and any with no random ply left)

  // Off (the default), no game branches.
  o.branch_fraction = 0.0f;
  Rig<C4Sample> plain = MakeRig<C4Sample>(games::ConnectFour::kId, o);
  ASSERT_TRUE(RunToEnd(*plain.engine).ok());
  EXPECT_EQ(plain.engine->counters().games_branched, 0u);
  for (const auto& [id, game] : ByGame<C4>(plain.sink->Drain())) {
    EXPECT_EQ(game.front().ply, 0u) << "game " << id;
  }

  o.branch_fraction = 1.5f;
  Result<Rig<C4Sample>> refused = TryMakeRig<C4Sample>(games::ConnectFour::kId, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("branch fraction"));
}

// Recorded random plies are searched, but random moves follow them: their root values must not
// resign a game (with resignation on, a run of 2026-12-02 counted 3.9% false positives where a
// run without recorded random plies counted 0.01%).
TEST(SelfPlayOpeningsTest, RecordedRandomPliesAreNotAdjudicated) {
  EngineOptions o = ConnectFourOptions();
  o.random_opening_plies_min = 6;
  o.random_opening_plies_max = 6;
  o.random_opening_record_from = 0;
  o.adjudication = {.resign_value = 0.9f, .resign_plies = 4};
  Rig<C4Sample> rig = MakeRig<C4Sample>(games::ConnectFour::kId, o, FirstPlayerLoses);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(c.resignations, 6u);
  EXPECT_EQ(c.results[1], 6u);
  EXPECT_EQ(c.opening_plies_recorded, 36u);
  // Every root is below the threshold for the first player, but the count starts after the six
  // random plies: plies 6-9, so the first player resigns at ply 9 (as at ply 3 without random
  // plies), and plies 0-8 are recorded, the random ones flagged.
  const auto games = ByGame<C4>(rig.sink->Drain());
  ASSERT_EQ(games.size(), 6u);
  for (const auto& [id, game] : games) {
    ASSERT_EQ(game.size(), 9u) << "game " << id;
    for (std::size_t i = 0; i < game.size(); ++i) {
      EXPECT_EQ(game[i].ply, i);
      EXPECT_EQ(games::ConnectFour::SampleOffPolicy(game[i]), i < 6)
          << "game " << id << " ply " << i;
      EXPECT_EQ(game[i].z, i % 2 == 0 ? -1.0f : 1.0f) << "game " << id << " ply " << i;
    }
  }
  EXPECT_EQ(*rig.finished, std::vector<int>(6, 9));
}

TEST(SelfPlayOpeningsTest, GamesStartFromTheBooksPositions) {
  EngineOptions o = ChessOptions();
  Result<OpeningBook> book = ParseOpeningBook(
      "startpos moves e2e4 c7c5 g1f3 d7d6  # Sicilian\n"
      "startpos moves d2d4 g8f6 c2c4 e7e6 b1c3\n",
      "book.txt");
  ASSERT_TRUE(book.ok());
  o.opening_book = *book;
  Result<std::vector<games::Chess::State>> starts = OpeningPositions<games::Chess>(*book);
  ASSERT_TRUE(starts.ok());
  Rig<ChessSample> rig = MakeRig<ChessSample>(games::Chess::kId, o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  std::set<std::uint32_t> first_plies;
  for (const auto& [id, game] : ByGame<ChessGame>(rig.sink->Drain())) {
    const ChessSample& first = game.front();
    first_plies.insert(first.ply);
    const encoding::PositionRecord expected =
        games::Chess::ToRecord((*starts)[first.ply == 4 ? 0 : 1]);
    EXPECT_EQ(std::memcmp(&first.position, &expected, sizeof(expected)), 0) << "game " << id;
    EXPECT_EQ(game.back().ply, 13u);  // cut at 14 plies, counted from the start position
  }
  EXPECT_EQ(first_plies, (std::set<std::uint32_t>{4, 5}));
  EXPECT_EQ(rig.engine->counters().opening_plies, 0u);

  // A book the game cannot read is refused, naming the line.
  o.opening_book = *ParseOpeningBook("startpos\nstartpos moves e2e4 e2e4\n", "book.txt");
  Result<Rig<ChessSample>> refused = TryMakeRig<ChessSample>(games::Chess::kId, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("book.txt:2: "));
}

TEST(SelfPlayOpeningsTest, OpeningOptionsOutOfRangeAreRefused) {
  EngineOptions o = ChessOptions();
  o.random_opening_plies_max = o.max_plies;  // nothing left to play
  Result<Rig<ChessSample>> rig = TryMakeRig<ChessSample>(games::Chess::kId, o);
  EXPECT_EQ(rig.status().code(), StatusCode::kInvalidArgument);
  o = ChessOptions();
  o.random_opening_plies_min = 3;
  o.random_opening_plies_max = 2;
  EXPECT_EQ(TryMakeRig<ChessSample>(games::Chess::kId, o).status().code(),
            StatusCode::kInvalidArgument);
  o = ChessOptions();
  o.adjudication.resign_value = 2.0f;
  EXPECT_EQ(TryMakeRig<ChessSample>(games::Chess::kId, o).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SelfPlayAdjudicationTest, ResignationFiresAfterKPliesAndTheLoserGetsMinusOne) {
  EngineOptions o = ConnectFourOptions();
  o.adjudication = {.resign_value = 0.9f, .resign_plies = 4};
  Rig<C4Sample> rig = MakeRig<C4Sample>(games::ConnectFour::kId, o, FirstPlayerLoses);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(c.games_finished, 6u);
  EXPECT_EQ(c.resignations, 6u);
  EXPECT_EQ(c.results[1], 6u);  // the second player won every game
  EXPECT_EQ(c.playthrough_games, 0u);
  // Plies 0-3 are below the threshold for the first player: it resigns at ply 3, whose position
  // is not recorded; z is -1 on its plies, +1 on the winner's.
  const auto games = ByGame<C4>(rig.sink->Drain());
  ASSERT_EQ(games.size(), 6u);
  for (const auto& [id, game] : games) {
    ASSERT_EQ(game.size(), 3u) << "game " << id;
    EXPECT_EQ(game[0].z, -1.0f);
    EXPECT_EQ(game[1].z, 1.0f);
    EXPECT_EQ(game[2].z, -1.0f);
  }
  EXPECT_EQ(*rig.finished, std::vector<int>(6, 3));

  // One ply more to wait: one sample more.
  o.adjudication.resign_plies = 5;
  rig = MakeRig<C4Sample>(games::ConnectFour::kId, o, FirstPlayerLoses);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  for (const auto& [id, game] : ByGame<C4>(rig.sink->Drain())) {
    ASSERT_EQ(game.size(), 4u) << "game " << id;
    EXPECT_EQ(game[3].z, 1.0f);
  }
  EXPECT_EQ(rig.engine->counters().results[1], 6u);
}

TEST(SelfPlayAdjudicationTest, PlaythroughGamesAreNotResignedAndFalsePositivesAreCounted) {
  EngineOptions o = ConnectFourOptions();
  o.max_games = 16;
  o.adjudication = {.resign_value = 0.9f, .resign_plies = 4, .resign_playthrough_fraction = 0.5f};
  Rig<C4Sample> rig = MakeRig<C4Sample>(games::ConnectFour::kId, o, FirstPlayerLoses);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  ASSERT_EQ(c.games_finished, 16u);
  EXPECT_GT(c.resignations, 0u);
  EXPECT_GT(c.playthrough_games, 0u);
  EXPECT_EQ(c.resignations + c.playthrough_games, 16u);
  // Every playthrough game would have resigned (the values are the same in all games); a false
  // positive is one the first player did not lose, and only playthrough games can end so.
  EXPECT_EQ(c.playthrough_would_resign, c.playthrough_games);
  EXPECT_EQ(c.resign_false_positives, c.results[0] + c.results[2]);
  EXPECT_EQ(c.results[1], c.resignations + (c.playthrough_games - c.resign_false_positives));
  // The playthrough games were played to their end: longer than the resigned ones.
  const auto games = ByGame<C4>(rig.sink->Drain());
  std::size_t played_out = 0;
  for (const auto& [id, game] : games) played_out += game.size() > 3 ? 1 : 0;
  EXPECT_EQ(played_out, c.playthrough_games);
}

TEST(SelfPlayAdjudicationTest, VerdictsAreWithheldUntilGamesPlayedOutShowThemReliable) {
  // The network is sure the first player loses, and it does in these games (the fake's values
  // are what both sides' searches see): once 4 games played to the end confirm it, resignations
  // are trusted and carried out.
  EngineOptions o = ConnectFourOptions();
  o.max_games = 24;
  o.games = 4;
  o.adjudication = {
      .resign_value = 0.9f, .resign_plies = 4, .max_false_positives = 0.05f, .min_evidence = 4};
  Rig<C4Sample> rig = MakeRig<C4Sample>(games::ConnectFour::kId, o, FirstPlayerLoses);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  ASSERT_EQ(c.games_finished, 24u);
  EXPECT_GE(c.resignations_withheld, 4u);
  EXPECT_EQ(c.playthrough_games, 0u);  // none drawn as playthrough: the withheld ones are evidence
  EXPECT_EQ(c.playthrough_would_resign, c.resignations_withheld);
  EXPECT_GT(c.resignations, 0u);
  EXPECT_EQ(c.resignations + c.resignations_withheld, 24u);
  EXPECT_EQ(c.resign_false_positives, 0u);  // trusted with 4 games of evidence: none wrong

  // A verdict that is never confirmed is never carried out: with no false positive allowed and
  // more evidence asked for than games played, every game is played out.
  o.adjudication.max_false_positives = 0.0f;
  o.adjudication.min_evidence = 1000;
  Rig<C4Sample> strict = MakeRig<C4Sample>(games::ConnectFour::kId, o, FirstPlayerLoses);
  ASSERT_TRUE(RunToEnd(*strict.engine).ok());
  EXPECT_EQ(strict.engine->counters().resignations, 0u);
  EXPECT_EQ(strict.engine->counters().resignations_withheld, 24u);
}

TEST(SelfPlayAdjudicationTest, LevelValuesFromTheMinimumPlyOnEndTheGameDrawn) {
  EngineOptions o = ConnectFourOptions();
  o.adjudication = {.draw_value = 0.05f, .draw_plies = 3, .draw_min_ply = 2};
  Rig<C4Sample> rig = MakeRig<C4Sample>(games::ConnectFour::kId, o);  // every value a draw
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(c.draw_adjudications, 6u);
  EXPECT_EQ(c.results[2], 6u);
  EXPECT_EQ(c.resignations, 0u);
  // Plies 2, 3 and 4 are level: the game ends at ply 4, plies 0-3 recorded, z 0.
  for (const auto& [id, game] : ByGame<C4>(rig.sink->Drain())) {
    ASSERT_EQ(game.size(), 4u) << "game " << id;
    for (const C4Sample& s : game) EXPECT_EQ(s.z, 0.0f);
  }

  // Played through, every game would have been drawn; the decided ones are false positives.
  o.adjudication.resign_playthrough_fraction = 1.0f;
  rig = MakeRig<C4Sample>(games::ConnectFour::kId, o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters p = rig.engine->counters();
  EXPECT_EQ(p.draw_adjudications, 0u);
  EXPECT_EQ(p.playthrough_games, 6u);
  EXPECT_EQ(p.playthrough_would_draw, 6u);
  EXPECT_EQ(p.draw_false_positives, p.results[0] + p.results[1]);
  EXPECT_EQ(p.playthrough_would_resign, 0u);
}

}  // namespace
}  // namespace az::selfplay
