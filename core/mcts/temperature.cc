#include "core/mcts/temperature.h"

#include <cmath>

#include "core/base/check.h"

namespace az::mcts {

std::size_t SampleByTemperature(std::span<const std::uint32_t> visits, float tau, Rng& rng) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < visits.size(); ++i) {
    if (visits[i] > visits[best]) best = i;
  }
  AZ_CHECK(!visits.empty() && visits[best] > 0, "temperature selection needs a visited move");
  if (tau <= 0.0f) return best;
  // Scale by the largest count first: (N_i / N_max)^(1/tau) never overflows, even for a small tau.
  const double exponent = 1.0 / tau;
  const double max_visits = visits[best];
  double total = 0.0;
  for (std::uint32_t n : visits) total += n == 0 ? 0.0 : std::pow(n / max_visits, exponent);
  double target = rng.Uniform() * total;
  std::size_t last_visited = best;
  for (std::size_t i = 0; i < visits.size(); ++i) {
    if (visits[i] == 0) continue;
    last_visited = i;
    target -= std::pow(visits[i] / max_visits, exponent);
    if (target < 0.0) return i;
  }
  return last_visited;  // rounding left a sliver of `target` past the end
}

}  // namespace az::mcts
