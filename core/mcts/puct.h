#pragma once

// The selection formulas, as pure functions of node statistics, so that they can be checked on
// hand-made trees. Every Q here is from the point of view of the PARENT's side to move.
//
//   score(s,a) = Q(s,a) + c_puct * P(s,a) * sqrt(N(s)) / (1 + N(s,a) + VL(s,a))
//   Q(s,a), unvisited, no virtual loss:  Q_parent - fpu_base * (1 - P(s,a))    (dynamic FPU)
//   Q(s,a), terminal child:               its exact value (a win 1, a draw -draw_score, a loss -1),
//                                         visited or not (a node the solver closed, docs/mcts.md)
//   Q(s,a), unvisited, virtual loss:     q_vl
//   Q(s,a), visited:                     m1 = (sum v + VL * q_vl) / (N + VL)
//     risk_beta == 0:                    m1
//     risk_beta != 0:                    clamp(m1 + beta / 2 * max(0, m2 - m1^2), -1, 1),
//                                        m2 = (sum v^2 + VL * q_vl^2) / (N + VL)
// where q_vl, the value of a playout in flight, is Q_parent (VirtualLoss::kParentQ, the issue's
// formula) or -1 (VirtualLoss::kLoss). Q_parent is the parent's plain mean: FPU and the
// virtual-loss blend stay risk-neutral. Terminal children hold exact sums (every visit +-1 or 0),
// so a terminal draw is exactly 0 and a terminal win or loss has zero variance under any beta.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/mcts/node.h"
#include "core/mcts/node_arena.h"
#include "core/mcts/options.h"

namespace az::mcts {

struct PuctParams {
  double c_puct = 1.5;
  double fpu_base = 1.0;
  double risk_beta = 0.0;
  bool virtual_loss_is_loss = false;  // VirtualLoss::kLoss
  double draw_score = 0.0;

  static PuctParams From(const SearchOptions& options) {
    return {options.c_puct, options.fpu_base, options.risk_beta,
            options.virtual_loss == VirtualLoss::kLoss, options.draw_score};
  }
};

// The exact value of a terminal child for its parent's side to move (the child's outcome is for
// the side to move there: a loss there is a win here; a draw is worth draw_score to the side to
// move there).
inline double TerminalChildQ(const Node& child, const PuctParams& params) {
  const bool draw = child.outcome == games::GameOutcome::kDraw;
  return -(games::OutcomeValue(child.outcome) + (draw ? params.draw_score : 0.0));
}

// Q(s,a) of `child` for the parent, whose own mean is `q_parent`.
inline double ChildQ(const Node& child, double q_parent, const PuctParams& params) {
  if (child.state == NodeState::kTerminal) return TerminalChildQ(child, params);
  const std::uint32_t n = child.N();
  const std::uint32_t vl = child.VL();
  const double q_vl = params.virtual_loss_is_loss ? -1.0 : q_parent;
  if (n == 0) return vl == 0 ? q_parent - params.fpu_base * (1.0 - child.Prior()) : q_vl;
  const double total = static_cast<double>(n) + vl;
  const double sum = -static_cast<double>(child.ValueSum()) / kValueScale;
  const double mean = (sum + vl * q_vl) / total;
  if (params.risk_beta == 0.0) return mean;
  const double sq_sum = static_cast<double>(child.ValueSqSum()) / kValueScale;
  const double second = (sq_sum + vl * q_vl * q_vl) / total;
  const double variance = std::max(0.0, second - mean * mean);
  return std::clamp(mean + 0.5 * params.risk_beta * variance, -1.0, 1.0);
}

inline double PuctScore(const Node& child, double q_parent, double sqrt_parent_visits,
                        const PuctParams& params) {
  const double exploration =
      params.c_puct * child.Prior() * sqrt_parent_visits / (1.0 + child.N() + child.VL());
  return ChildQ(child, q_parent, params) + exploration;
}

// The index of the child of `parent` (expanded, checked) with the highest score; the first on ties,
// which is the higher prior since children are stored by decreasing prior.
//
// Only children [0, num_started] are scored. The children never selected, [num_started, end), are
// in decreasing prior order and have no visits and no virtual loss, so their score
// Q_parent - fpu_base * (1 - P) + c_puct * P * sqrt(N) rises with P: the first of them beats the
// rest. Selecting that first one extends the prefix. (A prefix child may be back at N = 0 after a
// Cancel; it is still scored.) Whoever changes priors out of order (root noise) sets num_started to
// num_children, and every child is scored.
inline std::uint32_t SelectChild(const NodeArena& arena, Node& parent, const PuctParams& params) {
  AZ_CHECK(parent.state == NodeState::kExpanded && parent.num_children > 0, "select on a leaf");
  const double q_parent = parent.Mean();
  const double sqrt_n = std::sqrt(static_cast<double>(parent.N()));
  const Node* children = &arena[parent.first_child];
  const std::uint32_t scan = std::min<std::uint32_t>(parent.num_started + 1u, parent.num_children);
  double best = -std::numeric_limits<double>::infinity();
  std::uint32_t best_index = 0;
  for (std::uint32_t i = 0; i < scan; ++i) {
    const double score = PuctScore(children[i], q_parent, sqrt_n, params);
    if (score > best) {
      best = score;
      best_index = i;
    }
  }
  if (best_index == parent.num_started) ++parent.num_started;
  return parent.first_child + best_index;
}

// The root's soft value: the entropic risk of the root's value taken as the visit-weighted mixture
// of its visited children, (1/beta) log sum_a (N_a / N) exp(beta Q_a), with Q_a the children's
// (risk-adjusted) Q, shifted by the largest beta * Q_a so that no exponential overflows. For beta =
// 0 it is the limit, the visit-weighted mean of Q_a. The root's plain mean when no child is
// visited.
inline double RootSoftValue(const NodeArena& arena, const Node& root, const PuctParams& params) {
  if (root.state != NodeState::kExpanded) return root.Mean();
  const double q_parent = root.Mean();
  const Node* children = &arena[root.first_child];
  double total = 0.0;
  double max_exponent = -std::numeric_limits<double>::infinity();
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    if (children[i].N() == 0) continue;
    total += children[i].N();
    max_exponent = std::max(max_exponent, params.risk_beta * ChildQ(children[i], q_parent, params));
  }
  if (total == 0.0) return q_parent;
  double accumulated = 0.0;
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    if (children[i].N() == 0) continue;
    const double weight = children[i].N() / total;
    const double q = ChildQ(children[i], q_parent, params);
    accumulated += params.risk_beta == 0.0 ? weight * q
                                           : weight * std::exp(params.risk_beta * q - max_exponent);
  }
  if (params.risk_beta == 0.0) return accumulated;
  return (max_exponent + std::log(accumulated)) / params.risk_beta;
}

}  // namespace az::mcts
