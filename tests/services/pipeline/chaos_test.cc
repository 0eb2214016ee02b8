// scripts/chaos, short: a real pipeline under its own supervisord (tiny preset), each service
// killed with SIGKILL once at a random moment and one frozen with SIGSTOP, and after each fault
// the script's checks: the replay buffer's size and generations and the model version never go
// back, a restarted learner resumes at or after its last checkpoint, and learner steps and replay
// inserts advance again within the deadline.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "tests/ipc/test_util.h"
#include "tests/services/scripted_run.h"

namespace az::pipeline {
namespace {

using ipc::testing::ChildProcess;
using ipc::testing::ReadWholeFile;
using ipc::testing::TempDir;
using ::testing::HasSubstr;

TEST(ChaosTest, EveryServiceKilledOnceLosesNothingAndTrainingGoesOn) {
  TempDir dir;
  const std::string out = dir.path() + "/chaos.out";
  const std::string json = dir.path() + "/chaos.json";
  ChildProcess chaos({"/usr/bin/python3", std::string(AZ_SOURCE_DIR) + "/scripts/chaos",
                      "--preset", "tiny", "--kills", "1", "--stops", "1", "--stop-seconds", "2",
                      "--services", "replay,evaluator,selfplay-0,learner", "--deadline", "60",
                      "--min-gap", "1", "--max-gap", "3", "--seed", "7", "--run-dir",
                      dir.path() + "/run", "--build-dir", AZ_BINARY_DIR, "--json", json},
                     out, out);
  ASSERT_TRUE(chaos.started());
  EXPECT_EQ(chaos.Wait(), 0) << ReadWholeFile(out);
  const std::string text = ReadWholeFile(out);
  EXPECT_THAT(text, HasSubstr("nothing lost, every fault recovered")) << text;
  const nlohmann::json result = nlohmann::json::parse(ReadWholeFile(json));
  EXPECT_TRUE(result["failures"].empty()) << result.dump(2);
  for (const std::string service : {"replay", "evaluator", "selfplay-0", "learner"}) {
    ASSERT_TRUE(result["recovery"].contains(service)) << service << "\n" << text;
    EXPECT_EQ(result["recovery"][service]["kill"]["faults"], 1) << service;
  }
  // Training went on through it all: models were published and the buffer kept its records.
  EXPECT_GE(result["final"]["model_version"].get<int>(), 1);
  EXPECT_GT(result["final"]["replay_size"].get<int>(), 0);
}

}  // namespace
}  // namespace az::pipeline
