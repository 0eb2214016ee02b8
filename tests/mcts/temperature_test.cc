#include "core/mcts/temperature.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/mcts/options.h"

namespace az::mcts {
namespace {

// Draws many samples and compares each frequency with N^(1/tau) / sum, within 5 standard errors.
void ExpectFollowsPower(const std::vector<std::uint32_t>& visits, float tau) {
  Rng rng(99);
  const int draws = 100000;
  std::vector<int> counts(visits.size(), 0);
  for (int i = 0; i < draws; ++i) ++counts[SampleByTemperature(visits, tau, rng)];
  double total = 0;
  for (std::uint32_t n : visits) total += std::pow(n, 1.0 / tau);
  for (std::size_t i = 0; i < visits.size(); ++i) {
    const double p = std::pow(visits[i], 1.0 / tau) / total;
    const double standard_error = std::sqrt(p * (1 - p) / draws);
    EXPECT_NEAR(counts[i] / static_cast<double>(draws), p, 5 * standard_error + 1e-9)
        << "move " << i << " with " << visits[i] << " visits, tau " << tau;
  }
}

TEST(TemperatureTest, SamplingFollowsVisitsToThePowerOneOverTau) {
  const std::vector<std::uint32_t> visits = {400, 250, 100, 40, 10, 0, 1};
  ExpectFollowsPower(visits, 1.0f);
  ExpectFollowsPower(visits, 0.5f);
  ExpectFollowsPower(visits, 2.0f);
}

TEST(TemperatureTest, ZeroTemperatureTakesTheMostVisitedFirstOnTies) {
  Rng rng(1);
  EXPECT_EQ(SampleByTemperature(std::vector<std::uint32_t>{3, 9, 2}, 0.0f, rng), 1u);
  EXPECT_EQ(SampleByTemperature(std::vector<std::uint32_t>{5, 9, 9}, 0.0f, rng), 1u);
}

TEST(TemperatureTest, TinyTemperatureDoesNotOverflowAndPicksTheMax) {
  Rng rng(3);
  const std::vector<std::uint32_t> visits = {100000, 99999, 5};
  for (int i = 0; i < 100; ++i) {
    const std::size_t pick = SampleByTemperature(visits, 1e-4f, rng);
    EXPECT_TRUE(pick == 0 || pick == 1);
  }
}

TEST(TemperatureTest, UnvisitedMovesAreNeverPicked) {
  Rng rng(5);
  const std::vector<std::uint32_t> visits = {0, 3, 0, 1, 0};
  for (int i = 0; i < 10000; ++i) {
    const std::size_t pick = SampleByTemperature(visits, 1.0f, rng);
    ASSERT_TRUE(pick == 1 || pick == 3);
  }
}

TEST(TemperatureTest, ScheduleIsTauForTheFirstMovesThenGreedy) {
  const TemperatureOptions options;  // 30 moves at tau 1
  EXPECT_TRUE(options.Validate().ok());
  EXPECT_EQ(options.AtPly(0), 1.0f);
  EXPECT_EQ(options.AtPly(29), 1.0f);
  EXPECT_EQ(options.AtPly(30), 0.0f);
  EXPECT_FALSE((TemperatureOptions{.moves = -1}).Validate().ok());
  EXPECT_FALSE((TemperatureOptions{.tau = -1.0f}).Validate().ok());
}

}  // namespace
}  // namespace az::mcts
