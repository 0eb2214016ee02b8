// The line logger's contract (core/base/log.h): one prefixed line per statement on stderr, nothing
// (and no argument evaluated) below the current level, and an unbraced
// `if (...) AZ_LOG(...) << ...; else ...` that keeps its else.

#include "core/base/log.h"

#include <gtest/gtest.h>

#include <string>

namespace az {
namespace {

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = GetLogLevel();
    SetLogComponent("log-test");
  }
  void TearDown() override {
    SetLogLevel(saved_);
    SetLogComponent("az");
  }
  LogLevel saved_ = LogLevel::kInfo;
};

TEST_F(LogTest, WritesOnePrefixedLine) {
  SetLogLevel(LogLevel::kInfo);
  testing::internal::CaptureStderr();
  AZ_LOG(kWarning) << "opened " << 3 << " stores";
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("WARN  log-test: opened 3 stores\n"), std::string::npos) << out;
  EXPECT_EQ(out.find('\n'), out.size() - 1) << "one line: " << out;
  EXPECT_EQ(out[4], '-') << "starts with the UTC date: " << out;
}

TEST_F(LogTest, BelowTheLevelNothingIsWrittenOrEvaluated) {
  SetLogLevel(LogLevel::kWarning);
  int evaluated = 0;
  const auto count = [&evaluated] { return ++evaluated; };
  testing::internal::CaptureStderr();
  AZ_LOG(kInfo) << "hidden " << count();
  AZ_LOG(kDebug) << count();
  AZ_LOG(kError) << "shown " << count();
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(evaluated, 1);
  EXPECT_EQ(out.find("hidden"), std::string::npos) << out;
  EXPECT_NE(out.find("ERROR log-test: shown 1\n"), std::string::npos) << out;
}

TEST_F(LogTest, UnbracedIfKeepsItsElse) {
  SetLogLevel(LogLevel::kInfo);
  int branch = 0;
  testing::internal::CaptureStderr();
  for (const bool condition : {true, false}) {
    if (condition)
      AZ_LOG(kInfo) << "then";
    else
      branch = 2;
  }
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(branch, 2);
  EXPECT_NE(out.find("log-test: then\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("then"), out.rfind("then")) << "logged once: " << out;
}

}  // namespace
}  // namespace az
