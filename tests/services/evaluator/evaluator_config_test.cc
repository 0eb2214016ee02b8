// The evaluator's configuration: the shipped example config (deploy/config/evaluator.toml) names
// every option and shows its default; the cache size is checked.

#include "services/evaluator/evaluator_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/ipc/test_util.h"

namespace az::evaluator {
namespace {

using ::testing::HasSubstr;

const std::string kExample = std::string(AZ_SOURCE_DIR) + "/deploy/config/evaluator.toml";

Status Parse(EvaluatorConfig& config, std::vector<std::string> args) {
  CLI::App app;
  AddEvaluatorOptions(app, config);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector from its back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  }
  return FinalizeConfig(config);
}

TEST(EvaluatorConfigTest, TheExampleConfigIsAcceptedAndShowsTheDefaults) {
  ipc::testing::TempDir dir;
  EvaluatorConfig parsed;
  const Status status = Parse(parsed, {"--config", kExample, "--run-dir", dir.path()});
  ASSERT_TRUE(status.ok()) << status.ToString();
  EvaluatorConfig defaults;
  ASSERT_TRUE(Parse(defaults, {"--run-dir", dir.path()}).ok());
  EXPECT_EQ(ConfigToJson(parsed), ConfigToJson(defaults));
  EXPECT_EQ(parsed.cache_size, 262144u);
}

TEST(EvaluatorConfigTest, TheExampleConfigNamesEveryOption) {
  std::ifstream in(kExample);
  ASSERT_TRUE(in.good()) << kExample;
  std::stringstream text;
  text << in.rdbuf();
  EvaluatorConfig config;
  CLI::App app;
  AddEvaluatorOptions(app, config);
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_single_name();
    if (name == "help" || name == "config" || option->get_group().empty()) continue;
    EXPECT_THAT(text.str(), HasSubstr(name + " = ")) << "the example config lacks " << name;
  }
}

TEST(EvaluatorConfigTest, CacheSizeIsZeroOrAPowerOfTwoInRange) {
  ipc::testing::TempDir dir;
  for (const char* good : {"0", "2", "1024", "16777216"}) {
    EvaluatorConfig config;
    const Status status = Parse(config, {"--run-dir", dir.path(), "--cache-size", good});
    EXPECT_TRUE(status.ok()) << good << ": " << status.ToString();
  }
  for (const char* bad : {"1", "1000", "33554432", "-1"}) {
    EvaluatorConfig config;
    const Status status = Parse(config, {"--run-dir", dir.path(), "--cache-size", bad});
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_THAT(status.message(), HasSubstr("cache-size")) << bad;
  }
}

// cpu-bf16 takes auto, on or off and nothing else, by name, and the effective configuration shows
// the choice (the log's "network on" line shows what it resolved to).
TEST(EvaluatorConfigTest, CpuBf16IsAutoOnOrOff) {
  ipc::testing::TempDir dir;
  for (const char* good : {"auto", "on", "off"}) {
    EvaluatorConfig config;
    const Status status = Parse(config, {"--run-dir", dir.path(), "--cpu-bf16", good});
    EXPECT_TRUE(status.ok()) << good << ": " << status.ToString();
    EXPECT_EQ(ConfigToJson(config)["cpu_bf16"], good);
  }
  EvaluatorConfig config;
  const Status status = Parse(config, {"--run-dir", dir.path(), "--cpu-bf16", "true"});
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cpu-bf16"));
}

}  // namespace
}  // namespace az::evaluator
