// Batch building: the encoder writes straight into a channels-last tensor whose memory is NHWC, and
// sparse policy lists expand into normalised dense targets; malformed samples are refused by name.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "core/nn/torch_batch.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ::testing::HasSubstr;

TEST(BatchTest, EncoderWritesStraightIntoChannelsLastMemory) {
  const NetConfig c = testing::TinyConfig();
  const testing::SampleSet set = testing::MakeSamples(c, 4, 1);
  torch::Tensor input = NewInputTensor(c, 4, InputLayout::kNhwc);
  EXPECT_TRUE(input.is_contiguous(torch::MemoryFormat::ChannelsLast));
  const float* base = input.data_ptr<float>();
  std::vector<const float*> seen;
  FillInput(input, 4, [&](int i, float* dst) {
    seen.push_back(dst);
    set.Encoder()(i, dst);
  });
  for (int i = 0; i < 4; ++i) EXPECT_EQ(seen[i], base + i * c.InputFloatsPerPosition());
  // Logical NCHW indexing sees the NHWC buffer's values: input[i][p][r][col] = nhwc[i][r][col][p].
  const torch::Tensor expected =
      torch::from_blob(const_cast<float*>(set.inputs.data()),
                       {4, c.board_height, c.board_width, c.input_planes})
          .permute({0, 3, 1, 2});
  EXPECT_TRUE(torch::equal(input, expected));
  // WrapInput views the same buffer without copying.
  const torch::Tensor wrapped = WrapInput(set.inputs.data(), 4, c, InputLayout::kNhwc);
  EXPECT_EQ(wrapped.data_ptr<float>(), set.inputs.data());
  EXPECT_TRUE(torch::equal(wrapped, expected));
}

TEST(BatchTest, PlanarLayoutIsContiguousNchw) {
  const NetConfig c = testing::TinyConfig();
  torch::Tensor input = NewInputTensor(c, 2, InputLayout::kNchw);
  EXPECT_TRUE(input.is_contiguous());
  FillInput(input, 2, [&](int i, float* dst) {
    for (std::int64_t k = 0; k < c.InputFloatsPerPosition(); ++k)
      dst[k] = static_cast<float>(i * 1000 + k);
  });
  // Element (i=1, plane 2, row 3, col 4) is at planar offset (2 * 6 + 3) * 7 + 4.
  EXPECT_EQ(input[1][2][3][4].item<float>(), 1000.0f + (2 * 6 + 3) * 7 + 4);
}

TEST(BatchTest, PolicyTargetsAreNormalisedVisitCounts) {
  const std::vector<PolicyEntry> visits = {{1, 30.0f}, {5, 10.0f}, {6, 0.0f}};
  const std::vector<PolicyEntry> duplicates = {{2, 1.0f}, {2, 1.0f}, {3, 2.0f}};
  const std::vector<TrainSample> samples = {{.policy = visits}, {.policy = duplicates}};
  const Result<torch::Tensor> dense = DensePolicyTargets(samples, 7);
  ASSERT_TRUE(dense.ok()) << dense.status().ToString();
  const torch::Tensor expected = torch::tensor({0.0f, 0.75f, 0.0f, 0.0f, 0.0f, 0.25f, 0.0f, 0.0f,
                                                0.0f, 0.5f, 0.5f, 0.0f, 0.0f, 0.0f})
                                     .view({2, 7});
  EXPECT_TRUE(torch::allclose(*dense, expected));
}

TEST(BatchTest, MalformedPolicyTargetsAreRefusedByName) {
  const std::vector<PolicyEntry> ok = {{0, 1.0f}};
  const std::vector<PolicyEntry> out_of_range = {{7, 1.0f}};
  const std::vector<PolicyEntry> negative = {{1, -1.0f}, {2, 3.0f}};
  const std::vector<PolicyEntry> zero = {{1, 0.0f}};
  const std::vector<PolicyEntry> nan = {{1, std::nanf("")}};
  auto error = [&](std::span<const PolicyEntry> bad) {
    const std::vector<TrainSample> samples = {{.policy = ok}, {.policy = bad}};
    const Status status = DensePolicyTargets(samples, 7).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("training sample 1"));
    return status.message();
  };
  EXPECT_THAT(error(out_of_range), HasSubstr("action 7 is outside [0, 7)"));
  EXPECT_THAT(error(negative), HasSubstr("negative"));
  EXPECT_THAT(error(zero), HasSubstr("sums to zero"));
  EXPECT_THAT(error(nan), HasSubstr("not finite"));
  EXPECT_THAT(error({}), HasSubstr("empty"));
}

TEST(BatchTest, ValueTargetsAndWeightsAreChecked) {
  const std::vector<PolicyEntry> p = {{0, 1.0f}};
  std::vector<TrainSample> samples = {{.policy = p, .wdl = WdlFromOutcome(-1.0f)}};
  const Result<torch::Tensor> wdl = WdlTargets(samples);
  ASSERT_TRUE(wdl.ok());
  EXPECT_TRUE(torch::equal(*wdl, torch::tensor({0.0f, 0.0f, 1.0f}).view({1, 3})));
  samples[0].wdl = {0.5f, 0.2f, 0.0f};
  EXPECT_THAT(WdlTargets(samples).status().message(), HasSubstr("sums to 0.7"));
  samples[0].importance_weight = 0.0f;
  EXPECT_THAT(ImportanceWeights(samples).status().message(),
              HasSubstr("importance weight 0.000000 is not a positive finite number"));
}

TEST(BatchTest, WdlFromOutcomeSplitsLinearly) {
  EXPECT_EQ(WdlFromOutcome(1.0f), (Wdl{1.0f, 0.0f, 0.0f}));
  EXPECT_EQ(WdlFromOutcome(0.0f), (Wdl{0.0f, 1.0f, 0.0f}));
  EXPECT_EQ(WdlFromOutcome(-1.0f), (Wdl{0.0f, 0.0f, 1.0f}));
  EXPECT_EQ(WdlFromOutcome(0.5f), (Wdl{0.5f, 0.5f, 0.0f}));
}

TEST(BatchTest, LegalMaskFromCsrLists) {
  const std::vector<std::int32_t> offsets = {0, 2, 2, 3};
  const std::vector<std::int32_t> actions = {1, 4, 0};
  const Result<torch::Tensor> mask = LegalMask({offsets, actions}, 3, 5);
  ASSERT_TRUE(mask.ok());
  const torch::Tensor expected =
      torch::tensor({0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}).to(torch::kBool).view({3, 5});
  EXPECT_TRUE(torch::equal(*mask, expected));
  const std::vector<std::int32_t> short_offsets = {0, 2};
  EXPECT_EQ(LegalMask({short_offsets, actions}, 3, 5).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(BatchTest, BuildTrainBatchAssemblesEverything) {
  const NetConfig c = testing::TinyConfig();
  testing::SampleSet set = testing::MakeSamples(c, 5, 2, /*actions_per_sample=*/3);
  set.samples[3].importance_weight = 0.5f;
  const Result<TrainBatch> batch =
      BuildTrainBatch(set.samples, set.Encoder(), c, InputLayout::kNhwc);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(batch->input.sizes(), (std::vector<std::int64_t>{5, c.input_planes, 6, 7}));
  EXPECT_TRUE(torch::allclose(batch->policy_target.sum(1), torch::ones({5})));
  EXPECT_EQ(batch->weight[3].item<float>(), 0.5f);
  EXPECT_EQ(BuildTrainBatch({}, set.Encoder(), c, InputLayout::kNhwc).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildTrainBatch(set.samples, EncodeFn(), c, InputLayout::kNhwc).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace az::nn
