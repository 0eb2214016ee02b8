// BatchDecoder: replay records in, training samples out; malformed records dropped with a reason.

#include "services/learner/loop/training_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core/encoding/planes.h"
#include "core/games/connect4/connect_four_encoder.h"
#include "core/nn/net_config.h"
#include "services/replay/random_samples.h"
#include "tests/ipc/test_util.h"
#include "tests/services/learner/connect_four_samples.h"

namespace az::learner {
namespace {

using testing::Bytes;
using ::testing::HasSubstr;
using testing::RandomConnectFourSamples;

TEST(TrainingBatchTest, ConnectFourSamplesBecomeTrainSamplesWithTheirTargetsAndWeights) {
  const auto samples = RandomConnectFourSamples(5, 1, 7);
  auto decoder = BatchDecoder::Create(games::ConnectFour::kId);
  EXPECT_EQ(decoder->record_bytes(), 80u);
  EXPECT_EQ(decoder->input_layout(), nn::InputLayout::kNchw);
  EXPECT_TRUE(decoder->Fits(nn::NetConfig::ConnectFour()));
  EXPECT_FALSE(decoder->Fits(nn::NetConfig::ChessSmall()));

  const std::vector<double> weights = {1.0, 0.5, 0.25, 0.75, 0.1};
  DecodedBatch batch;
  ASSERT_TRUE(decoder->Decode(Bytes(samples), 80, weights, batch).ok());
  ASSERT_EQ(batch.samples.size(), 5u);
  EXPECT_TRUE(batch.dropped.empty());
  for (std::size_t i = 0; i < 5; ++i) {
    const nn::TrainSample& t = batch.samples[i];
    EXPECT_EQ(batch.source[i], i);
    EXPECT_EQ(batch.model_version[i], 7u);
    EXPECT_FLOAT_EQ(t.importance_weight, static_cast<float>(weights[i]));
    // The policy lists the columns with visits, with the sample's probabilities.
    const auto policy = sample::ConnectFourPolicy(samples[i]);
    float sum = 0;
    for (const nn::PolicyEntry& e : t.policy) {
      ASSERT_GE(e.action, 0);
      ASSERT_LT(e.action, 7);
      EXPECT_FLOAT_EQ(e.weight, policy[e.action]);
      sum += e.weight;
    }
    EXPECT_NEAR(sum, 1.0f, 1e-3f);
    const nn::Wdl wdl = nn::WdlFromOutcome(samples[i].z);
    EXPECT_EQ(t.wdl, wdl);
  }
  // The encoder writes exactly the game's planes for the kept sample.
  std::vector<float> got(games::kConnectFourInputSize, -1.0f);
  std::vector<float> want(games::kConnectFourInputSize);
  decoder->Encoder()(3, got.data());
  games::EncodeConnectFour(samples[3].position, want);
  EXPECT_EQ(got, want);
}

TEST(TrainingBatchTest, MalformedRecordsAreDroppedWithTheReasonAndTheRestKept) {
  auto samples = RandomConnectFourSamples(6, 2, 0);
  samples[1].magic = 0;          // not a sample
  samples[3].policy[0] = 65535;  // the policy no longer sums to 1
  samples[3].policy[1] = 65535;
  samples[4].flags = 0;  // no outcome
  std::vector<std::byte> bytes(Bytes(samples).begin(), Bytes(samples).end());
  // Unaligned, as a received frame may be.
  std::vector<std::byte> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  auto decoder = BatchDecoder::Create(games::ConnectFour::kId);
  DecodedBatch batch;
  const std::vector<double> weights(6, 1.0);
  ASSERT_TRUE(decoder->Decode(std::span(shifted).subspan(1), 80, weights, batch).ok());
  EXPECT_EQ(batch.source, (std::vector<std::size_t>{0, 2, 5}));
  ASSERT_EQ(batch.dropped.size(), 3u);
  EXPECT_EQ(batch.dropped[0].index, 1u);
  EXPECT_EQ(batch.dropped[0].why.code(), StatusCode::kDataLoss);
  EXPECT_EQ(batch.dropped[1].index, 3u);
  EXPECT_THAT(batch.dropped[1].why.message(), HasSubstr("policy"));
  EXPECT_EQ(batch.dropped[2].index, 4u);
  // The encoder follows the kept samples: index 1 is record 2.
  std::vector<float> got(games::kConnectFourInputSize), want(games::kConnectFourInputSize);
  decoder->Encoder()(1, got.data());
  games::EncodeConnectFour(samples[2].position, want);
  EXPECT_EQ(got, want);
}

TEST(TrainingBatchTest, AnotherGamesRecordsAreRefusedAsAConfigurationMismatch) {
  const auto samples = RandomConnectFourSamples(2, 3, 0);
  auto chess = BatchDecoder::Create(games::Chess::kId);
  DecodedBatch batch;
  const std::vector<double> weights(2, 1.0);
  const Status status = chess->Decode(Bytes(samples), 80, weights, batch);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("80-byte records"));
  EXPECT_THAT(status.message(), HasSubstr("1160"));
  // Sizes that disagree with the weights are the caller's mistake.
  auto c4 = BatchDecoder::Create(games::ConnectFour::kId);
  EXPECT_EQ(c4->Decode(Bytes(samples), 80, std::vector<double>(3, 1.0), batch).code(),
            StatusCode::kInvalidArgument);
}

TEST(TrainingBatchTest, ChessSamplesKeepTheirSparsePolicyAndEncodeToThePlanes) {
  const std::vector<sample::ChessSample> samples =
      replayd::RandomChessSamples(4, {.seed = 5, .model_version = 2});
  auto decoder = BatchDecoder::Create(games::Chess::kId);
  EXPECT_EQ(decoder->input_layout(), nn::InputLayout::kNhwc);
  EXPECT_TRUE(decoder->Fits(nn::NetConfig::ChessSmall()));
  EXPECT_TRUE(decoder->Fits(nn::NetConfig::ChessFull()));
  DecodedBatch batch;
  const std::vector<double> weights(4, 0.5);
  ASSERT_TRUE(
      decoder
          ->Decode(std::as_bytes(std::span(samples)), sizeof(sample::ChessSample), weights, batch)
          .ok());
  ASSERT_EQ(batch.samples.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    float sum = 0;
    std::size_t listed = 0;
    for (const sample::PolicyEntry& e : sample::Policy(samples[i])) {
      if (e.probability > 0) ++listed;
    }
    EXPECT_EQ(batch.samples[i].policy.size(), listed);
    for (const nn::PolicyEntry& e : batch.samples[i].policy) sum += e.weight;
    EXPECT_NEAR(sum, 1.0f, 0.01f);
    EXPECT_EQ(batch.model_version[i], 2u);
  }
  std::vector<float> got(encoding::kInputFloats), want(encoding::kInputFloats);
  decoder->Encoder()(2, got.data());
  encoding::EncodePlanes(samples[2].position, want);
  EXPECT_EQ(got, want);
}

TEST(TrainingBatchTest, SymmetryAugmentationTrainsOnTheMirrorOrTheOriginalNeverAMixture) {
  const auto samples = RandomConnectFourSamples(64, 3, 1);
  auto decoder =
      BatchDecoder::Create(games::ConnectFour::kId, {.augment_symmetries = true, .seed = 5});
  DecodedBatch batch;
  ASSERT_TRUE(
      decoder->Decode(Bytes(samples), 80, std::vector<double>(samples.size(), 1.0), batch).ok());
  ASSERT_EQ(batch.samples.size(), samples.size());
  int mirrored = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto policy = sample::ConnectFourPolicy(samples[i]);
    std::vector<float> planes(games::kConnectFourInputSize);
    decoder->Encoder()(static_cast<int>(i), planes.data());
    std::vector<float> original(games::kConnectFourInputSize);
    games::EncodeConnectFour(samples[i].position, original);
    std::vector<float> mirror(games::kConnectFourInputSize);
    for (int plane = 0; plane < games::kConnectFourPlanes; ++plane) {
      for (int row = 0; row < 6; ++row) {
        for (int column = 0; column < 7; ++column) {
          mirror[plane * 42 + row * 7 + column] = original[plane * 42 + row * 7 + 6 - column];
        }
      }
    }
    // The planes are the original or the mirror, and the policy moves with them (a position that
    // is its own mirror may carry either policy).
    const bool as_original = planes == original;
    const bool as_mirror = planes == mirror;
    ASSERT_TRUE(as_original || as_mirror);
    const auto matches = [&](bool mirrored_policy) {
      for (const nn::PolicyEntry& e : batch.samples[i].policy) {
        if (e.weight != policy[mirrored_policy ? 6 - e.action : e.action]) return false;
      }
      return true;
    };
    EXPECT_TRUE((as_original && matches(false)) || (as_mirror && matches(true)));
    mirrored += !as_original;
    EXPECT_EQ(batch.samples[i].wdl, nn::WdlFromOutcome(samples[i].z));  // values are unchanged
  }
  // About half of them, drawn at random.
  EXPECT_GT(mirrored, 10);
  EXPECT_LT(mirrored, 54);
}

TEST(TrainingBatchTest, TheValueTargetMixesInTheRootWdlAndAnOffPolicySampleTakesItAlone) {
  auto samples = RandomConnectFourSamples(8, 4, 1);
  for (std::size_t i = 0; i < samples.size(); i += 2) samples[i].flags |= games::kDenseOffPolicy;
  for (const float mix : {0.0f, 0.5f}) {
    auto decoder = BatchDecoder::Create(games::ConnectFour::kId, {.root_value_mix = mix});
    DecodedBatch batch;
    ASSERT_TRUE(
        decoder->Decode(Bytes(samples), 80, std::vector<double>(samples.size(), 1.0), batch).ok());
    ASSERT_EQ(batch.samples.size(), samples.size()) << "off-policy samples are valid";
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const nn::Wdl outcome = nn::WdlFromOutcome(samples[i].z);
      const bool off_policy = i % 2 == 0;
      const float m = off_policy ? 1.0f : mix;  // the outcome followed moves nobody searched
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(batch.samples[i].wdl[k], (1 - m) * outcome[k] + m * samples[i].root_wdl[k],
                    1e-6f)
            << "mix " << mix << " sample " << i << " entry " << k;
      }
    }
  }
}

}  // namespace
}  // namespace az::learner
