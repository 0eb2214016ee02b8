// az-match's statistics: the Elo estimate agrees with the logistic formula and az-arena, its
// interval and LOS behave at the edges (no games, all draws, a perfect score), the SPRT bounds and
// decisions match the textbook GSPRT, and bad --sprt text is rejected with a reason.

#include "services/match/match_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace az::match {
namespace {

using ::testing::HasSubstr;

TEST(EstimateTest, EvenDecisiveResultsAreZeroEloAndEvenLos) {
  const EloEstimate e = Estimate({.wins = 50, .draws = 0, .losses = 50});
  EXPECT_DOUBLE_EQ(e.score, 0.5);
  EXPECT_NEAR(e.elo, 0, 1e-9);
  EXPECT_DOUBLE_EQ(e.los, 0.5);
  EXPECT_DOUBLE_EQ(e.draw_ratio, 0);
  // Per-game variance 0.25 over 100 games: 1.96 * 0.05.
  EXPECT_NEAR(e.score_ci95, 0.098, 1e-3);
}

TEST(EstimateTest, SeventyFivePercentIsAbout191Elo) {
  const EloEstimate e = Estimate({.wins = 60, .draws = 30, .losses = 10});
  EXPECT_DOUBLE_EQ(e.score, 0.75);
  EXPECT_NEAR(e.elo, 190.85, 0.01);
  EXPECT_DOUBLE_EQ(e.draw_ratio, 0.3);
}

TEST(EstimateTest, IntervalBracketsTheEstimate) {
  const EloEstimate e = Estimate({.wins = 40, .draws = 35, .losses = 25});
  EXPECT_GT(e.score_ci95, 0);
  EXPECT_LT(e.elo_low, e.elo);
  EXPECT_LT(e.elo, e.elo_high);
  EXPECT_GT(e.elo, 0);
  EXPECT_GT(e.los, 0.9);
  EXPECT_LT(e.los, 1);
}

TEST(EstimateTest, AllDrawsIsAnEvenScoreWithNoSpread) {
  const EloEstimate e = Estimate({.wins = 0, .draws = 20, .losses = 0});
  EXPECT_DOUBLE_EQ(e.score, 0.5);
  EXPECT_DOUBLE_EQ(e.score_ci95, 0);
  EXPECT_NEAR(e.elo, 0, 1e-9);
  EXPECT_DOUBLE_EQ(e.elo_low, e.elo_high);
  EXPECT_DOUBLE_EQ(e.los, 0.5);
  EXPECT_DOUBLE_EQ(e.draw_ratio, 1);
}

TEST(EstimateTest, PerfectScoresAreClampedTo800Elo) {
  const EloEstimate wins = Estimate({.wins = 10, .draws = 0, .losses = 0});
  EXPECT_DOUBLE_EQ(wins.elo, 800);
  EXPECT_DOUBLE_EQ(wins.elo_high, 800);
  EXPECT_GT(wins.los, 0.99);
  const EloEstimate losses = Estimate({.wins = 0, .draws = 0, .losses = 10});
  EXPECT_DOUBLE_EQ(losses.elo, -800);
  EXPECT_LT(losses.los, 0.01);
}

TEST(EstimateTest, NoGamesIsNeutral) {
  const EloEstimate e = Estimate({});
  EXPECT_DOUBLE_EQ(e.score, 0.5);
  EXPECT_DOUBLE_EQ(e.score_ci95, 0);
  EXPECT_DOUBLE_EQ(e.elo, 0);
  EXPECT_DOUBLE_EQ(e.los, 0.5);
  EXPECT_DOUBLE_EQ(e.draw_ratio, 0);
}

TEST(EstimateTest, FormatsOneLine) {
  const std::string line = FormatEstimate(Estimate({.wins = 60, .draws = 30, .losses = 10}));
  EXPECT_THAT(line, HasSubstr("Elo +190.8"));
  EXPECT_THAT(line, HasSubstr("(95%), LOS 100.0%, draws 30%"));
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(SprtTest, BoundsForFivePercentErrorsAreAbout2944) {
  const SprtState state = Sprt({}, SprtConfig{});
  EXPECT_NEAR(state.lower, -2.944, 1e-3);
  EXPECT_NEAR(state.upper, 2.944, 1e-3);
  EXPECT_DOUBLE_EQ(state.llr, 0);
  EXPECT_EQ(state.decision, SprtDecision::kContinue);
}

// A tally of one result only has no variance; the regularised counts still decide: 500 draws
// are equality (H0 against +5), ten straight wins are not Elo 0.
TEST(SprtTest, OneResultOnlyStillDecides) {
  const SprtState draws = Sprt({.wins = 0, .draws = 500, .losses = 0}, SprtConfig{});
  EXPECT_EQ(draws.decision, SprtDecision::kAcceptH0);
  const SprtState wins = Sprt({.wins = 10, .draws = 0, .losses = 0}, {.elo0 = 0, .elo1 = 100});
  EXPECT_EQ(wins.decision, SprtDecision::kAcceptH1);
}

TEST(SprtTest, StrongWinnerAcceptsH1) {
  const SprtState state = Sprt({.wins = 600, .draws = 800, .losses = 400}, SprtConfig{});
  EXPECT_GT(state.llr, state.upper);
  EXPECT_EQ(state.decision, SprtDecision::kAcceptH1);
}

TEST(SprtTest, LoserAcceptsH0) {
  const SprtState state = Sprt({.wins = 400, .draws = 800, .losses = 600}, SprtConfig{});
  EXPECT_LT(state.llr, state.lower);
  EXPECT_EQ(state.decision, SprtDecision::kAcceptH0);
}

TEST(SprtTest, FewGamesContinue) {
  const SprtState state = Sprt({.wins = 6, .draws = 3, .losses = 5}, SprtConfig{});
  EXPECT_GT(state.llr, state.lower);
  EXPECT_LT(state.llr, state.upper);
  EXPECT_EQ(state.decision, SprtDecision::kContinue);
}

TEST(SprtTest, LlrMatchesTheNormalApproximation) {
  // 100 games at score 0.6, per-game variance 0.6 * 0.4 = 0.24 (no draws); s0 = 0.5 (Elo 0),
  // s1 = 1 / (1 + 10^(-10/400)) for Elo 10.
  const double s1 = 1.0 / (1.0 + std::pow(10.0, -10.0 / 400.0));
  const double expected = 100 * (s1 - 0.5) * (1.2 - 0.5 - s1) / (2 * 0.24);
  const SprtState state = Sprt({.wins = 60, .draws = 0, .losses = 40}, {.elo0 = 0, .elo1 = 10});
  EXPECT_NEAR(state.llr, expected, 1e-4 * std::abs(expected));  // regularised counts: ~1e-5 off
}

TEST(SprtTest, FormatsLlrBoundsAndDecision) {
  const SprtConfig config;
  const std::string line = FormatSprt(Sprt({}, config), config);
  EXPECT_EQ(line, "SPRT [0.0, 5.0] llr 0.00 (-2.94, 2.94): continue");
  EXPECT_EQ(ToString(SprtDecision::kAcceptH0), "H0 accepted");
  EXPECT_EQ(ToString(SprtDecision::kAcceptH1), "H1 accepted");
}

TEST(ParseSprtTest, ReadsAnySubsetInAnyOrder) {
  Result<SprtConfig> all = ParseSprt("elo0=0,elo1=10,alpha=0.05,beta=0.1");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_DOUBLE_EQ(all->elo0, 0);
  EXPECT_DOUBLE_EQ(all->elo1, 10);
  EXPECT_DOUBLE_EQ(all->alpha, 0.05);
  EXPECT_DOUBLE_EQ(all->beta, 0.1);

  Result<SprtConfig> some = ParseSprt("beta=0.2, elo0=-5");
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_DOUBLE_EQ(some->elo0, -5);
  EXPECT_DOUBLE_EQ(some->elo1, 5);
  EXPECT_DOUBLE_EQ(some->alpha, 0.05);
  EXPECT_DOUBLE_EQ(some->beta, 0.2);

  EXPECT_TRUE(ParseSprt("").ok());
}

TEST(ParseSprtTest, RejectsBadPartsNamingThem) {
  struct Case {
    std::string_view text;
    std::string_view mentions;
  };
  for (const Case& c :
       {Case{"elo2=3", "elo2"}, Case{"elo1", "elo1"}, Case{"elo1=ten", "elo1=ten"},
        Case{"elo1=5x", "elo1=5x"}, Case{"alpha=nan", "alpha"}, Case{"elo0=1,elo0=2", "twice"},
        Case{"elo0=5,elo1=5", "elo0"}, Case{"alpha=0.5", "alpha"}, Case{"beta=0", "beta"},
        Case{"elo0=0,,elo1=3", "key=value"}}) {
    Result<SprtConfig> config = ParseSprt(c.text);
    ASSERT_FALSE(config.ok()) << c.text;
    EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(config.status().message(), HasSubstr(c.mentions)) << c.text;
  }
}

}  // namespace
}  // namespace az::match
