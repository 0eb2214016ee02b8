#include "core/replay/beta_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace az::replay {
namespace {

TEST(BetaScheduleTest, AnnealsLinearlyFromStartToEndOverTheHorizon) {
  auto schedule = BetaSchedule::Create({.start = 0.4, .end = 1.0, .horizon = 1000});
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  EXPECT_DOUBLE_EQ(schedule->At(0), 0.4);
  EXPECT_DOUBLE_EQ(schedule->At(250), 0.55);
  EXPECT_DOUBLE_EQ(schedule->At(500), 0.7);
  EXPECT_DOUBLE_EQ(schedule->At(999), 0.4 + 0.6 * 0.999);
  EXPECT_EQ(schedule->At(1000), 1.0);
  EXPECT_EQ(schedule->At(1'000'000), 1.0);
  double previous = -1;
  for (std::uint64_t step = 0; step <= 1100; ++step) {
    EXPECT_GE(schedule->At(step), previous);
    previous = schedule->At(step);
  }
}

TEST(BetaScheduleTest, CountsLearnerStepsOrSamplesDrawnAsConfigured) {
  auto by_steps = BetaSchedule::Create({.start = 0.0, .end = 1.0, .horizon = 100});
  auto by_samples = BetaSchedule::Create({.start = 0.0,
                                          .end = 1.0,
                                          .horizon = 100 * 256,
                                          .unit = BetaScheduleOptions::Unit::kSamplesDrawn});
  ASSERT_TRUE(by_steps.ok() && by_samples.ok());
  // 10 learner steps of 256 samples each: a tenth of the way on both.
  EXPECT_DOUBLE_EQ(by_steps->At(10, 2560), 0.1);
  EXPECT_DOUBLE_EQ(by_samples->At(10, 2560), 0.1);
  // Only the configured counter matters.
  EXPECT_DOUBLE_EQ(by_steps->At(10, 0), 0.1);
  EXPECT_DOUBLE_EQ(by_samples->At(0, 2560), 0.1);
}

TEST(BetaScheduleTest, RejectsValuesOutsideTheUnitIntervalAndAnEmptyHorizon) {
  EXPECT_EQ(BetaSchedule::Create({.start = -0.1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BetaSchedule::Create({.end = 1.5}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BetaSchedule::Create({.start = std::nan("")}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(BetaSchedule::Create({.horizon = 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(BetaSchedule::Create({.start = 1.0, .end = 1.0}).ok());
}

}  // namespace
}  // namespace az::replay
