// azctl replay as a user runs it: the real azctl binary against the real az-replay, both child
// processes; what they print and their exit codes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/services/replay/replay_test_util.h"

namespace az::replayd {
namespace {

using testing::ChildProcess;
using testing::Daemon;
using ::testing::HasSubstr;
using testing::ShmScope;
using testing::TempDir;

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

class AzctlReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = std::make_unique<Daemon>(
        dir_.path(), std::vector<std::string>{"--capacity", "1000", "--shm-scope", shm_.spec(),
                                              "--metrics-port", "-1", "--model-events-from", ""});
    ASSERT_TRUE(daemon_->WaitReady()) << daemon_->LogText();
  }

  // azctl --run-dir DIR replay ARGS..., with `input` on its stdin.
  Output Azctl(std::vector<std::string> args, const std::string& input = "") {
    std::vector<std::string> argv = {AZCTL_BINARY, "--run-dir", dir_.path(), "replay"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string in = dir_.path() + "/azctl.in";
    const std::string out = dir_.path() + "/azctl.out";
    const std::string err = dir_.path() + "/azctl.err";
    {
      std::ofstream file(in);
      file << input;
    }
    // posix_spawn's stdin redirection is not in ChildProcess: go through the shell.
    std::string command;
    for (const std::string& arg : argv) command += "'" + arg + "' ";
    command += "< '" + in + "'";
    ChildProcess child({"/bin/sh", "-c", command}, out, err);
    Output result;
    result.code = child.Wait();
    result.out = testing::ReadFile(out);
    result.err = testing::ReadFile(err);
    return result;
  }

  TempDir dir_;
  ShmScope shm_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(AzctlReplayTest, InsertRandomSampleUpdateReadAndStatusWorkEndToEnd) {
  Output inserted = Azctl({"insert-random", "300", "--seed", "5", "--model-version", "2"});
  ASSERT_EQ(inserted.code, 0) << inserted.err;
  EXPECT_THAT(inserted.out, HasSubstr("inserted 300 chess records, generations 0..299"));

  Output sampled = Azctl({"sample", "--batch", "6", "--beta", "0.5"});
  ASSERT_EQ(sampled.code, 0) << sampled.err;
  EXPECT_THAT(sampled.out, HasSubstr("slot\tgeneration\tprobability\tweight"));
  Output json = Azctl({"sample", "--batch", "4", "--beta", "1", "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json body = nlohmann::json::parse(json.out);
  ASSERT_EQ(body["draws"].size(), 4u);
  const std::uint64_t slot = body["draws"][0]["slot"];
  const std::uint64_t generation = body["draws"][0]["generation"];
  EXPECT_NEAR(body["draws"][0]["probability"].get<double>(), 1.0 / 300, 1e-9);

  Output one = Azctl({"update", "--slot", std::to_string(slot), "--generation",
                      std::to_string(generation), "--priority", "9"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("applied 1, stale 0, rejected 0"));
  // Bulk form: one stale (wrong generation), one rejected (NaN), one applied.
  Output bulk =
      Azctl({"update", "--stdin"}, "# slot generation priority\n1 1 2.5\n2 999 1\n3 3 nan\n");
  ASSERT_EQ(bulk.code, 0) << bulk.err;
  EXPECT_THAT(bulk.out, HasSubstr("applied 1, stale 1, rejected 1"));
  Output garbage = Azctl({"update", "--stdin"}, "1 one 2\n");
  EXPECT_EQ(garbage.code, 2);
  EXPECT_THAT(garbage.err, HasSubstr("line 1"));
  // Nothing applied is a failure for a script: a lone NaN priority (rejected), a lone stale one.
  Output nan = Azctl({"update", "--stdin"}, "3 3 nan\n");
  EXPECT_EQ(nan.code, 1) << nan.out;
  EXPECT_THAT(nan.err, HasSubstr("no update was applied (0 stale, 1 rejected)"));
  Output stale = Azctl({"update", "--stdin"}, "2 999 1\n");
  EXPECT_EQ(stale.code, 1) << stale.out;
  EXPECT_THAT(stale.err, HasSubstr("no update was applied (1 stale, 0 rejected)"));

  Output read = Azctl({"read", std::to_string(slot), "1", "999"});
  ASSERT_EQ(read.code, 0) << read.err;
  EXPECT_THAT(read.out, HasSubstr("1\t1\t"));
  EXPECT_THAT(read.out, HasSubstr("999\tempty"));

  Output status = Azctl({"status"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("300 / 1000 records of 1160 bytes (chess)"));
  EXPECT_THAT(status.out, HasSubstr("2 applied, 2 stale, 2 rejected"));
  Output status_json = Azctl({"status", "--json"});
  ASSERT_EQ(status_json.code, 0) << status_json.err;
  nlohmann::json fields = nlohmann::json::parse(status_json.out);
  EXPECT_EQ(fields["size"], 300);
  EXPECT_EQ(fields["updates_applied"], 2);
  EXPECT_EQ(fields["record_layout"], "chess");
}

TEST_F(AzctlReplayTest, SnapshotAndSetChangeTheRunningDaemonAndErrorsExitOneWithItsMessage) {
  ASSERT_EQ(Azctl({"insert-random", "50", "--seed", "1"}).code, 0);
  Output snapshot = Azctl({"snapshot"});
  ASSERT_EQ(snapshot.code, 0) << snapshot.err;
  EXPECT_THAT(snapshot.out, HasSubstr("50 records"));
  EXPECT_THAT(snapshot.out, HasSubstr(".azsnap"));

  Output set = Azctl({"set", "samples_per_insert", "2"});
  ASSERT_EQ(set.code, 0) << set.err;
  EXPECT_THAT(set.out, HasSubstr("samples_per_insert: 0 -> 2"));
  Output interval = Azctl({"set", "snapshot_interval", "30"});
  ASSERT_EQ(interval.code, 0) << interval.err;
  Output shown = Azctl({"status", "--json"});
  nlohmann::json fields = nlohmann::json::parse(shown.out);
  EXPECT_EQ(fields["rate_limiter"]["samples_per_insert"], 2.0);
  EXPECT_EQ(fields["snapshots"]["interval_seconds"], 30.0);

  // The daemon's errors: exit 1 and its message on stderr.
  Output bad = Azctl({"set", "error_buffer", "1"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(bad.err, HasSubstr("error_buffer"));
  Output fixed = Azctl({"set", "capacity", "5"});
  EXPECT_EQ(fixed.code, 1);
  EXPECT_THAT(fixed.err, HasSubstr("fixed when the store file is created"));
  Output too_big = Azctl({"sample", "--batch", "9000", "--beta", "0.5"});
  EXPECT_EQ(too_big.code, 1);
  EXPECT_THAT(too_big.err, HasSubstr("error_buffer"));
  // Usage errors: exit 2.
  EXPECT_EQ(Azctl({"sample", "--beta", "3"}).code, 2);
  EXPECT_EQ(Azctl({"update", "--slot", "1"}).code, 2);
}

}  // namespace
}  // namespace az::replayd
