// Gumbel AlphaZero at the root (core/mcts/gumbel.h and Search with RootSelection::kGumbel): the
// sequential-halving schedule matches DeepMind's mctx, the completed-Q target is a distribution
// that leans towards the better-valued moves, and the search finds tactics with a handful of
// playouts, spends exactly its budget, and samples moves with its noise.

#include "core/mcts/gumbel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/games/connect4/connect_four.h"
#include "core/games/connect4/connect_four_solver.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"
#include "tests/mcts/tree_checks.h"

namespace az::mcts {
namespace {

using games::ConnectFour;
using games::ConnectFourPosition;
using C4Search = Search<ConnectFour>;

ConnectFourPosition Position(std::string_view moves) {
  Result<ConnectFourPosition> position = ConnectFourPosition::FromMoves(moves);
  AZ_CHECK(position.ok(), position.status().ToString());
  return *position;
}

SearchOptions GumbelOptions(bool noise = false, std::uint64_t seed = 1) {
  SearchOptions options;
  options.root_selection = RootSelection::kGumbel;
  options.root_noise = noise;
  options.max_batch = 1;
  options.seed = seed;
  return options;
}

C4Search MakeSearch(const ConnectFourPosition& root, const SearchOptions& options) {
  Result<C4Search> search = C4Search::Create(options, root);
  AZ_CHECK(search.ok(), search.status().ToString());
  return std::move(search).value();
}

std::vector<std::uint32_t> V(std::initializer_list<std::uint32_t> values) { return values; }

// A position (14 plies) the side to move wins with one move; the six others lose.
constexpr std::string_view kWonWithFewWinningMoves = "66537124675747";

TEST(GumbelScheduleTest, MatchesMctxSequenceOfConsideredVisits) {
  // The sequences mctx's get_sequence_of_considered_visits gives for the same arguments.
  EXPECT_EQ(ConsideredVisits(4, 16), V({0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  EXPECT_EQ(ConsideredVisits(7, 32), V({0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3,
                                        4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11}));
  EXPECT_EQ(ConsideredVisits(2, 5), V({0, 0, 1, 1, 2}));
  EXPECT_EQ(ConsideredVisits(7, 8), V({0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(ConsideredVisits(1, 4), V({0, 1, 2, 3}));
  EXPECT_TRUE(ConsideredVisits(5, 0).empty());
}

TEST(GumbelTargetTest, ImprovedPolicyIsADistributionThatFavoursHigherQ) {
  // Equal priors; two visited children with different Q, one unvisited.
  const std::vector<GumbelChild> children = {
      {.logit = 0.0, .visits = 4, .q = 0.5},
      {.logit = 0.0, .visits = 4, .q = -0.5},
      {.logit = 0.0, .visits = 0},
  };
  std::vector<double> policy(children.size());
  ImprovedPolicy(0.0, children, GumbelParams{}, policy);
  EXPECT_NEAR(std::accumulate(policy.begin(), policy.end(), 0.0), 1.0, 1e-12);
  for (double p : policy) EXPECT_GE(p, 0.0);
  EXPECT_GT(policy[0], policy[2]);
  EXPECT_GT(policy[2], policy[1]);  // the unvisited one gets v_mix, between the two
}

TEST(GumbelTargetTest, NothingVisitedLeavesThePrior) {
  const std::vector<GumbelChild> children = {{.logit = std::log(0.7)}, {.logit = std::log(0.2)},
                                             {.logit = std::log(0.1)}};
  std::vector<double> policy(children.size());
  ImprovedPolicy(0.3, children, GumbelParams{}, policy);
  EXPECT_NEAR(policy[0], 0.7, 1e-9);
  EXPECT_NEAR(policy[1], 0.2, 1e-9);
  EXPECT_NEAR(policy[2], 0.1, 1e-9);
}

TEST(GumbelTargetTest, MixedValueWeighsVisitedQByPrior) {
  const std::vector<GumbelChild> children = {
      {.logit = std::log(0.75), .visits = 2, .q = 1.0},
      {.logit = std::log(0.25), .visits = 1, .q = -1.0},
  };
  // (v + 3 * (0.75 * 1 - 0.25 * 1) / 1) / 4 with v = 0.2.
  EXPECT_NEAR(MixedValue(0.2, children), (0.2 + 3 * 0.5) / 4, 1e-12);
  EXPECT_NEAR(MixedValue(0.2, std::vector<GumbelChild>(2)), 0.2, 1e-12);
}

TEST(GumbelTargetTest, SigmaScalesWithTheMostVisits) {
  const GumbelParams params{.c_visit = 50.0, .c_scale = 0.1};
  std::vector<GumbelChild> children = {{.visits = 10, .q = 1.0}, {.visits = 6, .q = 0.0}};
  std::vector<double> sigma(2);
  CompletedSigma(0.0, children, params, sigma);
  EXPECT_NEAR(sigma[0], (50.0 + 10) * 0.1, 1e-9);  // rescaled Q 1
  EXPECT_NEAR(sigma[1], 0.0, 1e-9);                // rescaled Q 0
}

TEST(GumbelSearchTest, FindsTheWinInOneWithAHandfulOfPlayouts) {
  // X wins in column 1 (index 0); every column is tried once in the first 7 playouts.
  C4Search search = MakeSearch(Position("121212"), GumbelOptions());
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 8).ok());
  EXPECT_EQ(search.BestMove().column, 0);
  double total = 0, winning = 0;
  for (const auto& child : search.RootChildren()) {
    total += child.policy;
    if (child.move.column == 0) winning = child.policy;
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_GT(winning, 0.9);
  ExpectConsistentTree(search);
}

TEST(GumbelSearchTest, BlocksTheOpponentsWin) {
  // O has three on the bottom row; X must block in column 4 (index 3). With an uninformed
  // evaluator every move looks level until the search finds O's win two plies down, so the first
  // phase must give each move a few playouts (200: 9 each).
  C4Search search = MakeSearch(Position("717263"), GumbelOptions());
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 200).ok());
  EXPECT_EQ(search.BestMove().column, 3);
  ExpectConsistentTree(search);
}

// A network that knows the game: uniform priors and each position's exact value (the solver's).
class SolverEvaluator final : public Evaluator<ConnectFour> {
 public:
  Status Evaluate(std::span<const Leaf<ConnectFour>> leaves, std::span<LeafEval> evals) override {
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      for (float& prior : evals[i].priors) prior = 1.0f;
      Result<ConnectFourPosition> position = ConnectFourPosition::FromRecord(*leaves[i].record);
      AZ_CHECK(position.ok());
      const int value = solver_.Solve(*position);
      evals[i].SetWdl(value > 0 ? 1.0f : 0.0f, value == 0 ? 1.0f : 0.0f, value < 0 ? 1.0f : 0.0f);
    }
    return Status::Ok();
  }

 private:
  games::ConnectFourSolver solver_{20};
};

// A won position where most moves lose: with self-play's settings (16 playouts, c-scale 1) and an
// exact network, the improved root WDL is the win the search found, while the mean over every
// playout counts the ones sequential halving spent on the losing moves and reads far lower.
TEST(GumbelSearchTest, ImprovedRootWdlIsTheValueOfTheMovesTheSearchPrefers) {
  const ConnectFourPosition root = Position(kWonWithFewWinningMoves);
  games::ConnectFourSolver solver(20);
  int winning = 0, losing = 0;
  for (int value : solver.MoveValues(root)) {
    winning += value == 1;
    losing += value == -1;
  }
  ASSERT_EQ(winning, 1);
  ASSERT_EQ(losing, 6);
  SearchOptions options = GumbelOptions();
  options.gumbel_c_scale = 1.0f;
  C4Search search = MakeSearch(root, options);
  SolverEvaluator evaluator;
  ASSERT_TRUE(search.Run(evaluator, 16).ok());
  const Wdl improved = search.ImprovedRootWdl();
  const Wdl playouts = search.RootWdl();
  EXPECT_NEAR(improved.win + improved.draw + improved.loss, 1.0, 1e-9);
  EXPECT_NEAR(playouts.win + playouts.draw + playouts.loss, 1.0, 1e-9);
  EXPECT_GT(improved.win, 0.99);
  EXPECT_LT(playouts.win, 0.8);
  EXPECT_GT(playouts.loss, 0.2);
}

// Under PUCT the improved root WDL is the visit-weighted mean of the children's WDL, seen from the
// root (a child's win is the root's loss), without the root's own evaluation; before a search it
// is the (empty) root's.
TEST(SearchRootWdlTest, UnderPuctImprovedRootWdlIsTheChildrensVisitWeightedWdl) {
  SearchOptions options;
  options.max_batch = 1;
  C4Search search = MakeSearch(Position("4453"), options);
  EXPECT_EQ(search.ImprovedRootWdl().win, 0.0);
  EXPECT_EQ(search.ImprovedRootWdl().loss, 0.0);
  HashEvaluator<ConnectFour> evaluator(5);
  ASSERT_TRUE(search.Run(evaluator, 200).ok());
  const Node& root = search.root();
  double visits = 0, win = 0, draw = 0, loss = 0;
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const Node& child = search.arena()[root.first_child + i];
    const double n = child.N();
    if (n == 0) continue;
    const double d = static_cast<double>(child.DrawSum()) / kValueScale;
    const double v = static_cast<double>(child.ValueSum()) / kValueScale;
    visits += n;
    win += (n - d - v) / 2;  // the child's loss
    draw += d;
    loss += (n - d + v) / 2;
  }
  ASSERT_GT(visits, 0);
  const Wdl improved = search.ImprovedRootWdl();
  EXPECT_NEAR(improved.win, win / visits, 1e-9);
  EXPECT_NEAR(improved.draw, draw / visits, 1e-9);
  EXPECT_NEAR(improved.loss, loss / visits, 1e-9);
  EXPECT_NEAR(improved.win + improved.draw + improved.loss, 1.0, 1e-9);
}

TEST(GumbelSearchTest, SpendsExactlyTheBudgetAsSequentialHalving) {
  for (int visits : {1, 7, 16, 50, 200}) {
    SCOPED_TRACE(visits);
    C4Search search = MakeSearch(Position("4453"), GumbelOptions(true, 3));
    HashEvaluator<ConnectFour> evaluator(11);
    ASSERT_TRUE(search.Run(evaluator, visits).ok());
    EXPECT_EQ(search.RootChildVisits(), static_cast<std::uint32_t>(visits));
    // Halving: visits never spread to more children than were considered, and once every child
    // had its first playout the survivors hold the most.
    std::vector<std::uint32_t> counts;
    for (const auto& child : search.RootChildren()) counts.push_back(child.visits);
    const auto visited = std::count_if(counts.begin(), counts.end(), [](auto n) { return n > 0; });
    EXPECT_EQ(visited, std::min<int>(visits, 7));
    if (visits >= 50) {
      std::sort(counts.rbegin(), counts.rend());
      EXPECT_GT(counts[0], counts[3]);  // two survivors of the last phase
    }
    ExpectConsistentTree(search);
  }
}

TEST(GumbelSearchTest, NoiseSamplesMovesWithoutItTheChoiceIsFixed) {
  // The empty board, uniform priors and values: every move is as good, so the move played is the
  // Gumbel noise's choice; without noise the best move is the same whatever the seed.
  std::set<int> noisy_moves, plain_moves;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    for (bool noise : {true, false}) {
      C4Search search = MakeSearch(ConnectFourPosition(), GumbelOptions(noise, seed));
      UniformEvaluator<ConnectFour> evaluator;
      ASSERT_TRUE(search.Run(evaluator, 16).ok());
      if (noise) {
        noisy_moves.insert(search.SelectMove(1.0f).column);
      } else {
        plain_moves.insert(search.BestMove().column);
      }
    }
  }
  EXPECT_GE(noisy_moves.size(), 4u);
  EXPECT_EQ(plain_moves.size(), 1u);
}

TEST(GumbelSearchTest, IgnoresSubtreeReuseAndSearchesEveryMoveAfresh) {
  SearchOptions options = GumbelOptions();
  options.reuse_tree = true;
  C4Search search = MakeSearch(Position("44"), options);
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 40).ok());
  search.Advance(search.BestMove());
  EXPECT_EQ(search.stats().inherited_visits, 0u);
  EXPECT_EQ(search.RootChildVisits(), 0u);
  ASSERT_TRUE(search.Run(evaluator, 20).ok());
  EXPECT_EQ(search.RootChildVisits(), 20u);
}

TEST(GumbelSearchTest, OptionsOutOfRangeAreRefused) {
  SearchOptions options = GumbelOptions();
  options.gumbel_considered = 0;
  EXPECT_FALSE(options.Validate().ok());
  options = GumbelOptions();
  options.gumbel_c_scale = 0.0f;
  EXPECT_FALSE(options.Validate().ok());
  options = GumbelOptions();
  options.gumbel_c_visit = -1.0f;
  EXPECT_FALSE(options.Validate().ok());
}

}  // namespace
}  // namespace az::mcts
