// The model directory's naming and pruning (core/nn/model_files.h), which the learner's publisher
// and az-relay both use: only well-formed names count as models, the newest are kept, and the
// learner's initial weights survive pruning; the learner's checkpoints are listed and pruned by the
// same code under their own names.

#include "core/nn/model_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/ipc/test_util.h"

namespace az::nn {
namespace {

using ipc::testing::TempDir;

void Touch(const std::string& path) { std::ofstream(path) << "x"; }

std::vector<std::uint64_t> Versions(const std::string& dir) {
  std::vector<std::uint64_t> versions;
  for (const auto& [version, path] : ListModelFiles(dir)) versions.push_back(version);
  return versions;
}

TEST(ModelFilesTest, NamesRoundTripAndOnlyModelNamesParse) {
  EXPECT_EQ(ModelFileName(42), "model-42.azw");
  EXPECT_EQ(ModelVersionOfFileName(ModelFileName(0)), 0u);
  EXPECT_EQ(ModelVersionOfFileName(ModelFileName(18446744073709551615ull)),
            18446744073709551615ull);
  for (const char* bad : {"model-.azw", "model-1x.azw", "model--1.azw", "model-1.azw.tmp",
                          "checkpoint-1.azck", "model-18446744073709551616.azw", "model-1"}) {
    EXPECT_EQ(ModelVersionOfFileName(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(NumberInFileName("checkpoint-0000001234.azck", "checkpoint-", ".azck"), 1234u);
  EXPECT_EQ(NumberInFileName("ab", "ab", "b"), std::nullopt);  // prefix and suffix overlap
}

TEST(ModelFilesTest, ListsModelFilesNewestFirstAndIgnoresTheRest) {
  TempDir dir;
  for (int v : {3, 10, 0, 7}) Touch(dir.path() + "/" + ModelFileName(v));
  Touch(dir.path() + "/model-5.azw.tmp");                          // an atomic write in progress
  std::filesystem::create_directory(dir.path() + "/model-9.azw");  // not a regular file
  EXPECT_EQ(Versions(dir.path()), (std::vector<std::uint64_t>{10, 7, 3, 0}));
  EXPECT_TRUE(ListModelFiles(dir.path() + "/missing").empty());
}

TEST(ModelFilesTest, PruningKeepsTheNewestAndTheInitialWeightsWhenAsked) {
  TempDir learner, relay;
  for (int v = 0; v <= 6; ++v) {
    Touch(learner.path() + "/" + ModelFileName(v));
    Touch(relay.path() + "/" + ModelFileName(v));
  }
  PruneModelFiles(learner.path(), 2, /*keep_initial=*/true);
  EXPECT_EQ(Versions(learner.path()), (std::vector<std::uint64_t>{6, 5, 0}));
  PruneModelFiles(relay.path(), 2, /*keep_initial=*/false);
  EXPECT_EQ(Versions(relay.path()), (std::vector<std::uint64_t>{6, 5}));
  PruneModelFiles(relay.path(), 0, /*keep_initial=*/false);  // 0: keep all
  EXPECT_EQ(Versions(relay.path()), (std::vector<std::uint64_t>{6, 5}));
}

TEST(ModelFilesTest, NumberedFilesOfOnePrefixArePrunedWithoutTouchingOthers) {
  // The learner's checkpoints share the model files' listing and pruning with their own names.
  TempDir dir;
  for (int step : {100, 300, 200}) {
    Touch(dir.path() + "/checkpoint-" + std::to_string(step) + ".azck");
  }
  Touch(dir.path() + "/" + ModelFileName(1));
  Touch(dir.path() + "/checkpoint-400.azck.corrupt");  // set aside by a resume: not a checkpoint
  PruneNumberedFiles(dir.path(), "checkpoint-", ".azck", 2);
  const auto checkpoints = ListNumberedFiles(dir.path(), "checkpoint-", ".azck");
  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_EQ(checkpoints[0].first, 300u);
  EXPECT_EQ(checkpoints[1].first, 200u);
  EXPECT_EQ(checkpoints[0].second, dir.path() + "/checkpoint-300.azck");
  EXPECT_EQ(Versions(dir.path()), (std::vector<std::uint64_t>{1}));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/checkpoint-400.azck.corrupt"));
}

}  // namespace
}  // namespace az::nn
