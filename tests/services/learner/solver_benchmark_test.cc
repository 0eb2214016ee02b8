// The learner's learning curve and collapse watch (services/learner/solver_benchmark.h): a real
// network file scored against the real Connect Four solver's benchmark set on the benchmark's own
// thread, and the watch's warnings from sequences of scores and losses.

#include "services/learner/solver_benchmark.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <vector>

#include "core/games/registry.h"
#include "core/nn/game_network.h"
#include "core/nn/network.h"
#include "services/score/position_set.h"
#include "tests/ipc/test_util.h"

namespace az::learner {
namespace {

using ipc::testing::TempDir;
using ::testing::HasSubstr;

// An untrained Connect Four network's weights, as the learner publishes them.
std::string SaveUntrainedNetwork(const std::string& dir, std::uint64_t seed) {
  const games::GameInfo* info = *games::FindGame("connect4");
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kCpu;
  runtime.input_layout = nn::ToInputLayout(info->input.layout);
  runtime.seed = seed;
  auto network = nn::Network::Create({nn::DefaultNetConfig(*info), runtime});
  AZ_CHECK(network.ok(), network.status().ToString());
  const std::string path = dir + "/model-" + std::to_string(seed) + ".azw";
  AZ_CHECK((*network)->SaveWeights(path, seed).ok());
  return path;
}

struct Results {
  std::mutex mutex;
  std::vector<Result<BenchmarkResult>> got;
  SolverBenchmark::Callback Callback() {
    return [this](const Result<BenchmarkResult>& r) {
      std::lock_guard lock(mutex);
      got.push_back(r);
    };
  }
};

TEST(SolverBenchmarkTest, OnlyGamesWithASolverHaveABenchmark) {
  EXPECT_TRUE(SolverBenchmark::Available("connect4"));
  EXPECT_TRUE(SolverBenchmark::Available("tictactoe"));
  EXPECT_FALSE(SolverBenchmark::Available("chess"));
  EXPECT_FALSE(SolverBenchmark::Available("go"));
}

TEST(SolverBenchmarkTest, ScoresAPublishedModelOnTheShippedSetAndReportsAMissingFile) {
  TempDir dir;
  const std::string path = SaveUntrainedNetwork(dir.path(), 3);
  Results results;
  SolverBenchmark bench("connect4", "", results.Callback());
  bench.Submit(3, path);
  bench.WaitIdle();
  bench.Submit(4, dir.path() + "/model-4.azw");  // deleted by model-keep before its turn
  bench.WaitIdle();
  ASSERT_EQ(results.got.size(), 2u);
  ASSERT_TRUE(results.got[0].ok()) << results.got[0].status().ToString();
  const BenchmarkResult& r = *results.got[0];
  EXPECT_EQ(r.model_version, 3u);
  EXPECT_EQ(r.positions, 300);  // the shipped small set
  EXPECT_THAT(r.set, HasSubstr("connect4-small"));
  EXPECT_GE(r.kept, r.trivial);
  EXPECT_LE(r.kept, r.positions);
  EXPECT_DOUBLE_EQ(r.share, static_cast<double>(r.kept) / r.positions);
  EXPECT_EQ(results.got[1].status().code(), StatusCode::kNotFound);
}

TEST(SolverBenchmarkTest, ScoresTheSetTheLearnerNamesAndRefusesOneThatCannotBeScored) {
  const std::string small = score::ShippedSetPath("connect4", "small");
  EXPECT_TRUE(SolverBenchmark::CheckSet("connect4", "").ok());
  EXPECT_TRUE(SolverBenchmark::CheckSet("connect4", "small").ok());
  EXPECT_TRUE(SolverBenchmark::CheckSet("connect4", small).ok());
  const Status unknown = SolverBenchmark::CheckSet("connect4", "no-such-set");
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_THAT(unknown.ToString(), HasSubstr("benchmark-set no-such-set"));
  // A Connect Four set for tic-tac-toe: the set's header names its game.
  EXPECT_EQ(SolverBenchmark::CheckSet("tictactoe", small).code(), StatusCode::kInvalidArgument);

  TempDir dir;
  const std::string path = SaveUntrainedNetwork(dir.path(), 5);
  Results results;
  SolverBenchmark bench("connect4", small, results.Callback());
  bench.Submit(5, path);
  bench.WaitIdle();
  ASSERT_EQ(results.got.size(), 1u);
  ASSERT_TRUE(results.got[0].ok()) << results.got[0].status().ToString();
  EXPECT_EQ(results.got[0]->positions, 300);
  EXPECT_EQ(results.got[0]->set, small);
}

TEST(SolverBenchmarkTest, WhenModelsComeFasterOnlyTheNewestWaitingOneIsScored) {
  TempDir dir;
  std::vector<std::string> paths;
  for (std::uint64_t v = 0; v < 6; ++v) paths.push_back(SaveUntrainedNetwork(dir.path(), v));
  Results results;
  SolverBenchmark bench("connect4", "", results.Callback());
  for (std::uint64_t v = 0; v < 6; ++v) bench.Submit(v, paths[v]);
  bench.WaitIdle();
  // The first may have started at once; of the rest only model 5 was still waiting at the end.
  ASSERT_GE(results.got.size(), 1u);
  ASSERT_LE(results.got.size(), 2u);
  ASSERT_TRUE(results.got.back().ok());
  EXPECT_EQ(results.got.back()->model_version, 5u);
  EXPECT_EQ(bench.skipped() + results.got.size(), 6u);
}

BenchmarkResult Scored(std::uint64_t model, double share) {
  return {.model_version = model,
          .positions = 1000,
          .kept = static_cast<int>(share * 1000),
          .share = share};
}

TEST(CollapseWatchTest, WarnsOnceWhenTheShareFallsFarBelowTheBestAndAgainAfterRecovering) {
  CollapseWatch watch({.max_drop = 0.05});
  EXPECT_FALSE(watch.ObserveBenchmark(Scored(0, 0.50)));
  EXPECT_FALSE(watch.ObserveBenchmark(Scored(1, 0.80)));
  EXPECT_FALSE(watch.ObserveBenchmark(Scored(2, 0.76)));  // within 5 points: noise
  EXPECT_FALSE(watch.suspected());
  std::optional<std::string> warning = watch.ObserveBenchmark(Scored(3, 0.70));
  ASSERT_TRUE(warning.has_value());
  EXPECT_THAT(*warning, HasSubstr("model 3"));
  EXPECT_THAT(*warning, HasSubstr("70.0%"));
  EXPECT_THAT(*warning, HasSubstr("model 1's 80.0%"));
  EXPECT_TRUE(watch.benchmark_falling());
  EXPECT_FALSE(watch.ObserveBenchmark(Scored(4, 0.60)));  // still falling: said already
  EXPECT_TRUE(watch.suspected());
  EXPECT_FALSE(watch.ObserveBenchmark(Scored(5, 0.79)));  // recovered
  EXPECT_FALSE(watch.suspected());
  EXPECT_TRUE(watch.ObserveBenchmark(Scored(6, 0.70)).has_value());
  EXPECT_EQ(watch.best_model(), 1u);
  EXPECT_DOUBLE_EQ(watch.best_share(), 0.80);
}

TEST(CollapseWatchTest, WarnsWhenTheValueLossAverageNearsZeroAfterEnoughSteps) {
  CollapseWatch watch({.min_value_loss = 0.01, .min_steps = 50});
  EXPECT_FALSE(watch.ObserveValueLoss(0.001, 10));  // too few steps to mean anything
  EXPECT_FALSE(watch.ObserveValueLoss(0.40, 60));
  std::optional<std::string> warning = watch.ObserveValueLoss(0.004, 61);
  ASSERT_TRUE(warning.has_value());
  EXPECT_THAT(*warning, HasSubstr("0.0040"));
  EXPECT_TRUE(watch.value_loss_collapsed());
  EXPECT_FALSE(watch.ObserveValueLoss(0.003, 62));
  EXPECT_FALSE(watch.ObserveValueLoss(0.2, 63));
  EXPECT_FALSE(watch.suspected());
}

TEST(CollapseWatchTest, ZeroThresholdsTurnTheSignsOff) {
  CollapseWatch watch({.max_drop = 0, .min_value_loss = 0});
  EXPECT_FALSE(watch.ObserveBenchmark(Scored(0, 0.9)));
  EXPECT_FALSE(watch.ObserveBenchmark(Scored(1, 0.1)));
  EXPECT_FALSE(watch.ObserveValueLoss(0, 1000));
  EXPECT_FALSE(watch.suspected());
}

}  // namespace
}  // namespace az::learner
