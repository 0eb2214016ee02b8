// TD(lambda) value targets (value_targets.h): lambda 1 keeps the game's outcome, lambda 0 takes
// each root's own value, and in between each target is its root's value blended with the next
// sample's target, the sign flipped where the side to move changes, gaps bridged by parity.

#include "services/selfplay/driver/value_targets.h"

#include <gtest/gtest.h>

#include <vector>

namespace az::selfplay {
namespace {

// A game of five recorded plies that the side to move at ply 0 won: its outcome alternates.
std::vector<ValuePoint> FivePlies() {
  return {{0, 0.1f, 1.0f}, {1, -0.2f, -1.0f}, {2, 0.3f, 1.0f}, {3, -0.8f, -1.0f}, {4, 0.9f, 1.0f}};
}

TEST(ValueTargetsTest, LambdaOneKeepsTheOutcomeAndZeroTakesTheRoots) {
  const std::vector<ValuePoint> points = FivePlies();
  const std::vector<float> outcome = LambdaValueTargets(points, 1.0f);
  const std::vector<float> roots = LambdaValueTargets(points, 0.0f);
  ASSERT_EQ(outcome.size(), points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_FLOAT_EQ(outcome[i], points[i].outcome);
    EXPECT_FLOAT_EQ(roots[i], points[i].root_value);
  }
  EXPECT_TRUE(LambdaValueTargets({}, 0.5f).empty());
}

TEST(ValueTargetsTest, EachTargetBlendsItsRootWithTheNextTargetFromItsOwnSide) {
  const std::vector<ValuePoint> points = FivePlies();
  const std::vector<float> t = LambdaValueTargets(points, 0.5f);
  // From the end: 0.5 * 0.9 + 0.5 * 1 = 0.95; then 0.5 * -0.8 + 0.5 * -0.95 = -0.875; ...
  EXPECT_FLOAT_EQ(t[4], 0.95f);
  EXPECT_FLOAT_EQ(t[3], -0.875f);
  EXPECT_FLOAT_EQ(t[2], 0.5f * 0.3f + 0.5f * 0.875f);
  EXPECT_FLOAT_EQ(t[1], 0.5f * -0.2f - 0.5f * t[2]);
  EXPECT_FLOAT_EQ(t[0], 0.5f * 0.1f - 0.5f * t[1]);
}

TEST(ValueTargetsTest, AnUnrecordedPlyIsBridgedByParityAndADrawnEndWeighsNothing) {
  // Ply 2 was not recorded: ply 3's side to move is ply 1's; ply 4's is the other side.
  const std::vector<ValuePoint> points = {{1, 0.4f, 0.0f}, {3, -0.6f, 0.0f}, {4, 0.2f, 0.0f}};
  const std::vector<float> t = LambdaValueTargets(points, 0.5f);
  EXPECT_FLOAT_EQ(t[2], 0.1f);                // 0.5 * 0.2 + 0.5 * 0 (a draw)
  EXPECT_FLOAT_EQ(t[1], -0.3f - 0.05f);       // ply 4 is the other side: its target flipped
  EXPECT_FLOAT_EQ(t[0], 0.2f + 0.5f * t[1]);  // ply 3 is the same side: not flipped
}

TEST(ValueTargetsTest, TargetsStayWithinPlusMinusOne) {
  // Roots a rounding past 1 still give targets in [-1, 1] (samples refuse anything else).
  const std::vector<ValuePoint> points = {{0, 1.0001f, 1.0f}, {2, 1.0001f, 1.0f}};
  for (const float t : LambdaValueTargets(points, 0.3f)) {
    EXPECT_LE(t, 1.0f);
    EXPECT_GE(t, -1.0f);
  }
}

}  // namespace
}  // namespace az::selfplay
