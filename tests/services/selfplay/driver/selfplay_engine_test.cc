// The self-play driver in process: real games, real threads, a fake evaluator and a fake sample
// sink in place of the shared-memory channel and ring. Games finish with every sample delivered and
// valid; the engine recovers from an evaluator that never answers, drops stale and malformed
// answers, waits on a full sink, stops promptly and pauses cleanly.

#include "services/selfplay/driver/selfplay_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <vector>

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
using Clock = std::chrono::steady_clock;

using C4 = SelfPlayGame<games::ConnectFour>;
using C4Sample = C4::Sample;
using ChessGame = SelfPlayGame<games::Chess>;
using ChessSample = ChessGame::Sample;

constexpr std::uint64_t kModelVersion = 7;

// Four Connect Four games at once in two groups, few simulations: a game takes milliseconds.
EngineOptions SmallOptions() {
  EngineOptions o;
  o.games = 4;
  o.groups = 2;
  o.simulations = 8;
  o.max_games = 6;
  o.max_plies = C4::kDefaults.max_plies;
  o.search.dirichlet_alpha = C4::kDefaults.dirichlet_alpha;
  o.search.virtual_loss = mcts::VirtualLoss::kLoss;
  o.search.seed = 11;
  o.temperature.moves = C4::kDefaults.temperature_plies;
  o.eval_timeout = seconds(30);
  o.push_timeout = milliseconds(100);
  return o;
}

// An engine over fakes, which it owns; the test keeps pointers to drive and inspect them.
template <typename Sample = C4Sample>
struct Rig {
  FakeEvaluator* evaluator = nullptr;
  FakeSampleSink<Sample>* sink = nullptr;
  std::unique_ptr<SelfPlayEngine> engine;
  // Plies of every finished game, in order (the observer's view).
  std::shared_ptr<std::vector<int>> finished = std::make_shared<std::vector<int>>();
};

template <typename Sample = C4Sample>
Rig<Sample> MakeRig(const EngineOptions& options, std::size_t sink_capacity = 0,
                    service::GameKind game = games::ConnectFour::kId) {
  Rig<Sample> rig;
  auto evaluator = std::make_unique<FakeEvaluator>(kModelVersion);
  auto sink = std::make_unique<FakeSampleSink<Sample>>(sink_capacity);
  rig.evaluator = evaluator.get();
  rig.sink = sink.get();
  EngineObserver observer;
  observer.game_finished = [finished = rig.finished](int plies, GameResultKind) {
    finished->push_back(plies);  // the engine's thread only
  };
  Result<std::unique_ptr<SelfPlayEngine>> engine =
      CreateSelfPlayEngine(game, options, std::move(evaluator), std::move(sink), observer);
  AZ_CHECK(engine.ok(), engine.status().ToString());
  rig.engine = std::move(engine).value();
  return rig;
}

// Whether a Connect Four engine is created with these options.
bool Accepted(const EngineOptions& options) {
  return CreateSelfPlayEngine(games::ConnectFour::kId, options,
                              std::make_unique<FakeEvaluator>(kModelVersion),
                              std::make_unique<FakeSampleSink<C4Sample>>(0))
      .ok();
}

// Steps until Done or an error, on the calling thread.
Status RunToEnd(SelfPlayEngine& engine) {
  while (!engine.Done()) AZ_RETURN_IF_ERROR(engine.Step());
  return Status::Ok();
}

// Steps an engine on its own thread until Done or an error; stops and joins it when destroyed.
class Background {
 public:
  explicit Background(SelfPlayEngine& engine)
      : engine_(engine),
        result_(std::async(std::launch::async, [&engine] { return RunToEnd(engine); })) {}
  ~Background() {
    engine_.Stop();
    if (result_.valid()) result_.wait();
  }
  // The loop's status if it ended within `limit`.
  std::optional<Status> Wait(milliseconds limit) {
    if (!result_.valid()) return status_;
    if (result_.wait_for(limit) != std::future_status::ready) return std::nullopt;
    status_ = result_.get();
    return status_;
  }

 private:
  SelfPlayEngine& engine_;
  std::future<Status> result_;
  std::optional<Status> status_;
};

bool WaitUntil(const std::function<bool()>& condition, milliseconds limit = seconds(30)) {
  const Clock::time_point deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return condition();
}

// Checks what the driver promises of a finished game's samples: every sample valid (outcome set),
// one per ply from the first, z from the game's end for the side to move at each ply, the model
// version of the answers. Returns the number of games.
template <typename Game>
std::size_t ExpectCompleteGames(const std::vector<typename Game::Sample>& samples) {
  std::map<std::uint64_t, std::vector<typename Game::Sample>> games;
  for (const auto& s : samples) {
    EXPECT_TRUE(Game::Validate(s).ok()) << Game::Validate(s).ToString();
    EXPECT_EQ(s.model_version, kModelVersion);
    games[s.game_id].push_back(s);
  }
  for (auto& [id, game] : games) {
    std::sort(game.begin(), game.end(), [](const auto& a, const auto& b) { return a.ply < b.ply; });
    for (std::size_t i = 0; i < game.size(); ++i) {
      EXPECT_EQ(game[i].ply, i) << "game " << id;
    }
    // The last sample's side to move made the last move: it won (z +1) or it is a draw (all 0).
    const float last = game.back().z;
    EXPECT_TRUE(last == 1.0f || last == 0.0f) << "game " << id;
    for (std::size_t i = 0; i + 1 < game.size(); ++i) {
      EXPECT_EQ(game[i].z, -game[i + 1].z) << "game " << id << " ply " << i;
    }
  }
  return games.size();
}

// The per-game sample counts equal the plies the observer saw for the finished games.
template <typename Sample>
void ExpectGameLengths(const std::vector<Sample>& samples, std::vector<int> finished) {
  std::map<std::uint64_t, int> lengths;
  for (const Sample& s : samples) ++lengths[s.game_id];
  std::vector<int> got;
  for (const auto& [id, n] : lengths) got.push_back(n);
  std::sort(got.begin(), got.end());
  std::sort(finished.begin(), finished.end());
  EXPECT_EQ(got, finished);
}

TEST(SelfPlayEngineTest, GamesFinishAndEverySampleReachesTheSinkWithItsOutcome) {
  Rig rig = MakeRig(SmallOptions());
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());

  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(c.games_started, 6u);
  EXPECT_EQ(c.games_finished, 6u);
  EXPECT_EQ(c.results[0] + c.results[1] + c.results[2], 6u);
  EXPECT_EQ(c.games_in_progress, 0u);
  EXPECT_EQ(c.eval_timeouts + c.eval_errors + c.protocol_errors + c.samples_dropped, 0u);
  EXPECT_EQ(c.model_version, kModelVersion);

  const std::vector<C4Sample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.samples_pushed);
  EXPECT_EQ(samples.size(), c.moves);  // one sample a move, none lost
  EXPECT_EQ(ExpectCompleteGames<C4>(samples), 6u);
  for (const C4Sample& s : samples) EXPECT_TRUE(s.flags & sample::kConnectFourHasOutcome);
  ExpectGameLengths(samples, *rig.finished);

  // Every request was answered once, and every answer was backed up.
  const FakeEvaluator::Counts e = rig.evaluator->counts();
  EXPECT_EQ(e.submitted, c.requests_submitted);
  EXPECT_EQ(e.answered, e.submitted);
  EXPECT_EQ(c.leaves_evaluated, e.answered);
  EXPECT_GE(c.simulations, c.leaves_evaluated);  // each answer backed up one playout
}

TEST(SelfPlayEngineTest, PlayoutCapRandomisationRecordsOnlyTheFullSearches) {
  EngineOptions o = SmallOptions();
  o.max_games = 12;
  o.simulations = 16;
  o.fast_simulations = 4;
  o.full_search_fraction = 0.25f;
  Rig rig = MakeRig(o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const std::vector<C4Sample> samples = rig.sink->Drain();
  // Every full move is a sample, no fast one is; about a quarter of the moves are full.
  EXPECT_EQ(samples.size(), c.moves - c.fast_moves);
  EXPECT_EQ(samples.size(), c.samples_pushed);
  EXPECT_GT(c.fast_moves, c.moves / 2);
  EXPECT_LT(c.fast_moves, c.moves);
  // The recorded ones carry their game's outcome, valid, with the full search's policy: at least
  // two moves visited (root noise is on for them).
  for (const C4Sample& s : samples) {
    EXPECT_TRUE(C4::Validate(s).ok());
    EXPECT_TRUE(s.flags & sample::kConnectFourHasOutcome);
  }
  // Fewer playouts than every move searched fully: fast moves cost a quarter.
  EXPECT_LT(c.simulations, c.moves * 16);
}

TEST(SelfPlayEngineTest, PlayoutCapOptionsOutOfRangeAreRefused) {
  EngineOptions o = SmallOptions();
  o.full_search_fraction = 0.0f;
  EXPECT_FALSE(Accepted(o));
  o = SmallOptions();
  o.full_search_fraction = 0.5f;
  o.fast_simulations = o.simulations + 1;
  EXPECT_FALSE(Accepted(o));
}

// The first plies of each game are searched with opening_simulations visits, the rest with
// `simulations`: the playouts add up to exactly that, plus the one that expands each move's fresh
// root (no tree is reused).
TEST(SelfPlayEngineTest, OpeningPliesGetTheirOwnVisitBudget) {
  EngineOptions o = SmallOptions();
  o.search.reuse_tree = false;
  o.search.propagate_proofs = false;  // a proven root would end its search early
  o.simulations = 8;
  const auto playouts = [](const EngineOptions& options) {
    Rig rig = MakeRig(options);
    AZ_CHECK(RunToEnd(*rig.engine).ok());
    const EngineCounters c = rig.engine->counters();
    AZ_CHECK(c.fast_moves == 0 && c.games_finished == options.max_games);
    return std::pair{c.simulations, *rig.finished};
  };
  const auto expected = [](const std::vector<int>& lengths, int opening_plies, int opening,
                           int later) {
    std::uint64_t sum = 0;
    for (const int plies : lengths) {
      const int early = std::min(plies, opening_plies);  // every game has at least 7 plies
      sum += static_cast<std::uint64_t>(early) * (opening + 1) +
             static_cast<std::uint64_t>(plies - early) * (later + 1);
    }
    return sum;
  };
  const auto [plain, plain_games] = playouts(o);
  EXPECT_EQ(plain, expected(plain_games, 0, 0, 8));

  o.opening_simulations_plies = 4;
  o.opening_simulations = 40;
  const auto [deeper, deeper_games] = playouts(o);
  EXPECT_EQ(deeper, expected(deeper_games, 4, 40, 8));

  o.opening_simulations = 0;  // a budget of nothing is refused
  EXPECT_FALSE(Accepted(o));
}

TEST(SelfPlayEngineTest, GumbelGamesPushValidSamplesWithTheImprovedPolicy) {
  EngineOptions o = SmallOptions();
  o.search.root_selection = mcts::RootSelection::kGumbel;
  o.simulations = 8;
  Rig rig = MakeRig(o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const std::vector<C4Sample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.moves);
  EXPECT_EQ(ExpectCompleteGames<C4>(samples), 6u);
  // The improved policy gives every legal move some mass (softmax of logits + sigma), unlike a
  // visit distribution of 8 playouts over 7 moves.
  std::size_t full_support = 0;
  for (const C4Sample& s : samples) {
    const auto nonzero =
        std::count_if(s.policy.begin(), s.policy.end(), [](auto p) { return p > 0; });
    if (nonzero >= 6) ++full_support;
  }
  EXPECT_GT(full_support, samples.size() / 2);
}

// Policy-surprise weighting: every pushed sample is one of the game's, valid and with its outcome;
// the pushes are the moves plus the extra copies less the samples left out; Gumbel's improved
// policy differs from the fake network's priors, so some samples are repeated and some left out.
TEST(SelfPlayEngineTest, PolicySurpriseWeightingRepeatsSamplesAndKeepsThemValid) {
  EngineOptions o = SmallOptions();
  o.search.root_selection = mcts::RootSelection::kGumbel;
  o.simulations = 8;
  o.max_games = 12;
  o.policy_surprise_weight = 1.0f;
  Rig rig = MakeRig(o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const std::vector<C4Sample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.samples_pushed);
  EXPECT_EQ(samples.size(), c.moves + c.surprise_extra_copies - c.surprise_left_out);
  EXPECT_GT(c.surprise_extra_copies, 0u);
  EXPECT_GT(c.surprise_left_out, 0u);
  for (const C4Sample& s : samples) {
    EXPECT_TRUE(C4::Validate(s).ok());
    EXPECT_TRUE(s.flags & sample::kConnectFourHasOutcome);
  }
  o.policy_surprise_weight = 1.5f;
  EXPECT_FALSE(Accepted(o));
  o.policy_surprise_weight = -0.1f;
  EXPECT_FALSE(Accepted(o));
}

// The position cap: with a cap of one and a window longer than the run, no position is pushed
// twice (every game starts from the empty board, which is pushed once), the samples left out and
// the ones pushed make up the moves, and every pushed sample is valid with its game's outcome.
TEST(SelfPlayEngineTest, PositionCapPushesEachPositionAtMostCapTimes) {
  EngineOptions o = SmallOptions();
  o.max_games = 12;
  o.position_cap = 1;
  o.position_cap_window = 100000;
  Rig rig = MakeRig(o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const std::vector<C4Sample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.samples_pushed);
  EXPECT_EQ(samples.size() + c.position_cap_left_out, c.moves);
  EXPECT_GE(c.position_cap_left_out, 11u);  // the empty board of every game but the first
  std::set<std::vector<std::byte>> positions;
  int empty_boards = 0;
  for (const C4Sample& s : samples) {
    EXPECT_TRUE(C4::Validate(s).ok());
    EXPECT_TRUE(s.flags & sample::kConnectFourHasOutcome);
    const auto bytes = std::as_bytes(std::span(&s.position, 1));
    EXPECT_TRUE(positions.emplace(bytes.begin(), bytes.end()).second) << "ply " << s.ply;
    empty_boards += s.ply == 0;
  }
  EXPECT_EQ(empty_boards, 1);
  o.position_cap = -1;
  EXPECT_FALSE(Accepted(o));
  o.position_cap = 2;
  o.position_cap_window = 0;
  EXPECT_FALSE(Accepted(o));
}

// Drawn-game weighting: Connect Four games cut off at six plies are all drawn (no side has four
// stones), so with weight 3 every sample is pushed three times, with 0 none, with 2.5 two or three
// times; the copies and the samples left out are counted, every pushed sample is valid and drawn.
TEST(SelfPlayEngineTest, DrawnGameWeightRepeatsOrLeavesOutTheSamplesOfDrawnGames) {
  EngineOptions o = SmallOptions();
  o.max_plies = 6;
  const auto run = [](const EngineOptions& options) {
    Rig rig = MakeRig(options);
    EXPECT_TRUE(RunToEnd(*rig.engine).ok());
    return std::pair{rig.engine->counters(), rig.sink->Drain()};
  };
  o.drawn_game_weight = 3.0f;
  {
    const auto [c, samples] = run(o);
    EXPECT_EQ(c.results[2], 6u) << "every game drawn";
    EXPECT_EQ(c.moves, 36u);
    EXPECT_EQ(samples.size(), 3 * c.moves);
    EXPECT_EQ(c.samples_pushed, samples.size());
    EXPECT_EQ(c.drawn_extra_copies, 2 * c.moves);
    EXPECT_EQ(c.drawn_left_out, 0u);
    for (const C4Sample& s : samples) {
      EXPECT_TRUE(C4::Validate(s).ok());
      EXPECT_EQ(s.z, 0.0f);
    }
  }
  o.drawn_game_weight = 0.0f;
  {
    const auto [c, samples] = run(o);
    EXPECT_TRUE(samples.empty());
    EXPECT_EQ(c.drawn_left_out, c.moves);
  }
  o.drawn_game_weight = 2.5f;
  {
    const auto [c, samples] = run(o);
    EXPECT_EQ(samples.size(), c.moves + c.drawn_extra_copies);
    EXPECT_GT(samples.size(), 2 * c.moves);
    EXPECT_LT(samples.size(), 3 * c.moves);
  }
  o.drawn_game_weight = -0.5f;
  EXPECT_FALSE(Accepted(o));
  o.drawn_game_weight = 17.0f;
  EXPECT_FALSE(Accepted(o));
}

// TD(lambda) value targets: every pushed sample stays valid; a game's last sample's z is half its
// root's value plus half the game's outcome (-1, 0 or 1), and every earlier one's is half its
// root's value plus half the next sample's target, from its own side; some targets are no outcome
// at all.
TEST(SelfPlayEngineTest, ValueLambdaBlendsEachGamesOutcomeWithItsRootValues) {
  EngineOptions o = SmallOptions();
  o.max_games = 8;
  o.value_lambda = 0.5f;
  Rig rig = MakeRig(o);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  std::map<std::uint64_t, std::vector<C4Sample>> games;
  for (const C4Sample& s : rig.sink->Drain()) {
    EXPECT_TRUE(C4::Validate(s).ok());
    games[s.game_id].push_back(s);
  }
  ASSERT_GE(games.size(), 8u);
  int blended = 0;
  for (auto& [id, samples] : games) {
    std::sort(samples.begin(), samples.end(), [](auto& a, auto& b) { return a.ply < b.ply; });
    const auto value = [](const C4Sample& s) { return s.root_wdl[0] - s.root_wdl[2]; };
    const C4Sample& last = samples.back();
    const float outcome = (last.z - 0.5f * value(last)) / 0.5f;
    EXPECT_NEAR(outcome, std::round(outcome), 1e-4) << "game " << id;
    for (std::size_t i = 0; i + 1 < samples.size(); ++i) {
      const float sign = (samples[i + 1].ply - samples[i].ply) % 2 == 0 ? 1.0f : -1.0f;
      EXPECT_NEAR(samples[i].z, 0.5f * value(samples[i]) + 0.5f * sign * samples[i + 1].z, 1e-5)
          << "game " << id << " ply " << samples[i].ply;
      if (std::fabs(std::fabs(samples[i].z) - 1.0f) > 1e-3f && samples[i].z != 0.0f) ++blended;
    }
  }
  EXPECT_GT(blended, 0);
  o.value_lambda = 1.5f;
  EXPECT_FALSE(Accepted(o));
  o.value_lambda = -0.1f;
  EXPECT_FALSE(Accepted(o));
}

// The samples' root WDL: with a network that calls every position won for its side to move and
// two playouts (Gumbel visits two children once each), each visited child looks lost to the root.
// A root without a move that ends the game then records a certain loss under improved_root_wdl
// (its children, weighted by Gumbel's improved policy); over every playout (the default) the
// root's own evaluation, a win, stays in the mean.
TEST(SelfPlayEngineTest, ImprovedRootWdlIsTheChildrensValueNotEveryPlayouts) {
  for (const bool improved : {false, true}) {
    SCOPED_TRACE(improved);
    EngineOptions o = SmallOptions();
    o.search.root_selection = mcts::RootSelection::kGumbel;
    o.simulations = 2;
    o.improved_root_wdl = improved;
    Rig rig = MakeRig(o);
    rig.evaluator->SetWdlFunction([](std::span<const std::byte>) {
      return std::array<float, 3>{1.0f, 0.0f, 0.0f};
    });
    ASSERT_TRUE(RunToEnd(*rig.engine).ok());
    int checked = 0;
    for (const C4Sample& s : rig.sink->Drain()) {
      EXPECT_TRUE(C4::Validate(s).ok());
      const Result<games::ConnectFourPosition> position =
          games::ConnectFourPosition::FromRecord(s.position);
      ASSERT_TRUE(position.ok());
      bool a_move_ends_the_game = position->moves_played() + 1 >= games::kConnectFourCells;
      for (int column = 0; column < games::kConnectFourWidth; ++column) {
        a_move_ends_the_game =
            a_move_ends_the_game || (position->CanPlay(column) && position->IsWinningMove(column));
      }
      if (a_move_ends_the_game) continue;
      ++checked;
      if (improved) {
        EXPECT_EQ(s.root_wdl, (std::array<float, 3>{0.0f, 0.0f, 1.0f})) << "ply " << s.ply;
      } else {
        EXPECT_GT(s.root_wdl[0], 0.0f) << "ply " << s.ply;
        EXPECT_LT(s.root_wdl[0], 0.5f) << "ply " << s.ply;
      }
    }
    EXPECT_GT(checked, 20);
  }
}

// Root noise only before root_noise_plies: with none at all and no temperature plies, every game
// is the search's own choice from the same start, so every game is the same (the fake network
// answers every position alike); with noise at every ply they differ.
TEST(SelfPlayEngineTest, GamesWithoutRootNoisePlayTheSearchsOwnChoice) {
  const auto games = [](int root_noise_plies) {
    EngineOptions o = SmallOptions();
    o.search.root_selection = mcts::RootSelection::kGumbel;
    o.temperature.moves = 0;
    o.root_noise_plies = root_noise_plies;
    Rig rig = MakeRig(o);
    AZ_CHECK(RunToEnd(*rig.engine).ok());
    std::map<std::uint64_t, std::vector<std::vector<float>>> policies;  // by game, ply order
    std::vector<C4Sample> samples = rig.sink->Drain();
    std::sort(samples.begin(), samples.end(),
              [](const C4Sample& a, const C4Sample& b) { return a.ply < b.ply; });
    for (const C4Sample& s : samples) {
      policies[s.game_id].emplace_back(s.policy.begin(), s.policy.end());
    }
    std::set<std::vector<std::vector<float>>> distinct;
    for (const auto& [id, game] : policies) distinct.insert(game);
    AZ_CHECK(policies.size() == o.max_games);
    return distinct.size();
  };
  EXPECT_EQ(games(0), 1u);
  EXPECT_GT(games(-1), 1u);
  EngineOptions o = SmallOptions();
  o.root_noise_plies = -2;
  EXPECT_FALSE(Accepted(o));
}

TEST(SelfPlayEngineTest, ChessGamesPushValidSamples) {
  EngineOptions o = SmallOptions();
  o.games = 2;
  o.max_games = 2;
  o.simulations = 4;
  o.max_plies = 6;  // cut off: draws
  o.search.dirichlet_alpha = ChessGame::kDefaults.dirichlet_alpha;
  Rig<ChessSample> rig = MakeRig<ChessSample>(o, 0, games::Chess::kId);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());

  const std::vector<ChessSample> samples = rig.sink->Drain();
  ASSERT_EQ(samples.size(), 12u);
  EXPECT_EQ(ExpectCompleteGames<ChessGame>(samples), 2u);
  for (const ChessSample& s : samples) EXPECT_EQ(s.z, 0.0f);
  EXPECT_EQ(rig.engine->counters().results[2], 2u);
}

// Material adjudication (chess): white a queen up from the start, so the lead holds on the first
// two roots and the game ends at the second, won by white, before black can move; with the rule
// off the same games run to the length cut-off and are drawn.
TEST(SelfPlayEngineTest, ChessMaterialAdjudicationEndsGamesWonByTheSideAhead) {
  EngineOptions o = SmallOptions();
  o.games = 2;
  o.max_games = 4;
  o.simulations = 4;
  o.max_plies = 8;
  o.search.dirichlet_alpha = ChessGame::kDefaults.dirichlet_alpha;
  Result<OpeningBook> book = ParseOpeningBook("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1\n", "book.txt");
  ASSERT_TRUE(book.ok()) << book.status().ToString();
  o.opening_book = *book;
  o.material_adjudicate_margin = 5;
  o.material_adjudicate_plies = 2;
  {
    Rig<ChessSample> rig = MakeRig<ChessSample>(o, 0, games::Chess::kId);
    ASSERT_TRUE(RunToEnd(*rig.engine).ok());
    const EngineCounters c = rig.engine->counters();
    EXPECT_EQ(c.material_adjudications, 4u);
    EXPECT_EQ(c.results[0], 4u) << "white, the side ahead, won every game";
    const std::vector<ChessSample> samples = rig.sink->Drain();
    ASSERT_EQ(samples.size(), 4u) << "one recorded ply a game: the adjudicated root is not";
    for (const ChessSample& s : samples) {
      EXPECT_TRUE(ChessGame::Validate(s).ok());
      EXPECT_EQ(s.z, 1.0f) << "white to move at ply 0, and white won";
    }
  }
  o.material_adjudicate_margin = 0;
  Rig<ChessSample> rig = MakeRig<ChessSample>(o, 0, games::Chess::kId);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  EXPECT_EQ(rig.engine->counters().material_adjudications, 0u);
  EXPECT_EQ(rig.engine->counters().results[2], 4u) << "cut off at 8 plies: drawn";
}

TEST(SelfPlayEngineTest, NeverAnsweringEvaluatorTimesOutThenEverythingIsResubmittedAndPlayGoesOn) {
  EngineOptions o = SmallOptions();
  o.eval_timeout = milliseconds(300);
  Rig rig = MakeRig(o);
  rig.evaluator->SetMode(FakeEvaluator::Mode::kSilentUntilReset);

  const Clock::time_point start = Clock::now();
  ASSERT_TRUE(rig.engine->Step().ok());  // waits out the timeout, resubmits, gets answers
  EXPECT_GE(Clock::now() - start, milliseconds(300));
  EXPECT_EQ(rig.evaluator->counts().resets, 1u);
  EXPECT_EQ(rig.evaluator->counts().held, 4u);  // both groups' first requests: never answered
  EXPECT_EQ(rig.engine->counters().eval_timeouts, 1u);

  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const FakeEvaluator::Counts e = rig.evaluator->counts();
  EXPECT_EQ(c.eval_timeouts, 1u);
  EXPECT_EQ(c.games_finished, 6u);
  EXPECT_EQ(e.submitted, c.requests_submitted);
  EXPECT_EQ(e.answered, e.submitted - 4);  // the 4 held ones were sent again, under new ids
  const std::vector<C4Sample> samples = rig.sink->Drain();
  EXPECT_EQ(samples.size(), c.moves);
  EXPECT_EQ(ExpectCompleteGames<C4>(samples), 6u);
}

// A dead evaluator is not waited out: the transport says it is gone, and everything in flight goes
// again at once (issue: each evaluator death cost the whole 10 s eval timeout).
TEST(SelfPlayEngineTest, AnEvaluatorThatDiesIsNoticedAtOnceAndEverythingIsResubmitted) {
  EngineOptions o = SmallOptions();
  o.eval_timeout = seconds(60);  // far beyond what this test waits
  Rig rig = MakeRig(o);
  rig.evaluator->SetMode(FakeEvaluator::Mode::kSilentUntilReset);
  std::thread death([&rig] {
    std::this_thread::sleep_for(milliseconds(200));
    rig.evaluator->LoseEvaluator();
  });
  const Clock::time_point start = Clock::now();
  ASSERT_TRUE(rig.engine->Step().ok());  // notices the loss, resubmits, gets answers
  const Clock::duration waited = Clock::now() - start;
  death.join();
  EXPECT_LT(waited, seconds(5));
  EXPECT_EQ(rig.engine->counters().evaluator_losses, 1u);
  EXPECT_EQ(rig.engine->counters().eval_timeouts, 0u);
  EXPECT_EQ(rig.evaluator->counts().resets, 1u);

  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(c.games_finished, 6u);
  EXPECT_EQ(c.evaluator_losses, 1u);
  EXPECT_EQ(ExpectCompleteGames<C4>(rig.sink->Drain()), 6u);
}

TEST(SelfPlayEngineTest, StaleAnswersAfterAResetAreDroppedByTheTransport) {
  EngineOptions o = SmallOptions();
  o.eval_timeout = milliseconds(200);
  Rig rig = MakeRig(o);
  rig.evaluator->SetMode(FakeEvaluator::Mode::kSilentUntilReset);
  ASSERT_TRUE(rig.engine->Step().ok());
  ASSERT_EQ(rig.evaluator->counts().resets, 1u);
  rig.evaluator->ReleaseHeld();  // the old generation's answers arrive late

  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(rig.evaluator->counts().stale_dropped, 4u);
  EXPECT_EQ(c.protocol_errors, 0u);
  EXPECT_EQ(c.eval_timeouts, 1u);
  EXPECT_EQ(ExpectCompleteGames<C4>(rig.sink->Drain()), 6u);
}

TEST(SelfPlayEngineTest, StaleAnswersThatGetPastTheTransportAreDroppedByTheirIds) {
  EngineOptions o = SmallOptions();
  o.eval_timeout = milliseconds(200);
  Rig rig = MakeRig(o);
  rig.evaluator->SetMode(FakeEvaluator::Mode::kSilentUntilReset);
  rig.evaluator->SetLeakStale(true);
  ASSERT_TRUE(rig.engine->Step().ok());
  ASSERT_EQ(rig.evaluator->counts().resets, 1u);
  const EngineCounters before = rig.engine->counters();
  rig.evaluator->ReleaseHeld();

  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(rig.evaluator->counts().stale_leaked, 4u);
  // The ids of the first generation are never in flight again: each such answer is refused.
  EXPECT_EQ(c.protocol_errors, 4u);
  EXPECT_EQ(c.eval_timeouts, 1u);
  // None of them was backed up: every leaf evaluated had its own, current answer.
  EXPECT_EQ(c.leaves_evaluated, rig.evaluator->counts().answered - 4);
  EXPECT_EQ(c.games_finished, 6u);
  EXPECT_GT(c.moves, before.moves);
  EXPECT_EQ(ExpectCompleteGames<C4>(rig.sink->Drain()), 6u);
}

TEST(SelfPlayEngineTest, FailedEvaluationsCancelTheirLeavesWhichAreSearchedAgain) {
  Rig rig = MakeRig(SmallOptions());
  rig.evaluator->FailNext(3);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  const FakeEvaluator::Counts e = rig.evaluator->counts();
  EXPECT_EQ(c.eval_errors, 3u);
  EXPECT_EQ(c.eval_timeouts, 0u);
  EXPECT_EQ(c.leaves_evaluated, e.answered - 3);  // cancelled, not backed up
  EXPECT_EQ(c.games_finished, 6u);
  EXPECT_EQ(ExpectCompleteGames<C4>(rig.sink->Drain()), 6u);
}

TEST(SelfPlayEngineTest, MalformedAnswersAreDroppedAndTheTimeoutResubmitsThem) {
  EngineOptions o = SmallOptions();
  o.eval_timeout = milliseconds(200);
  Rig rig = MakeRig(o);
  rig.evaluator->GarbleNext(2);
  ASSERT_TRUE(RunToEnd(*rig.engine).ok());
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(c.protocol_errors, 2u);
  EXPECT_EQ(c.eval_timeouts, 1u);  // the group waited for them, then sent them again
  EXPECT_EQ(c.eval_errors, 0u);
  EXPECT_EQ(c.games_finished, 6u);
  EXPECT_EQ(ExpectCompleteGames<C4>(rig.sink->Drain()), 6u);
}

TEST(SelfPlayEngineTest, AFullSinkBlocksTheGameEndUntilItDrainsThenEverySampleArrives) {
  EngineOptions o = SmallOptions();
  o.max_games = 4;
  Rig rig = MakeRig(o, /*sink_capacity=*/3);
  Background run(*rig.engine);

  // A Connect Four game has at least 7 plies: its end finds the sink full.
  ASSERT_TRUE(WaitUntil([&] { return rig.engine->counters().ring_waits >= 1; }));
  const EngineCounters blocked = rig.engine->counters();
  EXPECT_EQ(blocked.samples_pushed, 3u);
  EXPECT_EQ(rig.sink->size(), 3u);
  std::this_thread::sleep_for(milliseconds(300));
  // Nothing moves while the game's end waits.
  EXPECT_EQ(rig.engine->counters().moves, blocked.moves);
  EXPECT_EQ(rig.engine->counters().samples_pushed, 3u);
  EXPECT_FALSE(run.Wait(milliseconds(0)).has_value());

  // Drain as a replay daemon would: every sample arrives, none is dropped.
  std::vector<C4Sample> samples;
  std::optional<Status> done;
  const Clock::time_point deadline = Clock::now() + seconds(60);
  while (!(done = run.Wait(milliseconds(5))) && Clock::now() < deadline) {
    for (const C4Sample& s : rig.sink->Drain()) samples.push_back(s);
  }
  ASSERT_TRUE(done.has_value());
  ASSERT_TRUE(done->ok()) << done->ToString();
  for (const C4Sample& s : rig.sink->Drain()) samples.push_back(s);
  const EngineCounters c = rig.engine->counters();
  EXPECT_EQ(c.samples_dropped, 0u);
  EXPECT_GE(c.ring_waits, 1u);
  EXPECT_EQ(samples.size(), c.samples_pushed);
  EXPECT_EQ(samples.size(), c.moves);
  EXPECT_EQ(ExpectCompleteGames<C4>(samples), 4u);
  ExpectGameLengths(samples, *rig.finished);
}

TEST(SelfPlayEngineTest, StopEndsAStepBlockedOnAFullSinkPromptlyAndCountsTheUnpushedSamples) {
  EngineOptions o = SmallOptions();
  o.push_timeout = seconds(60);  // Stop, not the timeout, must end the wait
  Rig rig = MakeRig(o, /*sink_capacity=*/1);
  Background run(*rig.engine);
  ASSERT_TRUE(WaitUntil([&] { return rig.engine->counters().games_finished >= 1; }));
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(run.Wait(milliseconds(0)).has_value());

  const Clock::time_point stop = Clock::now();
  rig.engine->Stop();
  const std::optional<Status> done = run.Wait(milliseconds(1000));
  ASSERT_TRUE(done.has_value());
  EXPECT_LT(Clock::now() - stop, milliseconds(500));
  EXPECT_EQ(done->code(), StatusCode::kCancelled) << done->ToString();
  const EngineCounters c = rig.engine->counters();
  ASSERT_EQ(c.games_finished, 1u);
  ASSERT_EQ(rig.finished->size(), 1u);
  EXPECT_EQ(c.samples_pushed, 1u);
  EXPECT_EQ(c.samples_dropped, static_cast<std::uint64_t>(rig.finished->front() - 1));
  // A stopped engine stays stopped.
  EXPECT_EQ(rig.engine->Step().code(), StatusCode::kCancelled);
}

TEST(SelfPlayEngineTest, StopEndsAStepWaitingForAnswersPromptly) {
  EngineOptions o = SmallOptions();
  o.eval_timeout = seconds(60);
  Rig rig = MakeRig(o);
  rig.evaluator->SetMode(FakeEvaluator::Mode::kSilent);
  Background run(*rig.engine);
  ASSERT_TRUE(WaitUntil([&] { return rig.evaluator->counts().held == 4; }));
  std::this_thread::sleep_for(milliseconds(50));

  const Clock::time_point stop = Clock::now();
  rig.engine->Stop();
  const std::optional<Status> done = run.Wait(milliseconds(1000));
  ASSERT_TRUE(done.has_value());
  EXPECT_LT(Clock::now() - stop, milliseconds(500));
  EXPECT_EQ(done->code(), StatusCode::kCancelled) << done->ToString();
  EXPECT_EQ(rig.engine->counters().eval_timeouts, 0u);
  EXPECT_EQ(rig.evaluator->counts().resets, 0u);
}

TEST(SelfPlayEngineTest, PauseFinishesTheGroupsInFlightAndSubmitsNothingNew) {
  EngineOptions o = SmallOptions();
  o.max_games = 0;  // play on until the test ends
  Rig rig = MakeRig(o);
  rig.evaluator->SetDelay(milliseconds(20));
  ASSERT_TRUE(rig.engine->Step().ok());  // both groups submitted, one answered and resubmitted
  ASSERT_EQ(rig.evaluator->counts().submitted, 6u);
  const std::uint64_t rounds = rig.engine->counters().rounds;

  rig.engine->SetPaused(true);
  // Each of the two groups in flight is waited for and backed up, and not submitted again.
  ASSERT_TRUE(rig.engine->Step().ok());
  ASSERT_TRUE(rig.engine->Step().ok());
  EXPECT_EQ(rig.engine->counters().rounds, rounds + 2);
  const FakeEvaluator::Counts drained = rig.evaluator->counts();
  EXPECT_EQ(drained.submitted, 6u);
  EXPECT_EQ(drained.answered, 6u);
  EXPECT_EQ(drained.in_flight, 0u);
  const EngineCounters paused = rig.engine->counters();
  for (int i = 0; i < 5; ++i) {
    const Clock::time_point start = Clock::now();
    ASSERT_TRUE(rig.engine->Step().ok());
    EXPECT_LT(Clock::now() - start, milliseconds(500));  // returns at once, waits for nothing
  }
  EXPECT_EQ(rig.evaluator->counts().submitted, 6u);
  EXPECT_EQ(rig.engine->counters().moves, paused.moves);  // the games keep their state
  EXPECT_EQ(rig.engine->counters().rounds, paused.rounds);
  EXPECT_EQ(rig.engine->counters().games_in_progress, 4u);

  rig.engine->SetPaused(false);
  ASSERT_TRUE(rig.engine->Step().ok());
  EXPECT_EQ(rig.evaluator->counts().submitted, 12u);  // both groups again, one of them twice
  EXPECT_EQ(rig.engine->counters().rounds, paused.rounds + 1);
}

TEST(SelfPlayEngineTest, RefusesTransportsThatDoNotFit) {
  // A sink of another game's records.
  auto sink = std::make_unique<FakeSampleSink<ChessSample>>();
  Result<std::unique_ptr<SelfPlayEngine>> engine = CreateSelfPlayEngine(
      games::ConnectFour::kId, SmallOptions(), std::make_unique<FakeEvaluator>(), std::move(sink));
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(engine.status().message(), HasSubstr("80-byte samples"));

  // An evaluator that holds fewer answers than the engine keeps in flight (4 games x 1 leaf).
  engine = CreateSelfPlayEngine(games::ConnectFour::kId, SmallOptions(),
                                std::make_unique<FakeEvaluator>(kModelVersion, 2),
                                std::make_unique<FakeSampleSink<C4Sample>>());
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("--response-capacity"));

  // None at all, and options out of range.
  engine = CreateSelfPlayEngine(games::ConnectFour::kId, SmallOptions(), nullptr,
                                std::make_unique<FakeSampleSink<C4Sample>>());
  EXPECT_EQ(engine.status().code(), StatusCode::kInvalidArgument);
  EngineOptions bad = SmallOptions();
  bad.groups = 5;
  engine = CreateSelfPlayEngine(games::ConnectFour::kId, bad, std::make_unique<FakeEvaluator>(),
                                std::make_unique<FakeSampleSink<C4Sample>>());
  EXPECT_EQ(engine.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(engine.status().message(), HasSubstr("groups"));
}

}  // namespace
}  // namespace az::selfplay
