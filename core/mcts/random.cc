#include "core/mcts/random.h"

#include <cmath>

#include "core/base/check.h"

namespace az::mcts {

Rng::Rng(std::uint64_t seed) {
  for (std::uint64_t& word : s_) word = SplitMix64(seed);
}

double Rng::Normal() {
  for (;;) {
    const double u = 2.0 * Uniform() - 1.0;
    const double v = 2.0 * Uniform() - 1.0;
    const double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) return u * std::sqrt(-2.0 * std::log(s) / s);
  }
}

double Rng::Gamma(double alpha) {
  AZ_CHECK(alpha > 0.0, "Gamma needs alpha > 0");
  if (alpha < 1.0) {
    // Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha): Marsaglia-Tsang needs alpha >= 1.
    return Gamma(alpha + 1.0) * std::pow(UniformOpenZero(), 1.0 / alpha);
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x;
    double v;
    do {
      x = Normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = UniformOpenZero();
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

void Rng::Dirichlet(double alpha, std::span<float> out) {
  if (out.empty()) return;
  double sum = 0.0;
  for (float& x : out) {
    const double g = Gamma(alpha);
    x = static_cast<float>(g);
    sum += g;
  }
  if (!(sum > 0.0)) {
    // Every variate underflowed (only possible for a tiny alpha): the symmetric limit is uniform.
    for (float& x : out) x = 1.0f / static_cast<float>(out.size());
    return;
  }
  for (float& x : out) x = static_cast<float>(x / sum);
}

}  // namespace az::mcts
