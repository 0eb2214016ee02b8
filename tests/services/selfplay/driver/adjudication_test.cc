// One game's adjudication on the root values the engine shows it: resignation only after K
// consecutive plies below the threshold for the same side, draws only after K level plies from
// the minimum ply on, and playthrough games that never end early but remember what would have.

#include "services/selfplay/driver/adjudication.h"

#include <gtest/gtest.h>

namespace az::selfplay {
namespace {

constexpr AdjudicationOptions kResign = {.resign_value = 0.9f, .resign_plies = 4};
constexpr AdjudicationOptions kDraw = {.draw_value = 0.05f, .draw_plies = 3, .draw_min_ply = 10};

// The root value for the side to move at `ply` when the side that moves at even plies is seen at
// `even`.
double ForMover(int ply, double even) { return ply % 2 == 0 ? even : -even; }

TEST(AdjudicatorTest, ResignsOnlyAfterKConsecutivePliesBelowTheThresholdForOneSide) {
  Adjudicator adjudicator(kResign, false);
  int ply = 0;
  const auto observe = [&](double even) {
    const Verdict verdict = adjudicator.Observe(ply, ForMover(ply, even));
    ++ply;
    return verdict;
  };
  EXPECT_EQ(observe(0.0), Verdict::kNone);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(observe(-0.95), Verdict::kNone);
  EXPECT_EQ(observe(-0.85), Verdict::kNone);  // not below the threshold: the run starts over
  for (int i = 0; i < 3; ++i) EXPECT_EQ(observe(-0.95), Verdict::kNone);
  EXPECT_EQ(observe(0.95), Verdict::kNone);  // now the other side is losing: a new run
  EXPECT_EQ(observe(0.95), Verdict::kNone);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(observe(-0.99), Verdict::kNone);
  EXPECT_EQ(adjudicator.resigner_parity(), -1);
  EXPECT_EQ(observe(-0.99), Verdict::kResign);  // the fourth in a row
  EXPECT_EQ(adjudicator.resigner_parity(), 0);
}

TEST(AdjudicatorTest, TheKthPlyBelowTheThresholdResignsTheLosingSide) {
  for (const int loser : {0, 1}) {
    Adjudicator adjudicator(kResign, false);
    const double even = loser == 0 ? -0.95 : 0.95;
    for (int ply = 5; ply < 8; ++ply) {
      EXPECT_EQ(adjudicator.Observe(ply, ForMover(ply, even)), Verdict::kNone);
    }
    EXPECT_EQ(adjudicator.Observe(8, ForMover(8, even)), Verdict::kResign);
    EXPECT_EQ(adjudicator.resigner_parity(), loser);
  }
}

TEST(AdjudicatorTest, DrawsAfterKLevelPliesFromTheMinimumPly) {
  Adjudicator adjudicator(kDraw, false);
  for (int ply = 0; ply < 10; ++ply) EXPECT_EQ(adjudicator.Observe(ply, 0.0), Verdict::kNone);
  EXPECT_EQ(adjudicator.Observe(10, 0.01), Verdict::kNone);
  EXPECT_EQ(adjudicator.Observe(11, -0.2), Verdict::kNone);  // not level: starts over
  EXPECT_EQ(adjudicator.Observe(12, 0.04), Verdict::kNone);
  EXPECT_EQ(adjudicator.Observe(13, -0.04), Verdict::kNone);
  EXPECT_EQ(adjudicator.Observe(14, 0.0), Verdict::kDraw);
}

TEST(AdjudicatorTest, PlaythroughNeverEndsAGameButRemembersBothVerdicts) {
  AdjudicationOptions options = kResign;
  options.draw_value = 0.05f;
  options.draw_plies = 2;
  Adjudicator adjudicator(options, true);
  EXPECT_TRUE(adjudicator.playthrough());
  int ply = 0;
  for (; ply < 4; ++ply) EXPECT_EQ(adjudicator.Observe(ply, 0.0), Verdict::kNone);
  EXPECT_TRUE(adjudicator.would_draw());
  for (; ply < 12; ++ply) EXPECT_EQ(adjudicator.Observe(ply, ForMover(ply, 0.97)), Verdict::kNone);
  EXPECT_EQ(adjudicator.resigner_parity(), 1);
}

TEST(AdjudicatorTest, OffByDefaultAndOptionsAreRangeChecked) {
  Adjudicator off;
  for (int ply = 0; ply < 100; ++ply)
    EXPECT_EQ(off.Observe(ply, ply % 2 ? 1.0 : -1.0), Verdict::kNone);
  EXPECT_TRUE(AdjudicationOptions{}.Validate().ok());
  EXPECT_FALSE(AdjudicationOptions{.resign_value = 1.5f}.Validate().ok());
  EXPECT_FALSE(AdjudicationOptions{.resign_plies = 0}.Validate().ok());
  EXPECT_FALSE(AdjudicationOptions{.resign_playthrough_fraction = -0.1f}.Validate().ok());
  EXPECT_FALSE(AdjudicationOptions{.draw_value = 2.0f}.Validate().ok());
  EXPECT_FALSE(AdjudicationOptions{.draw_min_ply = -1}.Validate().ok());
}

}  // namespace
}  // namespace az::selfplay
