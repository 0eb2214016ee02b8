// The learner's configuration: the shipped example names every option and parses, ranges and
// cross-checks refuse what would not run.

#include "services/learner/learner_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace az::learner {
namespace {

using ::testing::HasSubstr;

const std::string kExample = std::string(AZ_SOURCE_DIR) + "/deploy/config/learner.toml";

Status Parse(std::vector<std::string> args, LearnerConfig& config) {
  CLI::App app;
  AddLearnerOptions(app, config);
  std::vector<const char*> argv = {"az-learner"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(e.what());
  }
  return FinalizeConfig(config);
}

TEST(LearnerConfigTest, TheExampleConfigNamesEveryOptionAndParses) {
  CLI::App app;
  LearnerConfig config;
  AddLearnerOptions(app, config);
  std::ifstream in(kExample);
  ASSERT_TRUE(in.good()) << kExample;
  std::stringstream text;
  text << in.rdbuf();
  std::set<std::string> keys;
  std::string line;
  while (std::getline(text, line)) {
    if (line.empty() || line[0] == '#') continue;
    keys.insert(line.substr(0, line.find(' ')));
  }
  for (const CLI::Option* option : app.get_options()) {
    const std::string name = option->get_single_name();
    if (name == "help" || name == "config") continue;
    EXPECT_TRUE(keys.count(name)) << "deploy/config/learner.toml does not document --" << name;
  }
  LearnerConfig parsed;
  const Status status = Parse({"--config", kExample}, parsed);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(parsed.batch, 256u);
  EXPECT_EQ(parsed.checkpoint_dir, "/var/lib/az/run/checkpoints");
  EXPECT_EQ(parsed.events_endpoint, "ipc:///var/lib/az/run/learner.pub");
}

TEST(LearnerConfigTest, ConnectFourTakesItsOwnNetAndRefusesAChessShape) {
  LearnerConfig config;
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x", "--game", "connect4"}, config).ok());
  EXPECT_EQ(config.net_config, nn::NetConfig::ConnectFour());
  LearnerConfig full;
  const Status status = Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--net", "full"}, full);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("--net full is for chess"));
  LearnerConfig chess;
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x", "--net", "full"}, chess).ok());
  EXPECT_EQ(chess.net_config, nn::NetConfig::ChessFull());
}

TEST(LearnerConfigTest, OutOfRangeValuesAndUnknownKeysAreRefused) {
  LearnerConfig a, b, c, d;
  EXPECT_FALSE(Parse({"--run-dir", "/tmp/x", "--batch", "0"}, a).ok());
  EXPECT_FALSE(Parse({"--run-dir", "/tmp/x", "--beta-start", "1.5"}, b).ok());
  EXPECT_FALSE(Parse({"--run-dir", "/tmp/x", "--game", "go"}, c).ok());
  EXPECT_FALSE(Parse({"--run-dir", "/tmp/x", "--lr", "0"}, d).ok());
  const std::string path = ::testing::TempDir() + "/learner-unknown.toml";
  std::ofstream(path) << "run-dir = \"/tmp/x\"\nbatch-size = 12\n";
  LearnerConfig e;
  const Status status = Parse({"--config", path}, e);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("batch-size"));
}

}  // namespace
}  // namespace az::learner
