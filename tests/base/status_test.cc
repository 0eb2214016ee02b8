#include "core/base/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace az {
namespace {

Result<int> ParsePositive(int x) {
  if (x <= 0) return InvalidArgument("not positive: " + std::to_string(x));
  return x;
}

Result<int> Doubled(int x) {
  AZ_ASSIGN_OR_RETURN(int value, ParsePositive(x));
  return value * 2;
}

Status Validate(int x) {
  AZ_RETURN_IF_ERROR(ParsePositive(x).status());
  return Status::Ok();
}

TEST(StatusTest, OkByDefaultAndNamesItsCode) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().ToString(), "OK");
  Status s = DataLoss("checksum mismatch");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.ToString(), "DATA_LOSS: checksum mismatch");
}

TEST(StatusTest, ContextIsPrefixedAndCodeKept) {
  Status s = NotFound("no such file").WithContext("opening /x");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "opening /x: no such file");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

TEST(ResultTest, CarriesValueOrError) {
  Result<int> good = ParsePositive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = ParsePositive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ResultTest, MacrosPropagateErrors) {
  EXPECT_EQ(*Doubled(4), 8);
  EXPECT_EQ(Doubled(0).status().message(), "not positive: 0");
  EXPECT_TRUE(Validate(1).ok());
  EXPECT_FALSE(Validate(-5).ok());
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

TEST(ResultDeathTest, ValueOfErrorStopsTheProcess) {
  Result<int> bad = ParsePositive(-1);
  EXPECT_DEATH((void)bad.value(), "value\\(\\) of an error Result");
}

}  // namespace
}  // namespace az
