#pragma once

// Policy-surprise weighting (KataGo, Wu 2019): a finished game's samples go into the replay buffer
// a number of times that grows with how much the search moved the policy away from the network's
// prior there (the KL divergence of the policy target from the prior), so that the learner spends
// more of its draws where its network was wrong and fewer where the search only agreed with it.
// A game's samples keep their number in expectation: sample i gets, in expectation,
//
//   (1 - weight) + weight * surprise_i / (mean surprise over the game's samples)
//
// copies (all 1 when the game's surprise is zero everywhere), an integer count drawn by rounding
// at random, so that a sample of a game may also be left out. weight 0: every sample once.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "core/mcts/random.h"

namespace az::selfplay {

// KL(target || prior) over a root's moves, in nats: sum of t * log(t / p) over t > 0. A prior of
// zero under a positive target is taken as 1e-6 (the quantized priors have no exact zeros that
// matter; the cap keeps one move from dominating a game's weights).
inline double PolicySurprise(std::span<const double> target, std::span<const float> prior) {
  double kl = 0.0;
  const std::size_t n = std::min(target.size(), prior.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (target[i] <= 0.0) continue;
    kl += target[i] * std::log(target[i] / std::max(static_cast<double>(prior[i]), 1e-6));
  }
  return std::max(kl, 0.0);
}

// `expected` (>= 0) rounded down, or up with probability its fraction: an integer count of copies
// that is `expected` on average.
inline int RoundAtRandom(double expected, mcts::Rng& rng) {
  const double whole = std::floor(expected);
  return static_cast<int>(whole) + (rng.Uniform() < expected - whole ? 1 : 0);
}

// The number of copies of each sample (see above), drawn with `rng`. `weight` in [0, 1].
inline std::vector<int> SurpriseCopies(std::span<const double> surprise, double weight,
                                       mcts::Rng& rng) {
  std::vector<int> copies(surprise.size(), 1);
  if (weight <= 0.0 || surprise.empty()) return copies;
  double sum = 0.0;
  for (const double s : surprise) sum += s;
  if (!(sum > 0.0)) return copies;
  const double mean = sum / static_cast<double>(surprise.size());
  for (std::size_t i = 0; i < surprise.size(); ++i) {
    copies[i] = RoundAtRandom((1.0 - weight) + weight * surprise[i] / mean, rng);
  }
  return copies;
}

}  // namespace az::selfplay
