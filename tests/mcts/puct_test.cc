#include "core/mcts/puct.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/mcts/node.h"
#include "core/mcts/node_arena.h"

namespace az::mcts {
namespace {

// A hand-made node. Values are given from the CHILD's own view, as the tree stores them.
void SetNode(Node& node, float prior, std::uint32_t visits, std::uint32_t virtual_loss,
             double value_sum, double value_sq_sum) {
  node.Init(0, QuantizePrior(prior));
  node.visits = visits;
  node.virtual_loss = virtual_loss;
  node.value_sum = ToFixed(value_sum);
  node.value_sq_sum = ToFixed(value_sq_sum);
}

TEST(PuctTest, UnvisitedChildWithoutVirtualLossUsesDynamicFpu) {
  Node child;
  SetNode(child, 0.25f, 0, 0, 0, 0);
  const PuctParams params{.c_puct = 1.5, .fpu_base = 1.0, .risk_beta = 0.0};
  EXPECT_NEAR(ChildQ(child, 0.3, params), 0.3 - 1.0 * (1 - 0.25), 1e-4);
  const PuctParams half{.c_puct = 1.5, .fpu_base = 0.5, .risk_beta = 0.7};  // FPU is risk-neutral
  EXPECT_NEAR(ChildQ(child, 0.3, half), 0.3 - 0.5 * (1 - 0.25), 1e-4);
}

TEST(PuctTest, UnvisitedChildWithVirtualLossTakesTheParentsQ) {
  Node child;
  SetNode(child, 0.25f, 0, 2, 0, 0);
  EXPECT_DOUBLE_EQ(ChildQ(child, -0.4, PuctParams{}), -0.4);
}

TEST(PuctTest, VisitedChildBlendsVirtualLossWithTheParentsQ) {
  // Four visits worth -0.8 for the child's side, i.e. +0.8 for the parent; two in flight.
  Node child;
  SetNode(child, 0.1f, 4, 2, -0.8, 0.5);
  const double q_parent = 0.1;
  EXPECT_NEAR(ChildQ(child, q_parent, PuctParams{}), (0.8 + 2 * q_parent) / 6, 1e-9);
  child.virtual_loss = 0;
  EXPECT_NEAR(ChildQ(child, q_parent, PuctParams{}), 0.2, 1e-9);
}

TEST(PuctTest, LossModeCountsEachPlayoutInFlightAsALoss) {
  const PuctParams loss{.virtual_loss_is_loss = true};
  Node child;
  SetNode(child, 0.25f, 0, 0, 0, 0);
  EXPECT_NEAR(ChildQ(child, 0.3, loss), 0.3 - 0.75, 1e-4);  // no VL: FPU as before
  child.virtual_loss = 1;
  EXPECT_EQ(ChildQ(child, 0.3, loss), -1.0);
  SetNode(child, 0.1f, 4, 2, -0.8, 0.5);
  EXPECT_NEAR(ChildQ(child, 0.1, loss), (0.8 - 2) / 6, 1e-9);
  const PuctParams risky{.risk_beta = -1.0, .virtual_loss_is_loss = true};
  const double m1 = (0.8 - 2) / 6, m2 = (0.5 + 2) / 6;
  EXPECT_NEAR(ChildQ(child, 0.1, risky), m1 - 0.5 * (m2 - m1 * m1), 1e-4);
}

TEST(PuctTest, ZeroRiskBetaIsExactlyThePlainMean) {
  // Whatever the squares hold, beta = 0 never reads them.
  Node child;
  for (std::uint32_t vl : {0u, 3u}) {
    SetNode(child, 0.3f, 5, vl, 1.7, 4.9);
    const double q_parent = -0.2;
    const double plain = (-1.7 + vl * q_parent) / (5 + vl);
    EXPECT_EQ(ChildQ(child, q_parent, PuctParams{.risk_beta = 0.0}), plain);
  }
}

TEST(PuctTest, EntropicRiskAddsHalfBetaTimesTheVariance) {
  // Child values (child's view) 1, -1, -1, 1, -0.5: parent's view -1, 1, 1, -1, 0.5.
  Node child;
  SetNode(child, 0.2f, 5, 0, -0.5, 4.25);
  const double mean = 0.5 / 5;
  const double variance = 4.25 / 5 - mean * mean;
  for (double beta : {0.5, -0.5, -2.0}) {
    EXPECT_NEAR(ChildQ(child, 0.0, PuctParams{.risk_beta = beta}), mean + beta / 2 * variance, 1e-4)
        << beta;
  }
  // With virtual loss, VL pseudo-visits of value Q_parent enter both moments.
  child.virtual_loss = 3;
  const double q_parent = 0.4;
  const double m1 = (0.5 + 3 * q_parent) / 8;
  const double m2 = (4.25 + 3 * q_parent * q_parent) / 8;
  EXPECT_NEAR(ChildQ(child, q_parent, PuctParams{.risk_beta = -1.0}), m1 - 0.5 * (m2 - m1 * m1),
              1e-4);
}

TEST(PuctTest, EntropicRiskClampsToPlusMinusOneAndVarianceAtZero) {
  Node child;
  // Parent's view mean 0.9 with variance 0.19 (values 1 x 19 and -1 x 1 ... scaled): beta 10 would
  // go past 1.
  SetNode(child, 0.2f, 20, 0, -18.0, 20.0);
  EXPECT_EQ(ChildQ(child, 0.0, PuctParams{.risk_beta = 10.0}), 1.0);
  EXPECT_EQ(ChildQ(child, 0.0, PuctParams{.risk_beta = -100.0}), -1.0);
  // Rounded sums can make E[v^2] - E[v]^2 slightly negative: the variance is clamped at 0.
  SetNode(child, 0.2f, 3, 0, -1.5, 0.7499);  // three visits of 0.5: E[v^2] is 0.25 minus rounding
  EXPECT_NEAR(ChildQ(child, 0.0, PuctParams{.risk_beta = 1.0}), 0.5, 1e-9);
}

TEST(PuctTest, TerminalDrawIsExactlyZeroUnderAnyBeta) {
  Node child;
  child.Init(0, QuantizePrior(0.5f));
  child.state = NodeState::kTerminal;
  child.outcome = games::GameOutcome::kDraw;
  child.visits = 7;
  child.draw_sum = 7 * kValueScale;
  for (double beta : {0.0, 0.5, -3.0}) {
    EXPECT_EQ(ChildQ(child, 0.37, PuctParams{.risk_beta = beta}), 0.0);
  }
}

TEST(PuctTest, SelectChildMaximisesThePuctScore) {
  NodeArena arena(1u << 12);
  const std::uint32_t parent_index = arena.Allocate(1);
  const std::uint32_t first = arena.Allocate(3);
  Node& parent = arena[parent_index];
  parent.Init(0, 0);
  parent.state = NodeState::kExpanded;
  parent.first_child = first;
  parent.num_children = 3;
  parent.num_started = 3;  // hand-made: every child counts as started, all are scored
  parent.visits = 11;
  parent.value_sum = ToFixed(1.1);                   // Q_parent = 0.1
  SetNode(arena[first + 0], 0.5f, 6, 0, -0.6, 0.6);  // Q 0.1
  SetNode(arena[first + 1], 0.3f, 4, 0, 2.0, 1.0);   // Q -0.5
  SetNode(arena[first + 2], 0.2f, 0, 0, 0, 0);       // FPU 0.1 - 0.8 = -0.7
  const PuctParams params;
  std::vector<double> scores;
  for (int i = 0; i < 3; ++i) {
    const Node& child = arena[first + i];
    const double u = 1.5 * child.Prior() * std::sqrt(11.0) / (1 + child.N() + child.VL());
    scores.push_back(ChildQ(child, 0.1, params) + u);
    EXPECT_NEAR(PuctScore(child, 0.1, std::sqrt(11.0), params), scores.back(), 1e-12);
  }
  const int best =
      static_cast<int>(std::max_element(scores.begin(), scores.end()) - scores.begin());
  EXPECT_EQ(SelectChild(arena, parent, params), first + best);
  // Enough virtual loss on the favourite moves the selection elsewhere.
  arena[first + best].virtual_loss = 50;
  EXPECT_NE(SelectChild(arena, parent, params), first + best);
}

TEST(PuctTest, SelectionScoresTheStartedPrefixAndTheFirstUnstartedChildOnly) {
  // Six children by decreasing prior; the first two were selected before. Whatever the scores of
  // the never-selected tail, the first of them is the best of them, so scanning three children
  // gives the same choice as scanning all six.
  NodeArena arena(1u << 12);
  const std::uint32_t first = arena.Allocate(6);
  Node parent;
  parent.Init(0, 0);
  parent.state = NodeState::kExpanded;
  parent.first_child = first;
  parent.num_children = 6;
  const float priors[6] = {0.4f, 0.2f, 0.15f, 0.1f, 0.1f, 0.05f};
  for (int i = 0; i < 6; ++i) SetNode(arena[first + i], priors[i], 0, 0, 0, 0);
  for (const PuctParams params :
       {PuctParams{}, PuctParams{.fpu_base = 0.0}, PuctParams{.c_puct = 5.0, .fpu_base = 0.3}}) {
    for (double child_value : {-0.9, 0.0, 0.9}) {  // the started children's value, child's view
      for (std::uint32_t parent_visits : {3u, 30u, 3000u}) {
        parent.num_started = 2;
        parent.visits = parent_visits;
        parent.value_sum = ToFixed(0.1 * parent_visits);
        SetNode(arena[first + 0], priors[0], 2, 0, 2 * child_value, 2 * child_value * child_value);
        SetNode(arena[first + 1], priors[1], 1, 0, child_value, child_value * child_value);
        double best = -1e9;
        std::uint32_t full_scan = 0;
        for (std::uint32_t i = 0; i < 6; ++i) {
          const double score = PuctScore(arena[first + i], parent.Mean(),
                                         std::sqrt(static_cast<double>(parent_visits)), params);
          if (score > best) {
            best = score;
            full_scan = first + i;
          }
        }
        const std::uint32_t chosen = SelectChild(arena, parent, params);
        EXPECT_EQ(chosen, full_scan);
        // Choosing the first never-selected child extends the prefix.
        EXPECT_EQ(parent.num_started, chosen == first + 2 ? 3 : 2);
      }
    }
  }
}

TEST(PuctTest, RootSoftValueIsTheVisitWeightedLogSumExp) {
  NodeArena arena(1u << 12);
  const std::uint32_t root_index = arena.Allocate(1);
  const std::uint32_t first = arena.Allocate(3);
  Node& root = arena[root_index];
  root.Init(0, 0);
  root.state = NodeState::kExpanded;
  root.first_child = first;
  root.num_children = 3;
  root.visits = 10;
  SetNode(arena[first + 0], 0.5f, 6, 0, -3.0, 1.5);  // Q 0.5 for the root, all visits 0.5
  SetNode(arena[first + 1], 0.3f, 3, 0, 0.6, 0.12);  // Q -0.2, all visits -0.2
  SetNode(arena[first + 2], 0.2f, 0, 0, 0, 0);       // unvisited: left out
  const double w0 = 6.0 / 9, w1 = 3.0 / 9;
  EXPECT_NEAR(RootSoftValue(arena, root, PuctParams{.risk_beta = 0.0}), w0 * 0.5 + w1 * -0.2, 1e-4);
  for (double beta : {1.0, -1.0, 3.0}) {
    const double direct = std::log(w0 * std::exp(beta * 0.5) + w1 * std::exp(beta * -0.2)) / beta;
    EXPECT_NEAR(RootSoftValue(arena, root, PuctParams{.risk_beta = beta}), direct, 1e-4) << beta;
  }
  // Large |beta| tends to the best (beta > 0) or worst (beta < 0) visited child, without overflow.
  EXPECT_NEAR(RootSoftValue(arena, root, PuctParams{.risk_beta = 100.0}), 0.5, 0.01);
  EXPECT_NEAR(RootSoftValue(arena, root, PuctParams{.risk_beta = -100.0}), -0.2, 0.02);
}

}  // namespace
}  // namespace az::mcts
