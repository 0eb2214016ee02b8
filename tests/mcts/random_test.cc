#include "core/mcts/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace az::mcts {
namespace {

TEST(RngTest, SameSeedSameSequenceOtherSeedOtherSequence) {
  Rng a(42), b(42), c(43);
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differ += x != c.Next();
  }
  EXPECT_GT(differ, 95);
}

TEST(RngTest, UniformStaysInRange) {
  Rng rng(7);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const double v = rng.UniformOpenZero();
    ASSERT_GT(v, 0.0);
    ASSERT_LE(v, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

// Gamma(alpha, 1) has mean alpha and variance alpha; checked on both sides of Marsaglia-Tsang's
// alpha >= 1 boundary (below it the sampler boosts from alpha + 1).
TEST(RngTest, GammaHasMeanAndVarianceAlpha) {
  for (double alpha : {0.03, 0.3, 1.0, 2.5, 10.0}) {
    SCOPED_TRACE(alpha);
    Rng rng(static_cast<std::uint64_t>(alpha * 1000));
    const int n = 200000;
    double sum = 0, sum_sq = 0;
    for (int i = 0; i < n; ++i) {
      const double g = rng.Gamma(alpha);
      ASSERT_GE(g, 0.0);
      sum += g;
      sum_sq += g * g;
    }
    const double mean = sum / n;
    const double variance = sum_sq / n - mean * mean;
    // Standard error of the mean is sqrt(alpha / n); allow 5 of them.
    EXPECT_NEAR(mean, alpha, 5 * std::sqrt(alpha / n));
    EXPECT_NEAR(variance, alpha, 0.05 * alpha + 0.002);
  }
}

TEST(RngTest, DirichletSumsToOneWithTheRightMeans) {
  Rng rng(2024);
  for (int size : {1, 2, 7, 20, 218}) {
    SCOPED_TRACE(size);
    std::vector<float> sample(size);
    std::vector<double> mean(size, 0.0);
    const int draws = 2000;
    for (int d = 0; d < draws; ++d) {
      rng.Dirichlet(0.3, sample);
      double sum = 0;
      for (int i = 0; i < size; ++i) {
        ASSERT_GE(sample[i], 0.0f);
        sum += sample[i];
        mean[i] += sample[i] / draws;
      }
      ASSERT_NEAR(sum, 1.0, 1e-5);
    }
    // Each component of a symmetric Dirichlet has mean 1/size.
    for (int i = 0; i < size; ++i) EXPECT_NEAR(mean[i], 1.0 / size, 0.25 / size + 0.01);
  }
}

}  // namespace
}  // namespace az::mcts
