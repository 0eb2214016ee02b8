// CheckpointDir and ModelPublisher with a real trainer, real files and a real event subscriber.

#include "services/learner/checkpoints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/nn/checksum.h"
#include "core/nn/file_io.h"
#include "ipc/endpoint.h"
#include "ipc/event_subscriber.h"
#include "services/learner/model_publisher.h"
#include "services/learner/loop/training_batch.h"
#include "tests/ipc/test_util.h"
#include "tests/services/learner/connect_four_samples.h"

namespace az::learner {
namespace {

namespace fs = std::filesystem;
using ipc::testing::TempDir;
using testing::Bytes;
using ::testing::HasSubstr;
using testing::RandomConnectFourSamples;

std::unique_ptr<nn::Trainer> MakeTrainer(std::uint64_t seed = 0) {
  nn::TrainerOptions options;
  options.net = nn::NetConfig::ConnectFour();
  options.runtime.device = nn::DeviceChoice::kCpu;
  options.runtime.input_layout = nn::InputLayout::kNchw;
  options.runtime.seed = seed;
  Result<std::unique_ptr<nn::Trainer>> trainer = nn::Trainer::Create(options);
  AZ_CHECK(trainer.ok(), trainer.status().ToString());
  return std::move(trainer).value();
}

// `steps` optimizer steps on random Connect Four samples.
void Train(nn::Trainer& trainer, int steps) {
  const auto samples = RandomConnectFourSamples(16, 11, 0);
  auto decoder = BatchDecoder::Create(games::ConnectFour::kId);
  DecodedBatch batch;
  ASSERT_TRUE(decoder->Decode(Bytes(samples), 80, std::vector<double>(16, 1.0), batch).ok());
  for (int i = 0; i < steps; ++i) {
    Result<nn::TrainStepResult> result = trainer.TrainStep(batch.samples, decoder->Encoder());
    ASSERT_TRUE(result.ok()) << result.status().ToString();
  }
}

void FlipByte(const std::string& path, std::size_t offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  file.read(&c, 1);
  c ^= 0x5a;
  file.seekp(static_cast<std::streamoff>(offset));
  file.write(&c, 1);
}

TEST(CheckpointDirTest, SavesByStepKeepsTheNewestAndRestoresTheLatest) {
  TempDir dir;
  Result<CheckpointDir> checkpoints = CheckpointDir::Open(dir.path() + "/ckpt", 2);
  ASSERT_TRUE(checkpoints.ok()) << checkpoints.status().ToString();
  auto trainer = MakeTrainer();
  for (int i = 0; i < 3; ++i) {
    Train(*trainer, 2);
    ASSERT_TRUE(checkpoints->Save(*trainer, 10 + i).ok());
  }
  const std::vector<CheckpointFile> files = checkpoints->List();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].step, 6u);
  EXPECT_EQ(files[1].step, 4u);
  EXPECT_EQ(fs::path(files[0].path).filename(), "checkpoint-0000000006.azck");

  auto fresh = MakeTrainer(99);
  Result<std::optional<ResumeInfo>> resumed = checkpoints->RestoreNewest(*fresh);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  ASSERT_TRUE(resumed->has_value());
  EXPECT_EQ((*resumed)->step, 6u);
  EXPECT_EQ((*resumed)->model_version, 12u);
  EXPECT_EQ(fresh->counters().steps, 6u);
  EXPECT_TRUE((*resumed)->refused.empty());
  // The restored weights are the saved ones: both trainers write the same weights payload.
  ASSERT_TRUE(trainer->SaveWeights(dir.path() + "/a.azw", 1).ok());
  ASSERT_TRUE(fresh->SaveWeights(dir.path() + "/b.azw", 1).ok());
  EXPECT_EQ(*nn::ReadWholeFile(dir.path() + "/a.azw"), *nn::ReadWholeFile(dir.path() + "/b.azw"));
}

TEST(CheckpointDirTest, ACorruptNewestCheckpointFallsBackToThePreviousOneAndIsSetAside) {
  TempDir dir;
  Result<CheckpointDir> checkpoints = CheckpointDir::Open(dir.path(), 3);
  ASSERT_TRUE(checkpoints.ok());
  auto trainer = MakeTrainer();
  Train(*trainer, 1);
  ASSERT_TRUE(checkpoints->Save(*trainer, 1).ok());
  Train(*trainer, 1);
  Result<std::string> newest = checkpoints->Save(*trainer, 2);
  ASSERT_TRUE(newest.ok());
  FlipByte(*newest, fs::file_size(*newest) / 2);

  auto fresh = MakeTrainer();
  Result<std::optional<ResumeInfo>> resumed = checkpoints->RestoreNewest(*fresh);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  ASSERT_TRUE(resumed->has_value());
  EXPECT_EQ((*resumed)->step, 1u);
  EXPECT_EQ((*resumed)->model_version, 1u);
  EXPECT_EQ((*resumed)->refused, std::vector<std::string>{*newest});
  EXPECT_FALSE(fs::exists(*newest));
  EXPECT_TRUE(fs::exists(*newest + ".corrupt"));
  // It is no longer listed, so it holds no place among the kept ones.
  ASSERT_EQ(checkpoints->List().size(), 1u);
}

TEST(CheckpointDirTest, WhenNoCheckpointLoadsItSaysWhyAndChangesNothing) {
  TempDir dir;
  Result<CheckpointDir> checkpoints = CheckpointDir::Open(dir.path(), 3);
  ASSERT_TRUE(checkpoints.ok());
  auto trainer = MakeTrainer();
  Result<std::string> only = checkpoints->Save(*trainer, 0);
  ASSERT_TRUE(only.ok());
  fs::resize_file(*only, 50);  // truncated
  auto fresh = MakeTrainer();
  Result<std::optional<ResumeInfo>> resumed = checkpoints->RestoreNewest(*fresh);
  ASSERT_FALSE(resumed.ok());
  EXPECT_EQ(resumed.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(resumed.status().message(), HasSubstr("checkpoint-0000000000.azck"));
  EXPECT_THAT(resumed.status().message(), HasSubstr("truncated"));
  EXPECT_TRUE(fs::exists(*only));
  // An empty directory is a fresh start, not an error.
  TempDir empty;
  Result<CheckpointDir> none = CheckpointDir::Open(empty.path(), 3);
  ASSERT_TRUE(none.ok());
  Result<std::optional<ResumeInfo>> nothing = none->RestoreNewest(*fresh);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->has_value());
}

TEST(ModelPublisherTest, PublishesWeightsWithTheirChecksumAndVersionsSurviveARestart) {
  TempDir dir;
  Result<std::string> endpoint = ipc::EventsEndpoint(dir.path(), "learner");
  ASSERT_TRUE(endpoint.ok());
  ModelPublisherOptions options{.run_dir = dir.path(),
                                .service = "learner",
                                .events_endpoint = *endpoint,
                                .model_dir = dir.path() + "/models",
                                .keep = 2};
  auto trainer = MakeTrainer();
  {
    Result<std::unique_ptr<ModelPublisher>> publisher = ModelPublisher::Create(options);
    ASSERT_TRUE(publisher.ok()) << publisher.status().ToString();
    EXPECT_FALSE((*publisher)->LatestVersion().has_value());
    for (std::uint64_t v = 0; v <= 4; ++v) {
      Result<ipc::ModelPublished> model = (*publisher)->Publish(*trainer, v);
      ASSERT_TRUE(model.ok()) << model.status().ToString();
      EXPECT_EQ(model->path, dir.path() + "/models/model-" + std::to_string(v) + ".azw");
    }
  }
  // model-0 (the baseline) and the newest two stay.
  EXPECT_TRUE(fs::exists(dir.path() + "/models/model-0.azw"));
  EXPECT_FALSE(fs::exists(dir.path() + "/models/model-1.azw"));
  EXPECT_FALSE(fs::exists(dir.path() + "/models/model-2.azw"));
  EXPECT_TRUE(fs::exists(dir.path() + "/models/model-4.azw"));

  // A restarted publisher knows version 4, and a late subscriber receives it with a checksum that
  // matches the file.
  Result<std::unique_ptr<ModelPublisher>> again = ModelPublisher::Create(options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->LatestVersion(), std::optional<std::uint64_t>(4));
  Result<ipc::EventSubscriber> subscriber =
      ipc::EventSubscriber::Create({.endpoints = {*endpoint}, .topics = {"model"}});
  ASSERT_TRUE(subscriber.ok());
  Result<ipc::Event> event = subscriber->Next(std::chrono::seconds(20));
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  Result<ipc::ModelPublished> model = ipc::ModelPublishedFromEvent(*event);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->version, 4);
  Result<std::string> checksum = FileChecksum(model->path);
  ASSERT_TRUE(checksum.ok());
  EXPECT_EQ(model->checksum, *checksum);
  EXPECT_THAT(model->checksum, ::testing::MatchesRegex("xxh64:[0-9a-f]{16}"));
  // The file's own XXH64, as `xxh64sum` would print it.
  const std::string data = *nn::ReadWholeFile(model->path);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(
                    nn::Xxh64(std::as_bytes(std::span(data.data(), data.size())))));
  EXPECT_EQ(model->checksum, std::string("xxh64:") + hex);
}

}  // namespace
}  // namespace az::learner
