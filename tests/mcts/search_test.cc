// The search on Connect Four: tactics, exact terminal values, the bookkeeping invariants (visits
// add up, virtual loss returns to zero), the two-step batched interface, subtree reuse, noise,
// risk.

#include "core/mcts/search.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/games/connect4/connect_four.h"
#include "core/games/connect4/connect_four_solver.h"
#include "core/mcts/fake_evaluators.h"
#include "tests/mcts/tree_checks.h"

namespace az::mcts {
namespace {

using games::ConnectFour;
using games::ConnectFourMove;
using games::ConnectFourPosition;
using C4Search = Search<ConnectFour>;

ConnectFourPosition Position(std::string_view moves) {
  Result<ConnectFourPosition> position = ConnectFourPosition::FromMoves(moves);
  AZ_CHECK(position.ok(), position.status().ToString());
  return *position;
}

C4Search MakeSearch(const ConnectFourPosition& root, SearchOptions options = {}) {
  Result<C4Search> search = C4Search::Create(options, root);
  AZ_CHECK(search.ok(), search.status().ToString());
  return std::move(search).value();
}

// The position a leaf's record describes.
ConnectFourPosition LeafPosition(const Leaf<ConnectFour>& leaf) {
  Result<ConnectFourPosition> position = ConnectFourPosition::FromRecord(*leaf.record);
  AZ_CHECK(position.ok(), position.status().ToString());
  return *position;
}

// Wraps an evaluator and checks what the search hands it: never a terminal state, always exactly
// the legal moves, with their policy indices.
template <typename Inner>
struct CheckingEvaluator {
  Inner inner;
  int calls = 0;
  int leaves = 0;
  Status Evaluate(std::span<const Leaf<ConnectFour>> batch, std::span<LeafEval> evals) {
    ++calls;
    leaves += static_cast<int>(batch.size());
    for (const Leaf<ConnectFour>& leaf : batch) {
      const ConnectFourPosition position = LeafPosition(leaf);
      ConnectFourMove moves[ConnectFour::kMaxMoves];
      const int count = ConnectFour::LegalMoves(position, moves);
      EXPECT_EQ(ConnectFour::Outcome(position, count), games::GameOutcome::kOngoing);
      EXPECT_EQ(leaf.moves.size(), static_cast<std::size_t>(count));
      EXPECT_EQ(leaf.policy_indices.size(), static_cast<std::size_t>(count));
      for (int i = 0; i < count && i < static_cast<int>(leaf.moves.size()); ++i) {
        EXPECT_EQ(leaf.moves[i], moves[i]);
        EXPECT_EQ(leaf.policy_indices[i], ConnectFour::PolicyIndex(position, moves[i]));
      }
    }
    return inner.Evaluate(batch, evals);
  }
};
static_assert(BatchEvaluator<CheckingEvaluator<UniformEvaluator<ConnectFour>>, ConnectFour>);
static_assert(BatchEvaluator<UniformEvaluator<ConnectFour>, ConnectFour>);

const ChildStats<ConnectFourMove>* FindChild(
    const std::vector<ChildStats<ConnectFourMove>>& children, int column) {
  for (const auto& child : children) {
    if (child.move.column == column) return &child;
  }
  return nullptr;
}

// X has three in column 1 and wins there; O also has three in column 2 and would win next.
constexpr std::string_view kWinInOne = "121212";
// O has three on the bottom row (columns 1-3); X must block at column 4 (index 3).
constexpr std::string_view kMustBlock = "717263";

TEST(SearchTest, FindsTheWinInOne) {
  for (int batch : {1, 16}) {
    SCOPED_TRACE(batch);
    C4Search search = MakeSearch(Position(kWinInOne), {.max_batch = batch});
    UniformEvaluator<ConnectFour> evaluator;
    ASSERT_TRUE(search.Run(evaluator, 200).ok());
    EXPECT_EQ(search.BestMove().column, 0);
    // The winning child is terminal, every visit worth exactly -1 for its (losing) side to move.
    const Node& root = search.root();
    for (std::uint32_t i = 0; i < root.num_children; ++i) {
      const Node& child = search.arena()[root.first_child + i];
      if (child.move != 0) continue;
      EXPECT_TRUE(child.IsTerminal());
      EXPECT_EQ(child.ValueSum(), -static_cast<std::int64_t>(child.N()) * kValueScale);
    }
    EXPECT_EQ(FindChild(search.RootChildren(), 0)->q, 1.0);
    ExpectConsistentTree(search);
  }
}

TEST(SearchTest, BlocksTheOpponentsWin) {
  C4Search search = MakeSearch(Position(kMustBlock));
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 800).ok());
  EXPECT_EQ(search.BestMove().column, 3);
  // Every other move lets O win at once: the search has seen it and values them below the block.
  const auto children = search.RootChildren();
  const double block_q = FindChild(children, 3)->q;
  for (const auto& child : children) {
    if (child.move.column != 3 && child.visits > 0) {
      EXPECT_LT(child.q, std::min(0.0, block_q)) << int{child.move.column};
    }
  }
}

TEST(SearchTest, ChildrenThatEndTheGameAreKnownAtExpansion) {
  // X wins in column 7 (index 6), the last in move order. With terminal children detected, the
  // first playout after the root's expansion plays the win, whatever the (uniform) priors and the
  // FPU; without, the first playout goes to column 1 (equal priors: move order).
  for (bool detect : {true, false}) {
    SCOPED_TRACE(detect);
    C4Search search =
        MakeSearch(Position("717171"), {.fpu_base = 1.0f, .detect_terminal_children = detect});
    UniformEvaluator<ConnectFour> evaluator;
    ASSERT_TRUE(search.Run(evaluator, 1).ok());
    const Node& root = search.root();
    const Node& win = search.arena()[root.first_child + [&] {
      for (std::uint32_t i = 0; i < root.num_children; ++i) {
        if (search.arena()[root.first_child + i].move == 6) return i;
      }
      return 0u;
    }()];
    EXPECT_EQ(win.IsTerminal(), detect);
    EXPECT_EQ(win.N(), detect ? 1u : 0u);
    ExpectConsistentTree(search);
  }
}

TEST(SearchTest, AMoveThatAllowsAWinInOneIsRefutedOnItsSecondVisit) {
  // O has three on the bottom row (columns 1-3) and X must block at 4. Every other move's subtree
  // holds O's win as a terminal child, so one visit below it refutes it: with 64 playouts the
  // block gets the most of them even with uniform priors and the FPU.
  C4Search search = MakeSearch(Position(kMustBlock), {.fpu_base = 1.0f});
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 64).ok());
  EXPECT_EQ(search.BestMove().column, 3);
  const auto children = search.RootChildren();
  EXPECT_GT(FindChild(children, 3)->policy, 0.4);
  for (const auto& child : children) {
    if (child.move.column != 3 && child.visits >= 2) {
      EXPECT_LT(child.q, -0.4) << int{child.move.column};
    }
  }
}

TEST(SearchTest, TheSolverProvesADoubleThreatAndPlaysIt) {
  // X holds columns 3 and 4 of the bottom row (O sits on top): X plays 2 or 5 for an open three,
  // two threats O cannot both block. Every O reply leaves X a win in one, so the solver closes O's
  // nodes as lost and X's move as a proven win, seen exactly by the root's selection.
  C4Search search = MakeSearch(Position("4433"), {.fpu_base = 1.0f});
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 300).ok());
  const int best = search.BestMove().column;
  EXPECT_TRUE(best == 1 || best == 4) << best;
  EXPECT_GT(search.stats().proven_nodes, 0u);
  const Node& root = search.root();
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const Node& child = search.arena()[root.first_child + i];
    if (child.move != best) continue;
    EXPECT_EQ(child.state, NodeState::kTerminal);
    EXPECT_EQ(child.outcome, games::GameOutcome::kLoss);  // lost for O, to move there
  }
  EXPECT_EQ(FindChild(search.RootChildren(), best)->q, 1.0);
  ExpectConsistentTree(search);

  // Without proofs the same search closes nothing.
  C4Search plain = MakeSearch(Position("4433"), {.fpu_base = 1.0f, .propagate_proofs = false});
  ASSERT_TRUE(plain.Run(evaluator, 300).ok());
  EXPECT_EQ(plain.stats().proven_nodes, 0u);
}

TEST(SearchTest, EveryNodeTheSolverClosesHasTheExactSolversValue) {
  // Searches along whole games (random evaluator values, so the search wanders into every kind of
  // line), then every closed node of each tree is checked against the exact solver.
  games::ConnectFourSolver solver(20);
  HashEvaluator<ConnectFour> evaluator(5);
  int checked = 0;
  for (const std::string_view start : {"", "4444", "33443", "1234567"}) {
    C4Search search = MakeSearch(Position(start), {.reuse_tree = false, .seed = 3});
    while (!games::IsTerminal(search.root_outcome())) {
      ASSERT_TRUE(search.Run(evaluator, 400).ok());
      // Walk the tree with the positions.
      std::vector<std::pair<std::uint32_t, ConnectFourPosition>> stack = {
          {search.root_index(), search.root_state()}};
      while (!stack.empty()) {
        const auto [index, position] = stack.back();
        stack.pop_back();
        const Node& node = search.arena()[index];
        if (node.state == NodeState::kTerminal && node.num_children > 0) {
          const int exact = solver.Solve(position);
          EXPECT_EQ(static_cast<int>(games::OutcomeValue(node.outcome)), exact)
              << "closed node at " << position.ToString();
          ++checked;
        }
        if (node.first_child == kNullNode) continue;
        for (std::uint32_t i = 0; i < node.num_children; ++i) {
          ConnectFourPosition next = position;
          next.Play(search.arena()[node.first_child + i].move);
          stack.push_back({node.first_child + i, next});
        }
      }
      search.Advance(search.BestMove());
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(SearchTest, TheRootIsNeverClosedAndKeepsSearchingItsMoves) {
  // X wins in one: the root's children prove it won, but the root stays open so that the search
  // spends its budget and reports the move.
  C4Search search = MakeSearch(Position("121212"));
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 50).ok());
  EXPECT_EQ(search.root().state, NodeState::kExpanded);
  EXPECT_EQ(search.RootChildVisits(), 50u);
  EXPECT_EQ(search.BestMove().column, 0);
}

TEST(SearchTest, VisitCountsAddUpToTheSimulations) {
  for (VirtualLoss mode : {VirtualLoss::kParentQ, VirtualLoss::kLoss}) {
    for (int batch : {1, 4, 16}) {
      for (int visits : {0, 1, 2, 57, 400}) {
        SCOPED_TRACE(std::to_string(batch) + " batch, " + std::to_string(visits) +
                     " visits, mode " + std::to_string(static_cast<int>(mode)));
        C4Search search = MakeSearch(Position("4453"), {.virtual_loss = mode, .max_batch = batch});
        HashEvaluator<ConnectFour> evaluator(7);
        ASSERT_TRUE(search.Run(evaluator, visits).ok());
        EXPECT_EQ(search.RootChildVisits(), static_cast<std::uint32_t>(visits));
        EXPECT_EQ(search.root().N(), static_cast<std::uint32_t>(visits) + 1);
        EXPECT_EQ(search.stats().playouts, static_cast<std::uint64_t>(visits) + 1);
        double policy = 0;
        for (const auto& child : search.RootChildren()) policy += child.policy;
        if (visits > 0) {
          EXPECT_NEAR(policy, 1.0, 1e-9);
        }
        ExpectConsistentTree(search);
      }
    }
  }
}

TEST(SearchTest, LossVirtualLossSpreadsOneTreesBatchWider) {
  std::uint64_t collisions[2];
  for (VirtualLoss mode : {VirtualLoss::kParentQ, VirtualLoss::kLoss}) {
    C4Search search = MakeSearch(ConnectFourPosition(), {.virtual_loss = mode, .max_batch = 16});
    HashEvaluator<ConnectFour> evaluator(4);
    ASSERT_TRUE(search.Run(evaluator, 800).ok());
    collisions[static_cast<int>(mode)] = search.stats().collisions;
    ExpectConsistentTree(search);
  }
  EXPECT_LT(collisions[1] * 2, collisions[0]);
}

// Both sides avoid completing four while they can; returns the moves of the first game that fills
// the board, as 1-based digits.
std::string DrawnGame() {
  std::uint64_t seed = 777;
  for (;;) {
    ConnectFourPosition position;
    std::string moves;
    while (!position.LastMoverWon() && !position.BoardFull()) {
      std::vector<int> quiet, all;
      for (int column = 0; column < 7; ++column) {
        if (!position.CanPlay(column)) continue;
        all.push_back(column);
        if (!position.IsWinningMove(column)) quiet.push_back(column);
      }
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const std::vector<int>& choice = quiet.empty() ? all : quiet;
      const int column = choice[(seed >> 33) % choice.size()];
      position.Play(column);
      moves += static_cast<char>('1' + column);
    }
    if (!position.LastMoverWon()) return moves;
  }
}

TEST(SearchTest, TerminalStatesAreNeverSentForEvaluation) {
  // Late in a game many playouts end in wins, losses and full boards.
  C4Search search = MakeSearch(Position(DrawnGame().substr(0, 26)), {.max_batch = 8});
  CheckingEvaluator<UniformEvaluator<ConnectFour>> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 3000).ok());
  EXPECT_GT(search.stats().terminal_playouts, 0u);
  EXPECT_EQ(static_cast<std::uint64_t>(evaluator.leaves), search.stats().evaluated_leaves);
  EXPECT_EQ(search.stats().evaluated_leaves + search.stats().terminal_playouts,
            search.stats().playouts);
  ExpectConsistentTree(search);
}

TEST(SearchTest, TerminalDrawIsValuedExactlyZero) {
  const std::string drawn = DrawnGame();
  // One move from the end: the only move fills the board without four.
  const ConnectFourPosition root = Position(std::string_view(drawn).substr(0, 41));
  for (float beta : {0.0f, 0.8f, -0.8f}) {
    SCOPED_TRACE(beta);
    C4Search search = MakeSearch(root, {.risk_beta = beta});
    UniformEvaluator<ConnectFour> evaluator;
    ASSERT_TRUE(search.Run(evaluator, 20).ok());
    const Node& child = search.arena()[search.root().first_child];
    ASSERT_EQ(search.root().num_children, 1);
    EXPECT_TRUE(child.IsTerminal());
    EXPECT_EQ(child.outcome, games::GameOutcome::kDraw);
    EXPECT_EQ(child.N(), 20u);
    EXPECT_EQ(child.ValueSum(), 0);
    EXPECT_EQ(child.DrawSum(), 20 * kValueScale);
    EXPECT_EQ(search.RootChildren()[0].q, 0.0);
    // 20 certain draws and the root's own uniform evaluation (1/3 each).
    const Wdl wdl = search.RootWdl();
    EXPECT_NEAR(wdl.win + wdl.draw + wdl.loss, 1.0, 1e-9);
    EXPECT_NEAR(wdl.draw, (20 + 1.0 / 3) / 21, 1e-3);
  }
}

TEST(SearchTest, TerminalRootIsAFailedPrecondition) {
  C4Search search = MakeSearch(Position("1212121"));
  EXPECT_EQ(search.root_outcome(), games::GameOutcome::kLoss);
  UniformEvaluator<ConnectFour> evaluator;
  EXPECT_EQ(search.Run(evaluator, 10).code(), StatusCode::kFailedPrecondition);
}

TEST(SearchTest, WinningRootReportsAWinningWdl) {
  C4Search search = MakeSearch(Position(kWinInOne));
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 400).ok());
  const Wdl wdl = search.RootWdl();
  EXPECT_NEAR(wdl.win + wdl.draw + wdl.loss, 1.0, 1e-9);
  EXPECT_GT(wdl.win, 0.8);
  EXPECT_GT(search.RootValue(), 0.7);
  EXPECT_GT(search.SoftValue(), 0.7);
  EXPECT_LE(search.SoftValue(), 1.0);
}

TEST(SearchTest, ZeroRiskBetaReportsThePlainMeanAndSoftValueIsItsVisitWeightedAverage) {
  C4Search search = MakeSearch(Position("4453"));
  HashEvaluator<ConnectFour> evaluator(3);
  ASSERT_TRUE(search.Run(evaluator, 300).ok());
  const Node& root = search.root();
  double weighted = 0;
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const Node& child = search.arena()[root.first_child + i];
    const auto stats = search.RootChildren()[i];
    if (child.N() == 0) continue;
    const double plain = -static_cast<double>(child.ValueSum()) / kValueScale / child.N();
    EXPECT_EQ(stats.q, plain);
    weighted += stats.policy * plain;
  }
  EXPECT_NEAR(search.SoftValue(), weighted, 1e-12);
}

TEST(SearchTest, RiskSettingsStillFindTheTactics) {
  for (float beta : {-1.0f, 1.0f}) {
    SCOPED_TRACE(beta);
    C4Search win = MakeSearch(Position(kWinInOne), {.risk_beta = beta});
    C4Search block = MakeSearch(Position(kMustBlock), {.risk_beta = beta, .max_batch = 8});
    UniformEvaluator<ConnectFour> evaluator;
    ASSERT_TRUE(win.Run(evaluator, 300).ok());
    ASSERT_TRUE(block.Run(evaluator, 800).ok());
    EXPECT_EQ(win.BestMove().column, 0);
    EXPECT_EQ(block.BestMove().column, 3);
    EXPECT_GE(block.SoftValue(), -1.0);
    EXPECT_LE(block.SoftValue(), 1.0);
    ExpectConsistentTree(block);
  }
}

TEST(SearchTest, RiskAversionPrefersTheSaferOfTwoEqualMeans) {
  // Two children with the same mean for the root, one certain, one a coin flip. beta < 0 values
  // the coin flip lower, beta > 0 higher; the search's own Q reports must agree.
  NodeArena arena(1u << 12);
  const std::uint32_t first = arena.Allocate(2);
  Node& safe = arena[first];
  Node& risky = arena[first + 1];
  safe.Init(0, QuantizePrior(0.5f));
  risky.Init(1, QuantizePrior(0.5f));
  safe.visits = 10;
  safe.value_sum = 0;
  safe.value_sq_sum = 0;
  risky.visits = 10;
  risky.value_sum = 0;
  risky.value_sq_sum = 10 * kValueScale;
  EXPECT_GT(ChildQ(safe, 0, {.risk_beta = -0.5}), ChildQ(risky, 0, {.risk_beta = -0.5}));
  EXPECT_LT(ChildQ(safe, 0, {.risk_beta = 0.5}), ChildQ(risky, 0, {.risk_beta = 0.5}));
  EXPECT_EQ(ChildQ(safe, 0, {.risk_beta = 0.0}), ChildQ(risky, 0, {.risk_beta = 0.0}));
}

TEST(SearchTest, StepwiseGatherHandsOutDistinctLeavesUnderVirtualLoss) {
  C4Search search = MakeSearch(ConnectFourPosition(), {.max_batch = 8});
  // A fresh tree has one leaf, the root; every further selection collides with it.
  C4Search::GatherResult first = search.Gather(8);
  EXPECT_EQ(first.leaves, 1);
  EXPECT_EQ(first.collisions, 8);
  EXPECT_EQ(search.root().VL(), 1u);
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(evaluator.Evaluate(search.leaves(), search.evals()).ok());
  search.Backup();
  EXPECT_EQ(search.root().VL(), 0u);

  // Grow the tree a little, then check a batch: distinct leaves, each pending with one virtual
  // loss per playout in flight on every node of its path.
  ASSERT_TRUE(search.Run(evaluator, 100).ok());
  const std::uint32_t visits = search.root().N();
  const C4Search::GatherResult batch = search.Gather(8);
  ASSERT_GT(batch.leaves, 1);
  EXPECT_EQ(batch.leaves + batch.terminal_playouts + batch.collisions >= 8, true);
  EXPECT_EQ(search.root().VL(), static_cast<std::uint32_t>(batch.leaves));
  std::uint32_t pending = 0, in_flight_children = 0;
  ForEachNode(search, [&](const Node& node) {
    if (node.state == NodeState::kPending) {
      ++pending;
      EXPECT_EQ(node.VL(), 1u);
    }
  });
  for (std::uint32_t i = 0; i < search.root().num_children; ++i) {
    in_flight_children += search.arena()[search.root().first_child + i].VL();
  }
  EXPECT_EQ(pending, static_cast<std::uint32_t>(batch.leaves));
  EXPECT_EQ(in_flight_children, static_cast<std::uint32_t>(batch.leaves));
  std::vector<ConnectFourPosition> states;
  for (const Leaf<ConnectFour>& leaf : search.leaves()) {
    const ConnectFourPosition position = LeafPosition(leaf);
    for (const ConnectFourPosition& seen : states) EXPECT_NE(seen, position);
    states.push_back(position);
    EXPECT_GT(position.moves_played(), 0);
  }
  ASSERT_TRUE(evaluator.Evaluate(search.leaves(), search.evals()).ok());
  search.Backup();
  EXPECT_EQ(search.root().N(), visits + batch.leaves + batch.terminal_playouts);
  ExpectConsistentTree(search);
}

TEST(SearchTest, CancelReturnsTheTreeToItsStateBeforeGather) {
  C4Search search = MakeSearch(Position("44"), {.max_batch = 16});
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 50).ok());
  const std::uint32_t visits = search.root().N();
  const C4Search::GatherResult gathered = search.Gather(16);
  ASSERT_GT(gathered.leaves, 0);
  search.Cancel();
  EXPECT_EQ(search.stats().cancelled_leaves, static_cast<std::uint64_t>(gathered.leaves));
  EXPECT_EQ(search.root().N(), visits + gathered.terminal_playouts);
  ExpectConsistentTree(search);
  ASSERT_TRUE(search.Run(evaluator, 200).ok());
  EXPECT_EQ(search.RootChildVisits(), 200u);
  ExpectConsistentTree(search);
}

// Fails on its `fail_on`-th call.
struct FailingEvaluator {
  int fail_on;
  int calls = 0;
  UniformEvaluator<ConnectFour> inner;
  Status Evaluate(std::span<const Leaf<ConnectFour>> leaves, std::span<LeafEval> evals) {
    if (++calls == fail_on) return Unavailable("evaluator went away");
    return inner.Evaluate(leaves, evals);
  }
};

TEST(SearchTest, EvaluatorErrorIsReturnedAndTheTreeStaysUsable) {
  C4Search search = MakeSearch(Position("4453"), {.max_batch = 4});
  FailingEvaluator failing{.fail_on = 5};
  const Status status = search.Run(failing, 100);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("evaluator went away"), std::string::npos);
  ExpectConsistentTree(search);
  UniformEvaluator<ConnectFour> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 100).ok());
  EXPECT_EQ(search.RootChildVisits(), 100u);
  ExpectConsistentTree(search);
}

struct GarbageEvaluator {
  Status Evaluate(std::span<const Leaf<ConnectFour>>, std::span<LeafEval> evals) {
    for (LeafEval& eval : evals) {
      for (float& p : eval.priors) p = -1.0f;
      eval.priors[0] = std::nanf("");
      eval.SetWdl(std::nanf(""), 0.0f, 0.0f);
    }
    return Status::Ok();
  }
};

TEST(SearchTest, MalformedEvaluationsAreSanitisedAndCounted) {
  C4Search search = MakeSearch(Position("4453"));
  GarbageEvaluator evaluator;
  ASSERT_TRUE(search.Run(evaluator, 100).ok());
  EXPECT_GT(search.stats().bad_evaluations, 0u);
  EXPECT_TRUE(std::isfinite(search.RootValue()));
  double prior_sum = 0;
  for (const auto& child : search.RootChildren()) prior_sum += child.prior;
  EXPECT_NEAR(prior_sum, 1.0, 1e-3);
  ExpectConsistentTree(search);
}

TEST(SearchTest, LeavesOfSeveralTreesShareOneEvaluatorBatch) {
  // The self-play layout: gather from many games, evaluate once, back each game up.
  const std::vector<std::string_view> games = {"4453", "1", "77", "444"};
  std::vector<C4Search> together, apart;
  for (std::string_view moves : games) {
    together.push_back(MakeSearch(Position(moves), {.max_batch = 8}));
    apart.push_back(MakeSearch(Position(moves), {.max_batch = 8}));
  }
  HashEvaluator<ConnectFour> evaluator(11);
  for (int round = 0; round < 30; ++round) {
    std::vector<Leaf<ConnectFour>> leaves;
    std::vector<LeafEval> evals;
    for (C4Search& search : together) {
      search.Gather(8);
      leaves.insert(leaves.end(), search.leaves().begin(), search.leaves().end());
      evals.insert(evals.end(), search.evals().begin(), search.evals().end());
    }
    // Each LeafEval points into its own search: one evaluation fills every tree's batch.
    ASSERT_TRUE(evaluator.Evaluate(leaves, evals).ok());
    for (C4Search& search : together) search.Backup();
    for (C4Search& search : apart) {
      search.Gather(8);
      ASSERT_TRUE(evaluator.Evaluate(search.leaves(), search.evals()).ok());
      search.Backup();
    }
  }
  for (std::size_t g = 0; g < games.size(); ++g) {
    ExpectConsistentTree(together[g]);
    const auto a = together[g].RootChildren();
    const auto b = apart[g].RootChildren();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].visits, b[i].visits);
  }
}

TEST(SearchTest, SameSeedSameSearch) {
  const SearchOptions options{.root_noise = true, .max_batch = 4, .seed = 99};
  C4Search a = MakeSearch(Position("44"), options);
  C4Search b = MakeSearch(Position("44"), options);
  HashEvaluator<ConnectFour> evaluator(5);
  ASSERT_TRUE(a.Run(evaluator, 300).ok());
  ASSERT_TRUE(b.Run(evaluator, 300).ok());
  const auto ca = a.RootChildren();
  const auto cb = b.RootChildren();
  ASSERT_EQ(ca.size(), cb.size());
  for (std::size_t i = 0; i < ca.size(); ++i) {
    EXPECT_EQ(ca[i].visits, cb[i].visits);
    EXPECT_EQ(ca[i].prior, cb[i].prior);
  }
}

TEST(SearchTest, RootNoiseMixesADirichletSampleIntoThePriors) {
  HashEvaluator<ConnectFour> evaluator(5);
  C4Search plain = MakeSearch(Position("44"));
  ASSERT_TRUE(plain.Run(evaluator, 0).ok());
  C4Search noisy = MakeSearch(Position("44"), {.root_noise = true, .seed = 1});
  ASSERT_TRUE(noisy.Run(evaluator, 0).ok());
  C4Search no_epsilon = MakeSearch(Position("44"), {.root_noise = true, .dirichlet_epsilon = 0.0f});
  ASSERT_TRUE(no_epsilon.Run(evaluator, 0).ok());
  const auto p = plain.RootChildren();
  const auto n = noisy.RootChildren();
  const auto z = no_epsilon.RootChildren();
  double noisy_sum = 0, max_change = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    noisy_sum += n[i].prior;
    // Mixing with epsilon 0.25 moves each prior by at most 0.25 and keeps at least 0.75 of it.
    EXPECT_GE(n[i].prior, 0.75f * p[i].prior - 1e-4f);
    EXPECT_LE(n[i].prior, 0.75f * p[i].prior + 0.25f + 1e-4f);
    max_change = std::max(max_change, std::fabs(double{n[i].prior} - p[i].prior));
    EXPECT_NEAR(z[i].prior, p[i].prior, 1e-4);
  }
  EXPECT_NEAR(noisy_sum, 1.0, 7.0 / 65535 + 1e-6);
  EXPECT_GT(max_change, 0.01);
}

TEST(SearchTest, SubtreeReuseKeepsTheChildsStatistics) {
  C4Search search = MakeSearch(Position("4453"), {.max_batch = 8});
  HashEvaluator<ConnectFour> evaluator(9);
  ASSERT_TRUE(search.Run(evaluator, 600).ok());
  const ConnectFourMove best = search.BestMove();
  // The statistics of the best child and of its children, before the move.
  const Node& root = search.root();
  std::uint32_t child_index = kNullNode;
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    if (search.arena()[root.first_child + i].move == best.column)
      child_index = root.first_child + i;
  }
  ASSERT_NE(child_index, kNullNode);
  const Node& old_child = search.arena()[child_index];
  const std::uint32_t visits = old_child.N();
  const std::int64_t value_sum = old_child.ValueSum();
  std::vector<std::uint32_t> grandchild_visits;
  for (std::uint32_t i = 0; i < old_child.num_children; ++i) {
    grandchild_visits.push_back(search.arena()[old_child.first_child + i].N());
  }

  search.Advance(best);
  EXPECT_EQ(search.stats().inherited_visits, visits);
  EXPECT_EQ(search.root().N(), visits);
  EXPECT_EQ(search.root().ValueSum(), value_sum);
  ASSERT_EQ(search.root().num_children, grandchild_visits.size());
  for (std::uint32_t i = 0; i < search.root().num_children; ++i) {
    EXPECT_EQ(search.arena()[search.root().first_child + i].N(), grandchild_visits[i]);
  }
  ConnectFourPosition expected = Position("4453");
  expected.Play(best.column);
  EXPECT_EQ(search.root_state(), expected);
  ExpectConsistentTree(search);

  // Inherited visits count toward the next search: only the difference is played out.
  const std::uint64_t playouts_before = search.stats().playouts;
  const std::uint32_t inherited = search.RootChildVisits();
  ASSERT_TRUE(search.Run(evaluator, 600).ok());
  EXPECT_EQ(search.RootChildVisits(), 600u);
  EXPECT_EQ(search.stats().playouts - playouts_before, 600u - inherited);
  ExpectConsistentTree(search);
}

TEST(SearchTest, AdvanceStartsFreshWithoutReuseOrAnExpandedChild) {
  HashEvaluator<ConnectFour> evaluator(9);
  C4Search no_reuse = MakeSearch(Position("4453"), {.reuse_tree = false});
  ASSERT_TRUE(no_reuse.Run(evaluator, 300).ok());
  no_reuse.Advance(no_reuse.BestMove());
  EXPECT_EQ(no_reuse.root().N(), 0u);
  EXPECT_EQ(no_reuse.stats().inherited_visits, 0u);

  C4Search shallow = MakeSearch(Position("4453"));
  ASSERT_TRUE(shallow.Run(evaluator, 0).ok());  // only the root is expanded
  shallow.Advance(ConnectFourMove{0});
  EXPECT_EQ(shallow.root().N(), 0u);
  ASSERT_TRUE(shallow.Run(evaluator, 50).ok());
  EXPECT_EQ(shallow.RootChildVisits(), 50u);
  ExpectConsistentTree(shallow);
}

TEST(SearchTest, AWholeGameWithReuseAndNoiseKeepsTheTreeConsistent) {
  C4Search search = MakeSearch(ConnectFourPosition(), {.root_noise = true, .max_batch = 8});
  HashEvaluator<ConnectFour> evaluator(13);
  const TemperatureOptions temperature{.moves = 8};
  int ply = 0;
  while (!games::IsTerminal(search.root_outcome())) {
    ASSERT_TRUE(search.Run(evaluator, 200).ok());
    const std::uint32_t inherited = search.stats().inherited_visits;
    EXPECT_EQ(search.RootChildVisits(), std::max(200u, inherited > 0 ? inherited - 1 : 0u));
    ExpectConsistentTree(search);
    const ConnectFourMove move = search.SelectMove(temperature.AtPly(ply));
    const auto children = search.RootChildren();
    const auto* chosen = FindChild(children, move.column);
    ASSERT_NE(chosen, nullptr);
    EXPECT_GT(chosen->visits, 0u);
    search.Advance(move);
    ++ply;
  }
  EXPECT_GE(ply, 7);
  EXPECT_LE(ply, 42);
}

TEST(SearchTest, KeepsSearchingWhenTheArenaIsFull) {
  C4Search search = MakeSearch(ConnectFourPosition(), {.max_batch = 4, .max_nodes = 1024});
  HashEvaluator<ConnectFour> evaluator(2);
  ASSERT_TRUE(search.Run(evaluator, 3000).ok());
  EXPECT_EQ(search.RootChildVisits(), 3000u);
  EXPECT_GT(search.stats().unexpanded_full, 0u);
  EXPECT_LE(search.arena().used(), 4096u);
  ForEachNode(search, [](const Node& node) { EXPECT_EQ(node.VL(), 0u); });
}

TEST(SearchTest, InvalidOptionsAreRejected) {
  EXPECT_EQ(C4Search::Create({.c_puct = 0.0f}, ConnectFourPosition()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(C4Search::Create({.dirichlet_epsilon = 1.5f}, ConnectFourPosition()).ok());
  EXPECT_FALSE(C4Search::Create({.max_batch = 0}, ConnectFourPosition()).ok());
  EXPECT_FALSE(C4Search::Create({.risk_beta = std::nanf("")}, ConnectFourPosition()).ok());
  EXPECT_TRUE(C4Search::Create({}, ConnectFourPosition()).ok());
}

}  // namespace
}  // namespace az::mcts
