// The daemon's configuration: the shipped example config (deploy/config/replay.toml) is accepted,
// names every option and shows its default; unknown keys and contradictions are refused.

#include "services/replay/replay_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "tests/ipc/test_util.h"

namespace az::replayd {
namespace {

using ::testing::HasSubstr;

const std::string kExample = std::string(AZ_SOURCE_DIR) + "/deploy/config/replay.toml";

Status Parse(ReplayConfig& config, std::vector<std::string> args) {
  CLI::App app;
  AddReplayOptions(app, config);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector from its back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  }
  return FinalizeConfig(config);
}

TEST(ReplayConfigTest, TheExampleConfigIsAcceptedAndShowsTheDefaults) {
  ipc::testing::TempDir dir;
  ReplayConfig parsed;
  ASSERT_TRUE(Parse(parsed, {"--config", kExample, "--run-dir", dir.path()}).ok());
  ReplayConfig defaults;
  ASSERT_TRUE(Parse(defaults, {"--run-dir", dir.path()}).ok());
  EXPECT_EQ(ConfigToJson(parsed), ConfigToJson(defaults));
}

TEST(ReplayConfigTest, TheExampleConfigNamesEveryOption) {
  std::ifstream in(kExample);
  std::stringstream text;
  text << in.rdbuf();
  ReplayConfig config;
  CLI::App app;
  AddReplayOptions(app, config);
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_single_name();
    if (name == "help" || name == "config" || option->get_group().empty()) continue;
    EXPECT_THAT(text.str(), HasSubstr(name + " = ")) << "the example config lacks " << name;
  }
}

TEST(ReplayConfigTest, UnknownKeysBadRangesAndContradictionsAreRefused) {
  ipc::testing::TempDir dir;
  const std::string file = dir.path() + "/bad.toml";
  {
    std::ofstream out(file);
    out << "capacity = 10\nrecord_size = 12\n";
  }
  ReplayConfig a;
  EXPECT_FALSE(Parse(a, {"--config", file, "--run-dir", dir.path()}).ok());
  ReplayConfig b;
  EXPECT_FALSE(Parse(b, {"--run-dir", dir.path(), "--alpha", "1.5"}).ok());
  ReplayConfig c;
  Status chess = Parse(c, {"--run-dir", dir.path(), "--record-bytes", "100"});
  EXPECT_EQ(chess.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(chess.message(), HasSubstr("1160"));
  ReplayConfig d;
  EXPECT_THAT(Parse(d, {"--run-dir", dir.path(), "--ring-capacity", "1000"}).message(),
              HasSubstr("power of two"));
  ReplayConfig e;
  EXPECT_THAT(
      Parse(e, {"--run-dir", dir.path(), "--samples-per-insert", "8", "--error-buffer", "2"})
          .message(),
      HasSubstr("error_buffer"));
  ReplayConfig f;
  ASSERT_TRUE(Parse(f, {"--run-dir", dir.path()}).ok());
  EXPECT_EQ(f.store, dir.path() + "/replay.store");
  EXPECT_EQ(f.snapshot_dir, dir.path() + "/snapshots");
}

}  // namespace
}  // namespace az::replayd
