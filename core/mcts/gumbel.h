#pragma once

// Gumbel AlphaZero's root search (Danihelka et al., "Policy improvement by planning with Gumbel",
// ICLR 2022), as pure functions over the root's children, so that they can be checked by hand:
//
//   noise        g(a) ~ Gumbel(0, 1), drawn once per root (self-play); 0 for analysis
//   considered   the top m = min(max_considered, legal moves) actions by g(a) + logit(a)
//   halving      sequential halving over the visit budget n: every considered action gets the
//                same visits per phase, then the better half by g + logit + sigma(q) goes on;
//                played out as DeepMind's mctx does it, by a table that gives, for the i-th
//                simulation, the visit count an action must have to be eligible (ConsideredVisits)
//   completed Q  q(a) for a visited action, else v_mix, the network's value of the root mixed
//                with the prior-weighted Q of the visited actions (CompletedQ)
//   sigma        (c_visit + max_b N(b)) * c_scale * q^(a), q^ the completed Qs rescaled to [0, 1]
//   target       pi'(a) = softmax(logit(a) + sigma(q(a))): the policy training target, an
//                improvement over the prior for any budget
//   move         among the most visited actions, argmax g(a) + logit(a) + sigma(q(a))
//
// Every Q here is from the point of view of the root's side to move, in [-1, 1].

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/base/check.h"

namespace az::mcts {

struct GumbelParams {
  int max_considered = 16;  // m: actions sampled without replacement at the root
  double c_visit = 50.0;    // sigma's visit offset
  double c_scale = 0.1;     // sigma's scale (mctx's value_scale)
};

// The visit count that the action searched by simulation i (0-based, i < simulations) must have,
// for each i: mctx's get_sequence_of_considered_visits. `considered` >= 1, `simulations` >= 0.
inline std::vector<std::uint32_t> ConsideredVisits(int considered, int simulations) {
  AZ_CHECK(considered >= 1 && simulations >= 0);
  std::vector<std::uint32_t> sequence;
  sequence.reserve(static_cast<std::size_t>(simulations));
  if (considered == 1) {
    for (int i = 0; i < simulations; ++i) sequence.push_back(static_cast<std::uint32_t>(i));
    return sequence;
  }
  const int log2max = static_cast<int>(std::ceil(std::log2(static_cast<double>(considered))));
  std::vector<std::uint32_t> visits(static_cast<std::size_t>(considered), 0);
  int num_considered = considered;
  while (static_cast<int>(sequence.size()) < simulations) {
    const int extra = std::max(1, simulations / (log2max * num_considered));
    for (int k = 0; k < extra; ++k) {
      for (int i = 0; i < num_considered; ++i) sequence.push_back(visits[i]++);
    }
    num_considered = std::max(2, num_considered / 2);
  }
  sequence.resize(static_cast<std::size_t>(simulations));
  return sequence;
}

// One root child as the Gumbel formulas see it.
struct GumbelChild {
  double logit = 0.0;       // log prior (any common shift)
  double gumbel = 0.0;      // g(a); 0 without noise
  std::uint32_t visits = 0;     // N(a): backed-up playouts
  std::uint32_t in_flight = 0;  // playouts on their way down through a (count for eligibility)
  bool exact = false;           // q is the exact value (the game ends there): used even unvisited
  double q = 0.0;               // Q(a) for the root's side to move; read when visits > 0 or exact
};

// v_mix: (v_root + sum_b N(b) * sum_{visited a} p(a) q(a) / sum_{visited a} p(a)) / (1 + sum_b
// N(b)), p the softmax of the logits; the network's value when nothing is visited.
inline double MixedValue(double raw_value, std::span<const GumbelChild> children) {
  double max_logit = -std::numeric_limits<double>::infinity();
  for (const GumbelChild& c : children) max_logit = std::max(max_logit, c.logit);
  double visits = 0.0, prior_sum = 0.0, weighted = 0.0;
  for (const GumbelChild& c : children) {
    if (c.visits == 0) continue;
    const double p = std::max(std::exp(c.logit - max_logit), 1e-30);
    visits += c.visits;
    prior_sum += p;
    weighted += p * c.q;
  }
  if (visits == 0.0) return raw_value;
  return (raw_value + visits * (weighted / prior_sum)) / (visits + 1.0);
}

// sigma(completed q) for every child, into `out` (same size): Q for visited children, v_mix for
// the rest, rescaled to [0, 1] over the children, times (c_visit + max N) * c_scale.
inline void CompletedSigma(double raw_value, std::span<const GumbelChild> children,
                           const GumbelParams& params, std::span<double> out) {
  AZ_CHECK(out.size() == children.size());
  const double mixed = MixedValue(raw_value, children);
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  std::uint32_t max_visits = 0;
  for (std::size_t i = 0; i < children.size(); ++i) {
    out[i] = children[i].visits > 0 || children[i].exact ? children[i].q : mixed;
    lo = std::min(lo, out[i]);
    hi = std::max(hi, out[i]);
    max_visits = std::max(max_visits, children[i].visits);
  }
  const double scale = (params.c_visit + max_visits) * params.c_scale;
  const double range = std::max(hi - lo, 1e-8);
  for (double& v : out) v = scale * (v - lo) / range;
}

// pi' = softmax(logit + sigma) into `out` (same size as `children`): non-negative, sums to 1.
inline void ImprovedPolicy(double raw_value, std::span<const GumbelChild> children,
                           const GumbelParams& params, std::span<double> out) {
  CompletedSigma(raw_value, children, params, out);
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < children.size(); ++i) {
    out[i] += children[i].logit;
    top = std::max(top, out[i]);
  }
  double total = 0.0;
  for (double& v : out) total += (v = std::exp(v - top));
  for (double& v : out) v /= total;
}

// The child the next simulation visits: among those whose visits (in flight included) equal
// `considered_visit`, the highest g + logit + sigma. When none has exactly that many (playouts
// in flight, or simulations beyond the planned budget), the highest score among the most visited:
// the search goes on deepening the actions that survived the halving. `sigma` as CompletedSigma.
inline std::size_t GumbelSelect(std::span<const GumbelChild> children,
                                std::span<const double> sigma, std::uint32_t considered_visit) {
  AZ_CHECK(!children.empty() && sigma.size() == children.size());
  std::uint32_t most = 0;
  bool exact = false;
  for (const GumbelChild& c : children) {
    most = std::max(most, c.visits + c.in_flight);
    exact = exact || c.visits + c.in_flight == considered_visit;
  }
  const std::uint32_t wanted = exact ? considered_visit : most;
  std::size_t best = children.size();
  double best_score = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (children[i].visits + children[i].in_flight != wanted) continue;
    const double score = children[i].gumbel + children[i].logit + sigma[i];
    if (best == children.size() || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

// The move to play: among the most visited children, argmax g + logit + sigma (pass gumbel 0 for
// the deterministic choice). At least one child must be visited (checked).
inline std::size_t GumbelFinalMove(std::span<const GumbelChild> children,
                                   std::span<const double> sigma, bool use_gumbel) {
  std::uint32_t most = 0;
  for (const GumbelChild& c : children) most = std::max(most, c.visits);
  AZ_CHECK(most > 0, "no move before the root is searched");
  std::size_t best = children.size();
  double best_score = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (children[i].visits != most) continue;
    const double score = (use_gumbel ? children[i].gumbel : 0.0) + children[i].logit + sigma[i];
    if (best == children.size() || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

}  // namespace az::mcts
