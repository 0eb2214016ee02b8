// The network's shapes, outputs and masking, the equivalence of its input paths and memory
// formats, and which parameters get weight decay.

#include "core/nn/network.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdlib>
#include <fstream>

#include "core/nn/file_io.h"
#include "core/nn/torch_batch.h"
#include "core/nn/torch_model.h"
#include "core/nn/torch_optim.h"
#include "core/nn/torch_weights.h"
#include "core/nn/trainer.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ::testing::HasSubstr;

std::string Slurp(const std::string& path) { return ReadWholeFile(path).value(); }

void Overwrite(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

torch::Tensor RandomInput(const NetConfig& c, int n) {
  return torch::rand({n, c.input_planes, c.board_height, c.board_width});
}

class NetworkShapesTest : public ::testing::TestWithParam<NetConfig> {};

TEST_P(NetworkShapesTest, OutputsHaveTheConfiguredShapes) {
  const NetConfig c = GetParam();
  torch::manual_seed(1);
  AzNet net(c);
  net->eval();
  torch::NoGradGuard no_grad;
  const NetOutput out = net->forward(RandomInput(c, 3));
  EXPECT_EQ(out.policy.sizes(), (std::vector<std::int64_t>{3, c.policy_size}));
  EXPECT_EQ(out.policy_logits.sizes(), (std::vector<std::int64_t>{3, c.policy_size}));
  EXPECT_EQ(out.wdl_logits.sizes(), (std::vector<std::int64_t>{3, 3}));
  EXPECT_EQ(out.value.sizes(), (std::vector<std::int64_t>{3}));
  EXPECT_TRUE(torch::allclose(out.policy.sum(1), torch::ones({3}), 1e-5, 1e-5));
  EXPECT_TRUE((out.value.abs() <= 1.0f).all().item<bool>());
}

INSTANTIATE_TEST_SUITE_P(Presets, NetworkShapesTest,
                         ::testing::Values(NetConfig::ChessSmall(), NetConfig::ConnectFour(),
                                           testing::TinyConfig()));

TEST(NetworkTest, ValueIsWinMinusLossProbability) {
  const NetConfig c = testing::TinyConfig();
  AzNet net(c);
  net->eval();
  torch::NoGradGuard no_grad;
  const NetOutput out = net->forward(RandomInput(c, 4));
  const torch::Tensor wdl = torch::softmax(out.wdl_logits, 1);
  EXPECT_TRUE(torch::allclose(out.value, wdl.select(1, 0) - wdl.select(1, 2)));
}

TEST(NetworkTest, IllegalMovesGetTheMaskLogitAndZeroProbability) {
  const NetConfig c = testing::TinyConfig();
  AzNet net(c);
  net->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor mask = torch::zeros({2, c.policy_size}, torch::kBool);
  mask[0][1] = true;
  mask[0][4] = true;
  mask[1][6] = true;
  const NetOutput out = net->forward(RandomInput(c, 2), mask);
  EXPECT_TRUE(
      (out.policy_logits.masked_select(mask.logical_not()) == kIllegalLogit).all().item<bool>());
  EXPECT_TRUE((out.policy.masked_select(mask.logical_not()) == 0.0f).all().item<bool>());
  EXPECT_NEAR(out.policy[0][1].item<float>() + out.policy[0][4].item<float>(), 1.0f, 1e-6);
  EXPECT_NEAR(out.policy[1][6].item<float>(), 1.0f, 1e-6);
}

TEST(NetworkTest, MaskLogitIsFiniteInHalfPrecision) {
  // fp16 autocast produces half logits; the mask value must survive the cast and the softmax.
  const torch::Tensor logits =
      torch::tensor({3.0f, kIllegalLogit, -2.0f}).to(torch::kHalf).unsqueeze(0);
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
  EXPECT_EQ(logits[0][1].item<float>(), kIllegalLogit);
  const torch::Tensor p = torch::softmax(logits.to(torch::kFloat), 1);
  EXPECT_EQ(p[0][1].item<float>(), 0.0f);
  EXPECT_TRUE(torch::isfinite(torch::log_softmax(logits.to(torch::kFloat), 1)).all().item<bool>());
}

TEST(NetworkTest, ChannelsLastAndContiguousGiveTheSameOutputs) {
  const NetConfig c = NetConfig::ConnectFour();
  torch::manual_seed(3);
  AzNet net(c);
  net->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor x = RandomInput(c, 5);
  const NetOutput nchw = net->forward(x.contiguous());
  SetMemoryFormat(*net, /*channels_last=*/true);
  const NetOutput nhwc = net->forward(x.contiguous(torch::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(torch::allclose(nchw.policy_logits, nhwc.policy_logits, 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(nchw.wdl_logits, nhwc.wdl_logits, 1e-4, 1e-5));
}

// Connect Four's cell-read policy head: a column's logit is the per-cell logit at the cell the
// landing plane marks, so a column with no marked cell (a full one) has logit exactly 0; the head
// has one weight per policy channel where the dense one has a weight per cell and action; and the
// dense head is still there when asked for.
TEST(NetworkTest, CellPolicyReadsEachColumnAtItsMarkedCell) {
  NetConfig c = NetConfig::ConnectFour();
  ASSERT_EQ(c.policy_cell_plane, 3);
  torch::manual_seed(5);
  AzNet net(c);
  net->eval();
  torch::NoGradGuard no_grad;
  torch::Tensor x = RandomInput(c, 4).round();
  x.select(1, c.policy_cell_plane).zero_();
  for (int n = 0; n < 4; ++n) {
    for (int column = 0; column < 6; ++column) {  // column 6 is full: no landing cell
      x[n][c.policy_cell_plane][(n + column) % c.board_height][column] = 1.0f;
    }
  }
  const torch::Tensor logits = net->Logits(x).first;
  ASSERT_EQ(logits.sizes(), (std::vector<std::int64_t>{4, 7}));
  EXPECT_TRUE((logits.select(1, 6) == 0).all().item<bool>());
  EXPECT_TRUE((logits.slice(1, 0, 6) != 0).all().item<bool>());
  const auto policy_fc_size = [](AzNet& model) {
    for (const auto& p : model->named_parameters()) {
      if (p.key() == "policy_fc.weight") return p.value().numel();
    }
    return std::int64_t{0};
  };
  EXPECT_EQ(policy_fc_size(net), c.policy_channels);
  NetConfig dense = c;
  dense.policy_cell_plane = -1;
  AzNet dense_net(dense);
  EXPECT_EQ(policy_fc_size(dense_net), std::int64_t{c.policy_channels} * 42 * 7);
  EXPECT_EQ(dense_net->Logits(x).first.sizes(), logits.sizes());
}

// The facade: a caller's NHWC buffer, the encoder callback, and a planar (NCHW) buffer of the same
// positions all give the same results; priors cover exactly the legal moves.
TEST(NetworkFacadeTest, InputPathsAgreeAndPriorsCoverLegalMoves) {
  const NetConfig c = testing::TinyConfig();
  const testing::SampleSet set = testing::MakeSamples(c, 3, 11);
  NetworkOptions options{.net = c};
  options.runtime.device = DeviceChoice::kCpu;
  options.runtime.seed = 5;
  auto network = Network::Create(options);
  ASSERT_TRUE(network.ok()) << network.status().ToString();

  const std::vector<std::int32_t> offsets = {0, 2, 3, 7};
  const std::vector<std::int32_t> actions = {0, 3, 6, 1, 2, 4, 5};
  const LegalMovesView legal{offsets, actions};
  std::vector<float> priors_a(actions.size()), priors_b(actions.size()), value_a(3), value_b(3),
      wdl_a(9), logits_a(3 * c.policy_size);
  ASSERT_TRUE((*network)
                  ->Forward({.n = 3, .data = set.inputs.data()},
                            {.policy_logits = logits_a.data(),
                             .priors = priors_a.data(),
                             .wdl = wdl_a.data(),
                             .value = value_a.data()},
                            &legal)
                  .ok());
  ASSERT_TRUE((*network)
                  ->Forward({.n = 3, .encode = set.Encoder()},
                            {.priors = priors_b.data(), .value = value_b.data()}, &legal)
                  .ok());
  for (std::size_t k = 0; k < actions.size(); ++k) EXPECT_FLOAT_EQ(priors_a[k], priors_b[k]);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(value_a[i], value_b[i]);
    EXPECT_NEAR(value_a[i], wdl_a[3 * i] - wdl_a[3 * i + 2], 1e-6);
    float sum = 0.0f;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k) sum += priors_a[k];
    EXPECT_NEAR(sum, 1.0f, 1e-5) << "position " << i;
  }
  EXPECT_EQ(logits_a[0 * c.policy_size + 1], kIllegalLogit);  // action 1 is illegal in position 0

  // The same positions, planar.
  const std::int64_t hw = c.board_height * c.board_width;
  std::vector<float> planar(set.inputs.size());
  for (int i = 0; i < 3; ++i) {
    for (std::int64_t s = 0; s < hw; ++s) {
      for (int p = 0; p < c.input_planes; ++p) {
        planar[(i * c.input_planes + p) * hw + s] = set.inputs[(i * hw + s) * c.input_planes + p];
      }
    }
  }
  options.runtime.input_layout = InputLayout::kNchw;
  auto planar_net = Network::Create(options);  // same seed: same weights
  ASSERT_TRUE(planar_net.ok());
  std::vector<float> priors_c(actions.size());
  ASSERT_TRUE((*planar_net)
                  ->Forward({.n = 3, .data = planar.data()}, {.priors = priors_c.data()}, &legal)
                  .ok());
  for (std::size_t k = 0; k < actions.size(); ++k) EXPECT_NEAR(priors_a[k], priors_c[k], 1e-5);
}

// cpu-bf16: the same weights under CPU bf16 autocast give the fp32 outputs to bf16's precision
// (8 bits of mantissa), and the outputs callers read stay fp32: priors still sum to one.
TEST(NetworkFacadeTest, Bf16AutocastOnTheCpuKeepsTheOutputsNearFp32) {
  const NetConfig c = testing::TinyConfig();
  const testing::SampleSet set = testing::MakeSamples(c, 3, 11);
  NetworkOptions options{.net = c};
  options.runtime.device = DeviceChoice::kCpu;
  options.runtime.seed = 5;
  auto fp32 = Network::Create(options);
  options.runtime.cpu_bf16 = true;
  auto bf16 = Network::Create(options);  // same seed: same weights
  ASSERT_TRUE(fp32.ok() && bf16.ok());
  EXPECT_FALSE((*fp32)->UsesBf16());
  EXPECT_TRUE((*bf16)->UsesBf16());
  const std::vector<std::int32_t> offsets = {0, 2, 3, 7};
  const std::vector<std::int32_t> actions = {0, 3, 6, 1, 2, 4, 5};
  const LegalMovesView legal{offsets, actions};
  std::vector<float> priors_a(actions.size()), priors_b(actions.size()), value_a(3), value_b(3);
  ASSERT_TRUE((*fp32)
                  ->Forward({.n = 3, .data = set.inputs.data()},
                            {.priors = priors_a.data(), .value = value_a.data()}, &legal)
                  .ok());
  const Status status =
      (*bf16)->Forward({.n = 3, .data = set.inputs.data()},
                       {.priors = priors_b.data(), .value = value_b.data()}, &legal);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_NE(priors_a, priors_b);  // the autocast took effect
  for (std::size_t k = 0; k < actions.size(); ++k) EXPECT_NEAR(priors_a[k], priors_b[k], 0.02);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(value_a[i], value_b[i], 0.02);
    float sum = 0.0f;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k) sum += priors_b[k];
    EXPECT_NEAR(sum, 1.0f, 1e-5) << "position " << i;
  }
}

// "auto" follows the CPU; "on" and "off" do what they say.
TEST(RuntimeOptionsTest, CpuBf16ChoiceResolves) {
  EXPECT_TRUE(ResolveCpuBf16("on"));
  EXPECT_FALSE(ResolveCpuBf16("off"));
  EXPECT_EQ(ResolveCpuBf16("auto"), CpuHasNativeBf16());
}

TEST(NetworkFacadeTest, RejectsMalformedRequests) {
  NetworkOptions options{.net = testing::TinyConfig()};
  options.runtime.device = DeviceChoice::kCpu;
  auto network = Network::Create(options);
  ASSERT_TRUE(network.ok());
  std::vector<float> input(options.net.InputFloatsPerPosition()), priors(1);
  EXPECT_EQ((*network)->Forward({.n = 0, .data = input.data()}, {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ((*network)->Forward({.n = 1}, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*network)->Forward({.n = 1, .data = input.data()}, {.priors = priors.data()}).code(),
            StatusCode::kInvalidArgument);
  const std::vector<std::int32_t> offsets = {0, 1};
  const std::vector<std::int32_t> actions = {99};
  const LegalMovesView legal{offsets, actions};
  const Status status =
      (*network)->Forward({.n = 1, .data = input.data()}, {.priors = priors.data()}, &legal);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("action 99"));
}

TEST(NetworkFacadeTest, FromFileRebuildsTheSavedNetwork) {
  testing::ScratchDir dir;
  const NetConfig c = testing::TinyConfig();
  const testing::SampleSet set = testing::MakeSamples(c, 2, 4);
  NetworkOptions options{.net = c};
  options.runtime.device = DeviceChoice::kCpu;
  options.runtime.seed = 9;
  auto original = Network::Create(options);
  ASSERT_TRUE(original.ok());
  ASSERT_TRUE((*original)->SaveWeights(dir.File("w"), 17).ok());
  auto loaded = Network::FromFile(dir.File("w"), options.runtime);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->config(), c);
  EXPECT_EQ((*loaded)->model_version(), 17u);
  std::vector<float> a(2 * c.policy_size), b(2 * c.policy_size);
  ASSERT_TRUE(
      (*original)->Forward({.n = 2, .data = set.inputs.data()}, {.policy_logits = a.data()}).ok());
  ASSERT_TRUE(
      (*loaded)->Forward({.n = 2, .data = set.inputs.data()}, {.policy_logits = b.data()}).ok());
  EXPECT_EQ(a, b);
}

// End to end through the facade: real weights from one network, refused by another of other shapes
// before anything is loaded, accepted by one of the same shapes.
TEST(NetworkWeightsTest, NetworkRefusesWeightsForOtherShapes) {
  testing::ScratchDir dir;
  const std::string path = dir.File("tiny.weights");
  NetworkOptions options{.net = testing::TinyConfig()};
  options.runtime.device = DeviceChoice::kCpu;
  auto tiny = Network::Create(options);
  ASSERT_TRUE(tiny.ok()) << tiny.status().ToString();
  ASSERT_TRUE((*tiny)->SaveWeights(path, 3).ok());

  NetworkOptions wider = options;
  wider.net.filters = 16;
  auto other = Network::Create(wider);
  ASSERT_TRUE(other.ok());
  const Status status = (*other)->LoadWeights(path);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("holds a network of 1x8"));
  EXPECT_THAT(status.message(), HasSubstr("this network is 1x16"));

  auto same = Network::Create(options);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE((*same)->LoadWeights(path).ok());
  EXPECT_EQ((*same)->model_version(), 3u);
}

TEST(NetworkWeightsTest, NetworkRefusesDamagedWeightsAndKeepsItsOwn) {
  testing::ScratchDir dir;
  const std::string path = dir.File("tiny.weights");
  NetworkOptions options{.net = testing::TinyConfig()};
  options.runtime.device = DeviceChoice::kCpu;
  auto network = Network::Create(options);
  ASSERT_TRUE(network.ok());
  ASSERT_TRUE((*network)->SaveWeights(path, 1).ok());
  std::string data = Slurp(path);
  data[data.size() / 2] ^= 0x40;
  Overwrite(path, data);
  const Status status = (*network)->LoadWeights(path);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("payload checksum"));
  EXPECT_EQ((*network)->model_version(), 0u);
}

// With all-zero loss gradients, one step of `kind` moves only the decayed parameters (toward 0).
void ExpectOnlyDecayedWeightsMove(const NetConfig& c, OptimizerKind kind, AzNet& net) {
  const ParameterGroups groups = SplitForWeightDecay(*net);
  TrainerOptions options;
  options.net = c;
  options.optimizer = kind;
  options.learning_rate = 0.01;
  const auto optimizer = MakeOptimizer(options, *net);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  EXPECT_EQ(GroupWeightDecay(optimizer->param_groups()[0]), 1e-4);
  EXPECT_EQ(GroupWeightDecay(optimizer->param_groups()[1]), 0.0);
  EXPECT_EQ(optimizer->param_groups()[0].params().size(), 8u);

  std::vector<torch::Tensor> before;
  for (const torch::Tensor& p : net->parameters()) {
    before.push_back(p.detach().clone());
    p.mutable_grad() = torch::zeros_like(p);
  }
  optimizer->step();
  const auto params = net->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const bool decayed = std::any_of(groups.decay.begin(), groups.decay.end(),
                                     [&](const torch::Tensor& t) { return t.is_same(params[i]); });
    if (decayed) {
      EXPECT_LT(params[i].detach().abs().sum().item<double>(),
                before[i].abs().sum().item<double>());
    } else {
      EXPECT_TRUE(torch::equal(params[i].detach(), before[i])) << "parameter " << i;
    }
  }
}

TEST(WeightDecayGroupsTest, OnlyConvAndLinearWeightsAreDecayed) {
  const NetConfig c = testing::TinyConfig();
  AzNet net(c);
  const ParameterGroups groups = SplitForWeightDecay(*net);
  // Tiny net: input conv + 2 tower convs + 2 head convs = 5 conv weights; 3 linear weights.
  EXPECT_EQ(groups.decay.size(), 8u);
  for (const torch::Tensor& t : groups.decay) EXPECT_GE(t.dim(), 2);
  // 5 BatchNorms x (gamma, beta) + 3 linear biases.
  EXPECT_EQ(groups.no_decay.size(), 13u);
  for (const torch::Tensor& t : groups.no_decay) EXPECT_EQ(t.dim(), 1);
  EXPECT_EQ(groups.decay.size() + groups.no_decay.size(), net->parameters().size());

  // Adam and SGD alike.
  for (const OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kSgd}) {
    SCOPED_TRACE(std::string(OptimizerKindName(kind)));
    AzNet fresh(c);
    ExpectOnlyDecayedWeightsMove(c, kind, fresh);
  }
}

// A checkpoint whose training time is negative (a corrupt or hand-made file) is refused by name,
// and the trainer keeps its own state; a good one restores the count.
TEST(CheckpointStateTest, ANegativeTrainingTimeIsRefused) {
  testing::ScratchDir dir;
  TrainerOptions options;
  options.net = testing::TinyConfig();
  AzNet net(options.net);
  const auto optimizer = MakeOptimizer(options, *net);
  CheckpointState state;
  state.step = 5;
  state.train_seconds = -3.0;
  ASSERT_TRUE(SaveCheckpoint(dir.File("bad"), *net, *optimizer, state).ok());
  auto trainer = Trainer::Create(options);
  ASSERT_TRUE(trainer.ok());
  const Status status = (*trainer)->LoadCheckpoint(dir.File("bad")).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("train_seconds"));
  EXPECT_EQ((*trainer)->counters().steps, 0u);
  EXPECT_EQ((*trainer)->counters().train_seconds, 0.0);
  state.train_seconds = 90.5;
  ASSERT_TRUE(SaveCheckpoint(dir.File("good"), *net, *optimizer, state).ok());
  ASSERT_TRUE((*trainer)->LoadCheckpoint(dir.File("good")).ok());
  EXPECT_EQ((*trainer)->counters().steps, 5u);
  EXPECT_EQ((*trainer)->counters().train_seconds, 90.5);
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// The sanitizers bring their own malloc, which glibc's settings do not reach.
TEST(TensorMemoryTest, FreedActivationBuffersStayInTheProcess) {
  // Creating a network sets malloc up for tensors (SetUpTensorProcess): a 4 MiB block, the size
  // of one batch's activations, comes from the heap instead of its own mmap, and freeing it does
  // not hand the heap's top back to the kernel (the next batch would page-fault it in again).
  NetworkOptions options{.net = testing::TinyConfig()};
  options.runtime.device = DeviceChoice::kCpu;
  ASSERT_TRUE(Network::Create(options).ok());
  const struct mallinfo2 before = mallinfo2();
  void* block = std::malloc(std::size_t{4} << 20);
  ASSERT_NE(block, nullptr);
  static_cast<volatile char*>(block)[0] = 1;
  const struct mallinfo2 held = mallinfo2();
  EXPECT_EQ(held.hblks, before.hblks) << "the block was mapped on its own";
  std::free(block);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_EQ(after.arena, held.arena) << "freeing the block trimmed the heap";
}
#endif

}  // namespace
}  // namespace az::nn
