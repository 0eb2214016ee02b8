// Policy-surprise weighting (surprise.h): the KL divergence it weights by, and the copies it
// draws: none of it changes a game's number of samples in expectation, weight 0 changes nothing,
// and a sample gets copies in proportion to its share of its game's surprise.

#include "services/selfplay/driver/surprise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace az::selfplay {
namespace {

TEST(PolicySurpriseTest, IsZeroWhereTheSearchAgreesWithThePriorAndGrowsWithTheDisagreement) {
  const std::vector<double> same = {0.5, 0.25, 0.25};
  const std::vector<float> prior = {0.5f, 0.25f, 0.25f};
  EXPECT_NEAR(PolicySurprise(same, prior), 0.0, 1e-6);
  const std::vector<double> mild = {0.25, 0.5, 0.25};
  const std::vector<double> strong = {0.0, 1.0, 0.0};
  EXPECT_NEAR(PolicySurprise(mild, prior), 0.25 * std::log(0.5) + 0.5 * std::log(2.0), 1e-6);
  EXPECT_NEAR(PolicySurprise(strong, prior), std::log(4.0), 1e-6);
  EXPECT_GT(PolicySurprise(strong, prior), PolicySurprise(mild, prior));
  // A move the prior gave nothing is finite (the prior floored), never infinite or NaN.
  const std::vector<float> blind = {1.0f, 0.0f, 0.0f};
  EXPECT_TRUE(std::isfinite(PolicySurprise(strong, blind)));
}

TEST(SurpriseCopiesTest, WeightZeroOrNoSurprisePushesEverySampleOnce) {
  mcts::Rng rng(1);
  const std::vector<double> surprise = {0.1, 2.0, 0.0, 0.5};
  EXPECT_EQ(SurpriseCopies(surprise, 0.0, rng), std::vector<int>(4, 1));
  EXPECT_EQ(SurpriseCopies(std::vector<double>(5, 0.0), 1.0, rng), std::vector<int>(5, 1));
  EXPECT_TRUE(SurpriseCopies({}, 1.0, rng).empty());
}

TEST(SurpriseCopiesTest, CopiesFollowEachSamplesShareOfItsGamesSurpriseAndKeepTheCountOnAverage) {
  // Mean surprise 1: with weight 0.5 the samples expect 0.5 + 0.5 * s copies: 0.5, 0.75, 2.
  const std::vector<double> surprise = {0.0, 0.5, 2.5};
  mcts::Rng rng(7);
  constexpr int kGames = 20000;
  std::vector<double> total(surprise.size(), 0.0);
  for (int g = 0; g < kGames; ++g) {
    const std::vector<int> copies = SurpriseCopies(surprise, 0.5, rng);
    for (std::size_t i = 0; i < copies.size(); ++i) {
      EXPECT_GE(copies[i], 0);
      EXPECT_LE(copies[i], 2);  // 1.75 rounds to one or two, never more
      total[i] += copies[i];
    }
  }
  EXPECT_NEAR(total[0] / kGames, 0.5, 0.02);
  EXPECT_NEAR(total[1] / kGames, 0.75, 0.02);
  EXPECT_NEAR(total[2] / kGames, 1.75, 0.02);
  EXPECT_NEAR((total[0] + total[1] + total[2]) / kGames, 3.0, 0.03);
  // Weight 1: copies in proportion to surprise alone; a sample without surprise is left out.
  for (int g = 0; g < 100; ++g) EXPECT_EQ(SurpriseCopies(surprise, 1.0, rng)[0], 0);
}

}  // namespace
}  // namespace az::selfplay
