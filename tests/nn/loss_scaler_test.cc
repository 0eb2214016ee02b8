#include "core/nn/loss_scaler.h"

#include <gtest/gtest.h>

namespace az::nn {
namespace {

LossScalerOptions SmallOptions() {
  LossScalerOptions o;
  o.init_scale = 1024.0;
  o.growth_factor = 2.0;
  o.backoff_factor = 0.5;
  o.growth_interval = 3;
  o.min_scale = 256.0;
  o.max_scale = 4096.0;
  return o;
}

TEST(DynamicLossScalerTest, OverflowSkipsTheStepAndHalvesTheScale) {
  DynamicLossScaler scaler(SmallOptions());
  EXPECT_FALSE(scaler.Update(/*found_non_finite=*/true));
  EXPECT_EQ(scaler.scale(), 512.0);
  EXPECT_EQ(scaler.overflows(), 1);
}

TEST(DynamicLossScalerTest, GrowsAfterGrowthIntervalGoodSteps) {
  DynamicLossScaler scaler(SmallOptions());
  EXPECT_TRUE(scaler.Update(false));
  EXPECT_TRUE(scaler.Update(false));
  EXPECT_EQ(scaler.scale(), 1024.0);
  EXPECT_TRUE(scaler.Update(false));
  EXPECT_EQ(scaler.scale(), 2048.0);
  EXPECT_EQ(scaler.good_steps(), 0);
}

TEST(DynamicLossScalerTest, OverflowResetsTheGrowthCount) {
  DynamicLossScaler scaler(SmallOptions());
  scaler.Update(false);
  scaler.Update(false);
  scaler.Update(true);  // 512
  scaler.Update(false);
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 512.0);  // only two good steps since the overflow
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 1024.0);
}

TEST(DynamicLossScalerTest, StaysWithinMinAndMax) {
  DynamicLossScaler scaler(SmallOptions());
  for (int i = 0; i < 10; ++i) scaler.Update(true);
  EXPECT_EQ(scaler.scale(), 256.0);
  for (int i = 0; i < 30; ++i) scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 4096.0);
}

TEST(DynamicLossScalerTest, RestoreContinuesFromSavedState) {
  DynamicLossScaler scaler(SmallOptions());
  scaler.Restore(2048.0, 2, 5);
  EXPECT_EQ(scaler.scale(), 2048.0);
  EXPECT_EQ(scaler.overflows(), 5);
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 4096.0);
}

TEST(LossScalerOptionsTest, RejectsInconsistentOptions) {
  EXPECT_TRUE(SmallOptions().Validate().ok());
  LossScalerOptions o = SmallOptions();
  o.backoff_factor = 1.0;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = SmallOptions();
  o.growth_factor = 0.5;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = SmallOptions();
  o.init_scale = 8192.0;  // above max_scale
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = SmallOptions();
  o.growth_interval = 0;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace az::nn
