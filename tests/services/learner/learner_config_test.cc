// The learner's configuration: the shipped example names every option and parses, ranges and
// cross-checks refuse what would not run.

#include "services/learner/learner_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "core/games/connect4/connect_four_encoder.h"

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
  // The example's value is the built-in default to the last bit (scripts/run starts from it).
  EXPECT_EQ(parsed.ema_warmup_share, LearnerConfig{}.ema_warmup_share);
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

// Adam unless asked; SGD takes a momentum and refuses AdamW's decoupled decay, and an unknown
// optimizer is refused by name.
TEST(LearnerConfigTest, OptimizerIsAdamUnlessAskedForSgd) {
  LearnerConfig adam, sgd, both, other;
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x"}, adam).ok());
  EXPECT_EQ(adam.optimizer, "adam");
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x", "--optimizer", "sgd", "--momentum", "0.8"}, sgd).ok());
  EXPECT_EQ(sgd.optimizer, "sgd");
  EXPECT_EQ(sgd.momentum, 0.8);
  const Status status = Parse(
      {"--run-dir", "/tmp/x", "--optimizer", "sgd", "--decoupled-weight-decay", "true"}, both);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("--decoupled-weight-decay is AdamW's"));
  EXPECT_FALSE(Parse({"--run-dir", "/tmp/x", "--optimizer", "lamb"}, other).ok());
}

// A learning-rate decay over minutes (scripts/run's time-boxed runs) or over steps, never both.
TEST(LearnerConfigTest, TheRateDecaysOverStepsOrOverMinutesNotBoth) {
  LearnerConfig minutes, both;
  ASSERT_TRUE(
      Parse({"--run-dir", "/tmp/x", "--lr-decay-minutes", "30", "--lr-min", "0.005"}, minutes)
          .ok());
  EXPECT_EQ(minutes.lr_decay_minutes, 30.0);
  EXPECT_EQ(minutes.lr_decay_steps, 0);
  const Status status =
      Parse({"--run-dir", "/tmp/x", "--lr-decay-minutes", "30", "--lr-decay-steps", "1000"}, both);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("choose one schedule"));
}

// --grow-blocks deepens the network it starts with, so it must name more blocks than that, and a
// data-parallel group cannot grow (its ranks would have to at the same step).
TEST(LearnerConfigTest, TheNetworkGrowsOnlyDeeperAndOnlyInASingleLearner) {
  LearnerConfig grow, shallower, group;
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--net", "3x32", "--grow-blocks",
                     "6", "--grow-at-minutes", "10"},
                    grow)
                  .ok());
  EXPECT_EQ(grow.grow_blocks, 6);
  EXPECT_EQ(grow.grow_at_minutes, 10.0);
  EXPECT_EQ(grow.net_config.blocks, 3);
  EXPECT_EQ(ConfigToJson(grow)["grow_blocks"], 6);
  Status status =
      Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--net", "3x32", "--grow-blocks", "3"},
            shallower);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("must be more than the network's 3 blocks"));
  status = Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--grow-blocks", "6", "--world-size",
                  "2", "--rendezvous", "tcp://127.0.0.1:5555"},
                 group);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("for a single learner"));
}

// Connect Four's preset reads its policy at the landing cells; `policy-head = "dense"` trains the
// old head (and resumes a checkpoint from before it), and a game whose moves are not columns
// cannot take the cell head.
TEST(LearnerConfigTest, PolicyHeadIsThePresetsUnlessAskedFor) {
  LearnerConfig preset, dense, cells, chess;
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x", "--game", "connect4"}, preset).ok());
  EXPECT_EQ(preset.net_config.policy_cell_plane, games::kConnectFourLandingPlane);
  ASSERT_TRUE(
      Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--policy-head", "dense"}, dense).ok());
  EXPECT_EQ(dense.net_config.policy_cell_plane, -1);
  EXPECT_TRUE(dense.net_config.Validate().ok());
  ASSERT_TRUE(
      Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--policy-head", "cells"}, cells).ok());
  EXPECT_EQ(cells.net_config, nn::NetConfig::ConnectFour());
  const Status status = Parse({"--run-dir", "/tmp/x", "--policy-head", "cells"}, chess);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("--policy-head cells is for games whose moves are"));
  LearnerConfig other;
  EXPECT_FALSE(Parse({"--run-dir", "/tmp/x", "--policy-head", "sparse"}, other).ok());
}

// Mirror equivariance ties Connect Four's network; a dense policy head (chess's, or Connect
// Four's asked for) cannot be tied and is refused at start-up, by the option's name.
TEST(LearnerConfigTest, MirrorEquivarianceIsForColumnPoliciesOnly) {
  LearnerConfig connect4, dense, chess;
  ASSERT_TRUE(
      Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--mirror-equivariant", "true"}, connect4)
          .ok());
  EXPECT_TRUE(connect4.mirror_equivariant);
  const Status dense_status = Parse({"--run-dir", "/tmp/x", "--game", "connect4", "--policy-head",
                                     "dense", "--mirror-equivariant", "true"},
                                    dense);
  EXPECT_EQ(dense_status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(dense_status.message(), HasSubstr("--mirror-equivariant: "));
  const Status chess_status = Parse({"--run-dir", "/tmp/x", "--mirror-equivariant", "true"}, chess);
  EXPECT_THAT(chess_status.message(), HasSubstr("actions are columns"));
}

// cpu-bf16 takes auto, on or off and nothing else; the effective configuration shows the choice.
TEST(LearnerConfigTest, CpuBf16IsAutoOnOrOff) {
  for (const char* good : {"auto", "on", "off"}) {
    LearnerConfig config;
    ASSERT_TRUE(Parse({"--run-dir", "/tmp/x", "--cpu-bf16", good}, config).ok()) << good;
    EXPECT_EQ(ConfigToJson(config)["cpu_bf16"], good);
  }
  LearnerConfig config;
  const Status status = Parse({"--run-dir", "/tmp/x", "--cpu-bf16", "bf16"}, config);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("cpu-bf16"));
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

// The data-parallel keys: world size 1 (the default) creates nothing and needs nothing; a group's
// options are derived from the flags or the file; a rank outside the world, a malformed
// rendezvous and a zero timeout are refused with a message naming the flag.
TEST(LearnerConfigTest, GroupKeysAreParsedAndCheckedWithClearErrors) {
  LearnerConfig single;
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x"}, single).ok());
  EXPECT_EQ(single.world_size, 1);
  EXPECT_EQ(single.rank, 0);
  EXPECT_EQ(single.service, "learner");

  LearnerConfig two;
  ASSERT_TRUE(Parse({"--run-dir", "/tmp/x", "--world-size", "2", "--rank", "1", "--rendezvous",
                     "tcp://10.1.2.3:29511", "--dist-timeout", "5"},
                    two)
                  .ok());
  EXPECT_EQ(two.group.world_size, 2);
  EXPECT_EQ(two.group.rank, 1);
  EXPECT_EQ(two.group.host, "10.1.2.3");
  EXPECT_EQ(two.group.port, 29511);
  EXPECT_EQ(two.group.timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(two.group.rendezvous_timeout, std::chrono::milliseconds(120000));
  // A second rank in the same run directory needs its own instance lock and control socket.
  EXPECT_EQ(two.service, "learner-1");
  EXPECT_EQ(ConfigToJson(two)["rank"], 1);

  const std::string path = ::testing::TempDir() + "/learner-group.toml";
  std::ofstream(path) << "run-dir = \"/tmp/x\"\nworld-size = 3\nrank = 2\nservice = \"l2\"\n"
                      << "rendezvous = \"tcp://[::1]:4000\"\nrendezvous-timeout = 30.0\n";
  LearnerConfig file;
  ASSERT_TRUE(Parse({"--config", path}, file).ok());
  EXPECT_EQ(file.group.host, "::1");
  EXPECT_EQ(file.group.rendezvous_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(file.service, "l2");

  LearnerConfig a, b, c, d, e;
  Status s = Parse({"--run-dir", "/tmp/x", "--world-size", "2", "--rank", "2"}, a);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--rank 2 must lie in [0, 1] for --world-size 2"));
  s = Parse({"--run-dir", "/tmp/x", "--rank", "1"}, b);
  EXPECT_THAT(s.message(), HasSubstr("--rank 1 must lie in [0, 0]"));
  s = Parse({"--run-dir", "/tmp/x", "--world-size", "2", "--rendezvous", "10.0.0.1:29500"}, c);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--rendezvous"));
  EXPECT_THAT(s.message(), HasSubstr("tcp://HOST:PORT"));
  s = Parse({"--run-dir", "/tmp/x", "--world-size", "2", "--rendezvous", "tcp://h:99999"}, d);
  EXPECT_THAT(s.message(), HasSubstr("[1, 65535]"));
  EXPECT_FALSE(Parse({"--run-dir", "/tmp/x", "--dist-timeout", "0"}, e).ok());
}

}  // namespace
}  // namespace az::learner
