// az-relay's configuration: the shipped example config (deploy/config/relay.toml) is accepted,
// names every option and shows its default; a missing or non-TCP central endpoint, a bad host name,
// an unknown game and unknown keys are refused with a message naming the option.

#include "services/relay/relay_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "tests/ipc/test_util.h"

namespace az::relay {
namespace {

using ::testing::HasSubstr;

const std::string kExample = std::string(AZ_SOURCE_DIR) + "/deploy/config/relay.toml";

Status Parse(RelayConfig& config, std::vector<std::string> args) {
  CLI::App app;
  AddRelayOptions(app, config);
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector from its back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  }
  return FinalizeConfig(config);
}

TEST(RelayConfigTest, TheExampleConfigIsAcceptedAndShowsTheDefaults) {
  ipc::testing::TempDir dir;
  const std::vector<std::string> common = {"--run-dir",           dir.path(), "--central",
                                           "tcp://10.0.0.1:5560", "--host",   "h1"};
  RelayConfig parsed;
  std::vector<std::string> with_file = {"--config", kExample};
  with_file.insert(with_file.end(), common.begin(), common.end());
  ASSERT_TRUE(Parse(parsed, with_file).ok());
  RelayConfig defaults;
  ASSERT_TRUE(Parse(defaults, common).ok());
  EXPECT_EQ(ConfigToJson(parsed), ConfigToJson(defaults));
  EXPECT_EQ(defaults.spool_dir, dir.path() + "/spool");
  EXPECT_EQ(defaults.model_dir, dir.path() + "/models");
  EXPECT_EQ(defaults.game_info->sample_bytes, 80u) << "Connect Four's sample";
}

TEST(RelayConfigTest, TheExampleConfigNamesEveryOption) {
  std::ifstream in(kExample);
  std::stringstream text;
  text << in.rdbuf();
  RelayConfig config;
  CLI::App app;
  AddRelayOptions(app, config);
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_single_name();
    if (name == "help" || name == "config" || option->get_group().empty()) continue;
    EXPECT_THAT(text.str(), HasSubstr(name + " = ")) << "the example config lacks " << name;
  }
}

TEST(RelayConfigTest, BadValuesAreRefusedNamingTheOption) {
  ipc::testing::TempDir dir;
  RelayConfig a;
  EXPECT_THAT(Parse(a, {"--run-dir", dir.path()}).message(), HasSubstr("--central"));
  RelayConfig b;
  EXPECT_THAT(Parse(b, {"--run-dir", dir.path(), "--central", "ipc:///tmp/x"}).message(),
              HasSubstr("tcp://"));
  RelayConfig c;
  EXPECT_THAT(
      Parse(c, {"--run-dir", dir.path(), "--central", "tcp://h:1", "--host", "a/b"}).message(),
      HasSubstr("--host"));
  RelayConfig d;
  EXPECT_FALSE(Parse(d, {"--run-dir", dir.path(), "--central", "tcp://h:1", "--game", "go"}).ok());
  RelayConfig e;
  EXPECT_THAT(
      Parse(e, {"--run-dir", dir.path(), "--central", "tcp://h:1", "--ring-capacity", "1000"})
          .message(),
      HasSubstr("power of two"));
  const std::string file = dir.path() + "/bad.toml";
  {
    std::ofstream out(file);
    out << "central = \"tcp://h:1\"\npush_batches = 3\n";
  }
  RelayConfig f;
  EXPECT_FALSE(Parse(f, {"--config", file, "--run-dir", dir.path()}).ok());
  RelayConfig g;
  ASSERT_TRUE(Parse(g, {"--run-dir", dir.path(), "--central", "tcp://h:1"}).ok());
  EXPECT_FALSE(g.host.empty()) << "the machine's host name by default";
}

}  // namespace
}  // namespace az::relay
