// The data-parallel trainer (core/nn/distributed.h, TrainerOptions::group): ranks are threads of
// this process, each with its own ProcessGroupGloo on 127.0.0.1 and a free port. What each test
// protects is said above it.

#include "core/nn/distributed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "core/nn/torch_model.h"
#include "core/nn/torch_weights.h"
#include "core/nn/trainer.h"
#include "tests/ipc/test_util.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

int FreePort() {
  const int port = ipc::testing::FreeTcpPort();
  AZ_CHECK(port > 0, "no free port");
  return port;
}

ProcessGroupOptions GroupOptions(int world, int rank, int port) {
  ProcessGroupOptions o;
  o.world_size = world;
  o.rank = rank;
  o.host = "127.0.0.1";
  o.port = port;
  o.timeout = std::chrono::milliseconds(2000);
  o.rendezvous_timeout = std::chrono::milliseconds(10000);
  return o;
}

// Runs fn(rank) on `world` threads at once and waits for all.
void RunRanks(int world, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back(fn, r);
  for (std::thread& t : threads) t.join();
}

// Creates the group of `world` ranks on threads; groups[r] is rank r's.
std::vector<std::unique_ptr<ProcessGroup>> MakeGroups(int world) {
  const int port = FreePort();
  std::vector<std::unique_ptr<ProcessGroup>> groups(world);
  RunRanks(world, [&](int r) {
    Result<std::unique_ptr<ProcessGroup>> g = ProcessGroup::Create(GroupOptions(world, r, port));
    AZ_CHECK(g.ok(), g.status().ToString());
    groups[r] = std::move(g).value();
  });
  return groups;
}

TrainerOptions TinyOptions(std::uint64_t seed, ProcessGroup* group) {
  TrainerOptions o;
  o.net = testing::TinyConfig();
  o.runtime.device = DeviceChoice::kCpu;
  o.runtime.seed = seed;
  o.learning_rate = 1e-2;
  o.ema_decay = 0.9;  // the moving average must follow the group too
  o.group = group;
  return o;
}

std::unique_ptr<Trainer> MakeTrainer(const TrainerOptions& o) {
  auto trainer = Trainer::Create(o);
  AZ_CHECK(trainer.ok(), trainer.status().ToString());
  return std::move(trainer).value();
}

// A sample set whose positions are `inputs_from`'s and whose targets and importance weights are
// its own (seeded differently): two halves whose BatchNorm batch statistics are exactly those of
// their concatenation, while their losses and gradients differ.
testing::SampleSet SameInputsOtherTargets(const testing::SampleSet& inputs_from,
                                          std::uint32_t seed) {
  testing::SampleSet set = testing::MakeSamples(inputs_from.net, inputs_from.size(), seed, 3);
  set.inputs = inputs_from.inputs;
  for (int i = 0; i < set.size(); ++i) {
    set.samples[i].policy = set.policies[i];
    set.samples[i].importance_weight = 0.25f + 0.1f * static_cast<float>(i % 7);
  }
  return set;
}

testing::SampleSet Concatenate(const testing::SampleSet& a, const testing::SampleSet& b) {
  testing::SampleSet set;
  set.net = a.net;
  set.inputs = a.inputs;
  set.inputs.insert(set.inputs.end(), b.inputs.begin(), b.inputs.end());
  set.policies = a.policies;
  set.policies.insert(set.policies.end(), b.policies.begin(), b.policies.end());
  set.samples = a.samples;
  set.samples.insert(set.samples.end(), b.samples.begin(), b.samples.end());
  for (int i = 0; i < set.size(); ++i) set.samples[i].policy = set.policies[i];
  return set;
}

// The tensors a weights file holds, by kind.
struct Weights {
  std::vector<torch::Tensor> parameters;
  std::vector<torch::Tensor> buffers;
};

Weights ReadWeights(const std::string& path) {
  AzNet model(testing::TinyConfig());
  const Result<WeightsFileInfo> info = LoadModelWeights(path, *model);
  AZ_CHECK(info.ok(), info.status().ToString());
  Weights w;
  for (const torch::Tensor& p : model->parameters()) w.parameters.push_back(p.detach().clone());
  for (const torch::Tensor& b : model->buffers()) w.buffers.push_back(b.detach().clone());
  return w;
}

double MaxDifference(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  AZ_CHECK(a.size() == b.size(), "different models");
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(
        worst, (a[i].to(torch::kDouble) - b[i].to(torch::kDouble)).abs().max().item<double>());
  }
  return worst;
}

// The largest difference between two weights files' (or checkpoints' model) tensors, parameters
// and buffers alike. Checkpoint bytes cannot be compared: LibTorch's optimizer archive names the
// parameters by their addresses.
double FileDifference(const std::string& a, const std::string& b) {
  const Weights wa = ReadWeights(a);
  const Weights wb = ReadWeights(b);
  return std::max(MaxDifference(wa.parameters, wb.parameters),
                  MaxDifference(wa.buffers, wb.buffers));
}

// Saves the trainer's raw (not averaged) weights: a checkpoint holds them, and LoadModelWeights
// reads a checkpoint's model.
std::string SaveRaw(const Trainer& trainer, const testing::ScratchDir& dir,
                    const std::string& name) {
  const std::string path = dir.File(name);
  AZ_CHECK(trainer.SaveCheckpoint(path, 0).ok(), "checkpoint");
  return path;
}

TEST(ParseRendezvousTest, AcceptsTcpHostPortAndRejectsTheRestWithAReason) {
  Result<RendezvousAddress> a = ParseRendezvous("tcp://10.0.0.5:29500");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "10.0.0.5");
  EXPECT_EQ(a->port, 29500);
  Result<RendezvousAddress> b = ParseRendezvous("tcp://[::1]:7");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_THAT(ParseRendezvous("10.0.0.5:29500").status().message(), HasSubstr("tcp://HOST:PORT"));
  EXPECT_THAT(ParseRendezvous("tcp://host").status().message(), HasSubstr("no port"));
  EXPECT_THAT(ParseRendezvous("tcp://host:0").status().message(), HasSubstr("[1, 65535]"));
  EXPECT_THAT(ParseRendezvous("tcp://host:70000").status().message(), HasSubstr("[1, 65535]"));
  EXPECT_THAT(ParseRendezvous("tcp://:29500").status().message(), HasSubstr("no host"));
  EXPECT_THAT(ParseRendezvous("tcp://::1:29500").status().message(), HasSubstr("brackets"));
}

TEST(ProcessGroupOptionsTest, RankMustLieBelowTheWorldSize) {
  ProcessGroupOptions o = GroupOptions(2, 2, 29500);
  EXPECT_THAT(o.Validate().message(), HasSubstr("rank 2 must lie in [0, 1]"));
  o = GroupOptions(1, 0, 29500);
  EXPECT_THAT(o.Validate().message(), HasSubstr("world size 1"));
  EXPECT_TRUE(GroupOptions(2, 1, 29500).Validate().ok());
}

// The heart of data parallelism: two ranks, each stepping on its own half (A, B) of a batch, end
// with identical weights, equal to one trainer's after the same steps on A+B. A and B share their
// positions (so BatchNorm's batch statistics in each half are those of A+B exactly) but not their
// targets or importance weights (so the halves' gradients differ and only their average gives the
// reference). Protects: the gradient all-reduce and its division by the world size, the loss
// reported as the group's mean, the optimizer and moving average staying in lockstep. BatchNorm's
// running variance is the one quantity that legitimately differs: each rank's unbiased batch
// variance divides by n - 1, the concatenation's by 2n - 1; it is checked loosely.
TEST(DistributedTrainerTest, TwoRanksOnHalvesMatchOneTrainerOnTheWholeBatch) {
  const testing::SampleSet a = testing::MakeSamples(testing::TinyConfig(), 8, 11, 3);
  const testing::SampleSet a_weighted = SameInputsOtherTargets(a, 12);
  const testing::SampleSet b = SameInputsOtherTargets(a, 13);
  const testing::SampleSet whole = Concatenate(a_weighted, b);
  const testing::SampleSet* halves[2] = {&a_weighted, &b};

  std::vector<std::unique_ptr<ProcessGroup>> groups = MakeGroups(2);
  std::vector<std::unique_ptr<Trainer>> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back(MakeTrainer(TinyOptions(100 + r, groups[r].get())));
  auto reference = MakeTrainer(TinyOptions(100, nullptr));
  auto half_alone = MakeTrainer(TinyOptions(100, nullptr));

  constexpr int kSteps = 2;
  double group_loss[2][kSteps] = {};
  double group_accuracy[2][kSteps] = {};
  RunRanks(2, [&](int r) {
    const Result<WeightsFileInfo> synced = ranks[r]->SyncFromRoot(0);
    AZ_CHECK(synced.ok(), synced.status().ToString());
    for (int step = 0; step < kSteps; ++step) {
      const Result<TrainStepResult> result =
          ranks[r]->TrainStep(halves[r]->samples, halves[r]->Encoder());
      AZ_CHECK(result.ok(), result.status().ToString());
      AZ_CHECK(result->stats.skipped == SkipReason::kNone, "skipped");
      group_loss[r][step] = result->stats.loss;
      group_accuracy[r][step] = result->stats.policy_accuracy;
    }
  });
  for (int step = 0; step < kSteps; ++step) {
    const Result<TrainStepResult> whole_step = reference->TrainStep(whole.samples, whole.Encoder());
    ASSERT_TRUE(whole_step.ok());
    EXPECT_NEAR(group_loss[0][step], whole_step->stats.loss, 1e-5) << "step " << step;
    EXPECT_EQ(group_loss[0][step], group_loss[1][step]);
    // The policy accuracy is the group's too: the whole batch's share, on every rank.
    EXPECT_NEAR(group_accuracy[0][step], whole_step->stats.policy_accuracy, 1e-9) << step;
    EXPECT_EQ(group_accuracy[0][step], group_accuracy[1][step]);
    ASSERT_TRUE(half_alone->TrainStep(a_weighted.samples, a_weighted.Encoder()).ok());
  }

  testing::ScratchDir dir;
  // The ranks agree bit for bit: raw weights with BatchNorm statistics, and the published moving
  // average (the optimizer's state shows in the second step's agreement).
  const std::string c0 = SaveRaw(*ranks[0], dir, "rank0.azc");
  const std::string c1 = SaveRaw(*ranks[1], dir, "rank1.azc");
  EXPECT_EQ(FileDifference(c0, c1), 0.0);
  ASSERT_TRUE(ranks[0]->SaveWeights(dir.File("rank0.azw"), 1).ok());
  ASSERT_TRUE(ranks[1]->SaveWeights(dir.File("rank1.azw"), 1).ok());
  EXPECT_EQ(FileDifference(dir.File("rank0.azw"), dir.File("rank1.azw")), 0.0);
  EXPECT_EQ(ranks[1]->counters().steps, static_cast<std::uint64_t>(kSteps));

  const Weights group = ReadWeights(c0);
  const Weights single = ReadWeights(SaveRaw(*reference, dir, "reference.azc"));
  const Weights alone = ReadWeights(SaveRaw(*half_alone, dir, "alone.azc"));
  // Float summation order; one Adam step moves a weight by about lr = 1e-2, and Adam's division by
  // the gradient's size lets weights with tiny gradients carry a little more of that noise.
  constexpr double kTolerance = 5e-6;
  EXPECT_LT(MaxDifference(group.parameters, single.parameters), kTolerance);
  // The check has teeth: training on one half alone lands far from the reference.
  EXPECT_GT(MaxDifference(alone.parameters, single.parameters), 400 * kTolerance);
  // Buffers: running means (even indices) exactly the reference's up to rounding; running
  // variances close; the batch counters equal.
  for (std::size_t i = 0; i < group.buffers.size(); ++i) {
    const double d = MaxDifference({group.buffers[i]}, {single.buffers[i]});
    const std::string name = "buffer " + std::to_string(i);
    if (!group.buffers[i].is_floating_point()) {
      EXPECT_EQ(d, 0) << name;
    } else if (i % 3 == 0) {
      EXPECT_LT(d, kTolerance) << name << " (running mean)";
    } else {
      EXPECT_LT(d, 0.05) << name << " (running variance)";
    }
  }
}

// The starting point: a rank initialised from another seed takes rank 0's whole state, so that
// every rank starts identical (weights, BatchNorm statistics, moving average, optimizer, step).
TEST(DistributedTrainerTest, SyncFromRootGivesEveryRankRankZerosState) {
  std::vector<std::unique_ptr<ProcessGroup>> groups = MakeGroups(2);
  std::vector<std::unique_ptr<Trainer>> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.push_back(MakeTrainer(TinyOptions(7 + 31 * r, groups[r].get())));
  // Rank 0 has trained alone a little (outside the group: a plain trainer loading the same state
  // would do; here it simply steps before the others join in).
  const testing::SampleSet set = testing::MakeSamples(testing::TinyConfig(), 8, 5);
  testing::ScratchDir dir;
  auto solo = MakeTrainer(TinyOptions(7, nullptr));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(solo->TrainStep(set.samples, set.Encoder()).ok());
  ASSERT_TRUE(solo->SaveCheckpoint(dir.File("solo.azc"), 4).ok());
  ASSERT_TRUE(ranks[0]->LoadCheckpoint(dir.File("solo.azc")).ok());
  EXPECT_GT(FileDifference(SaveRaw(*ranks[0], dir, "before0.azc"),
                           SaveRaw(*ranks[1], dir, "before1.azc")),
            1e-3);

  std::uint64_t versions[2] = {}, steps[2] = {};
  RunRanks(2, [&](int r) {
    const Result<WeightsFileInfo> info = ranks[r]->SyncFromRoot(4);
    AZ_CHECK(info.ok(), info.status().ToString());
    versions[r] = info->model_version;
    steps[r] = info->train_step;
  });
  EXPECT_EQ(versions[1], 4u);
  EXPECT_EQ(steps[1], 3u);
  EXPECT_EQ(ranks[1]->counters().steps, 3u);
  EXPECT_EQ(
      FileDifference(SaveRaw(*ranks[0], dir, "after0.azc"), SaveRaw(*ranks[1], dir, "after1.azc")),
      0.0);
  ASSERT_TRUE(ranks[0]->SaveWeights(dir.File("0.azw"), 4).ok());
  ASSERT_TRUE(ranks[1]->SaveWeights(dir.File("1.azw"), 4).ok());
  EXPECT_EQ(FileDifference(dir.File("0.azw"), dir.File("1.azw")), 0.0);
  // The optimizer came along too: one more step together keeps them equal (Adam's moments
  // differing would part them).
  RunRanks(2,
           [&](int r) { AZ_CHECK(ranks[r]->TrainStep(set.samples, set.Encoder()).ok(), "step"); });
  EXPECT_EQ(
      FileDifference(SaveRaw(*ranks[0], dir, "next0.azc"), SaveRaw(*ranks[1], dir, "next1.azc")),
      0.0);
}

// A skip is the group's decision: a NaN batch on rank 1 makes rank 0 skip too (neither updates),
// and a batch rank 1 refuses makes rank 0 skip with kPeerFailed instead of waiting for it.
TEST(DistributedTrainerTest, ABadBatchOnOneRankMakesEveryRankSkip) {
  std::vector<std::unique_ptr<ProcessGroup>> groups = MakeGroups(2);
  std::vector<std::unique_ptr<Trainer>> ranks;
  for (int r = 0; r < 2; ++r) ranks.push_back(MakeTrainer(TinyOptions(3, groups[r].get())));
  const testing::SampleSet good = testing::MakeSamples(testing::TinyConfig(), 8, 21);
  testing::SampleSet refused = testing::MakeSamples(testing::TinyConfig(), 8, 22);
  std::vector<PolicyEntry> bad_policy = {{9999, 1.0f}};  // action out of range
  refused.samples[3].policy = bad_policy;
  const EncodeFn nan_inputs = [&](int i, float* dst) {
    good.Encoder()(i, dst);
    if (i == 2) dst[0] = std::nanf("");
  };
  testing::ScratchDir dir;
  const std::string before = SaveRaw(*ranks[0], dir, "before.azc");

  SkipReason nan_skip[2] = {}, refused_skip = SkipReason::kNone;
  Status refused_status;
  RunRanks(2, [&](int r) {
    Result<TrainStepResult> s =
        ranks[r]->TrainStep(good.samples, r == 1 ? nan_inputs : good.Encoder());
    AZ_CHECK(s.ok(), s.status().ToString());
    nan_skip[r] = s->stats.skipped;
    if (r == 1) {
      refused_status = ranks[r]->TrainStep(refused.samples, refused.Encoder()).status();
    } else {
      Result<TrainStepResult> t = ranks[r]->TrainStep(good.samples, good.Encoder());
      AZ_CHECK(t.ok(), t.status().ToString());
      refused_skip = t->stats.skipped;
    }
  });
  EXPECT_EQ(nan_skip[0], SkipReason::kNonFiniteLoss);
  EXPECT_EQ(nan_skip[1], SkipReason::kNonFiniteLoss);
  EXPECT_EQ(refused_status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused_skip, SkipReason::kPeerFailed);
  EXPECT_EQ(ranks[0]->counters().steps, 0u);
  EXPECT_EQ(ranks[0]->counters().skipped_nonfinite_loss, 1u);
  EXPECT_EQ(ranks[1]->counters().skipped_nonfinite_loss, 1u);
  // Nothing moved, BatchNorm statistics included, on either rank.
  EXPECT_EQ(FileDifference(SaveRaw(*ranks[0], dir, "after0.azc"), before), 0.0);
  EXPECT_EQ(FileDifference(SaveRaw(*ranks[1], dir, "after1.azc"), before), 0.0);
}

// A rank that dies is noticed at once: its sockets close, the survivor's collective fails with
// UNAVAILABLE naming the group, and every later call fails at once instead of hanging.
TEST(DistributedFailureTest, ADeadRankFailsTheSurvivorsCollectiveQuickly) {
  std::vector<std::unique_ptr<ProcessGroup>> groups = MakeGroups(2);
  RunRanks(2, [&](int r) {
    std::vector<double> values = {1.0, 2.0};
    AZ_CHECK(groups[r]->AllReduceSum(values).ok(), "first");
  });
  groups[1].reset();  // rank 1 leaves (its process died)
  const Clock::time_point start = Clock::now();
  std::vector<double> v = {1.0};
  const Status s = groups[0]->AllReduceSum(v);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("another rank died"));
  EXPECT_LT(seconds, 3.0);  // at most the 2 s timeout
  EXPECT_FALSE(groups[0]->healthy());
  const Clock::time_point again = Clock::now();
  EXPECT_EQ(groups[0]->AllReduceSum(v).code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - again).count(), 0.1);
}

// A rank that hangs (alive, never calling) costs the survivor the group's timeout, no more.
TEST(DistributedFailureTest, AHungRankFailsTheSurvivorsCollectiveAfterTheTimeout) {
  std::vector<std::unique_ptr<ProcessGroup>> groups = MakeGroups(2);
  const Clock::time_point start = Clock::now();
  std::vector<double> v = {1.0};
  const Status s = groups[0]->AllReduceSum(v);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_GT(seconds, 1.5);
  EXPECT_LT(seconds, 5.0);
}

// A rank whose peers never come gives up after the rendezvous timeout with DEADLINE_EXCEEDED
// saying what it waited for; so does a rank whose rank 0 (the store) is not there.
TEST(DistributedFailureTest, ARendezvousWithoutThePeersRunsOutOfTime) {
  const int port = FreePort();
  ProcessGroupOptions o = GroupOptions(2, 0, port);
  o.rendezvous_timeout = std::chrono::milliseconds(1000);
  Clock::time_point start = Clock::now();
  Result<std::unique_ptr<ProcessGroup>> alone = ProcessGroup::Create(o);
  EXPECT_EQ(alone.status().code(), StatusCode::kDeadlineExceeded) << alone.status().ToString();
  EXPECT_THAT(alone.status().message(), HasSubstr("waiting for all 2 ranks"));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 4.0);

  o.rank = 1;
  start = Clock::now();
  Result<std::unique_ptr<ProcessGroup>> no_store = ProcessGroup::Create(o);
  EXPECT_FALSE(no_store.ok());
  EXPECT_THAT(no_store.status().message(), HasSubstr("rank 0's store"));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 4.0);
}

// Misconfigured ranks are refused with a reason: a second process with a rank already taken, and a
// rank that disagrees with rank 0 about the world size.
TEST(DistributedFailureTest, ADuplicateRankOrAnotherWorldSizeIsRefused) {
  std::vector<std::unique_ptr<ProcessGroup>> groups = MakeGroups(2);
  ProcessGroupOptions duplicate = groups[1]->options();
  duplicate.rendezvous_timeout = std::chrono::milliseconds(3000);
  const Status twice = ProcessGroup::Create(duplicate).status();
  EXPECT_EQ(twice.code(), StatusCode::kAlreadyExists) << twice.ToString();
  EXPECT_THAT(twice.message(), HasSubstr("as rank 1"));

  std::vector<Status> status(2);
  const int port2 = FreePort();
  RunRanks(2, [&](int r) {
    ProcessGroupOptions o = GroupOptions(r == 0 ? 2 : 3, r, port2);
    o.rendezvous_timeout = std::chrono::milliseconds(r == 0 ? 2500 : 2000);
    // Rank 0's store first, so that rank 1 finds it on its first try.
    if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    status[r] = ProcessGroup::Create(o).status();
  });
  ASSERT_EQ(status[1].code(), StatusCode::kInvalidArgument) << status[1].ToString();
  EXPECT_THAT(status[1].message(), HasSubstr("world size 3, rank 0 with 2"));
  EXPECT_EQ(status[0].code(), StatusCode::kDeadlineExceeded) << status[0].ToString();
}

// A group that failed is rebuilt by a new rendezvous: after rank 0's store is gone (its process
// restarted), the restarted ranks meet on the same port under a new generation and work.
TEST(DistributedFailureTest, ARestartedGroupMeetsAgainUnderANewGeneration) {
  const int port = FreePort();
  std::string first_generation;
  {
    std::vector<std::unique_ptr<ProcessGroup>> groups(2);
    RunRanks(2, [&](int r) {
      auto g = ProcessGroup::Create(GroupOptions(2, r, port));
      AZ_CHECK(g.ok(), g.status().ToString());
      groups[r] = std::move(g).value();
    });
    first_generation = std::string(groups[0]->generation());
    EXPECT_EQ(groups[1]->generation(), first_generation);
  }
  std::vector<std::unique_ptr<ProcessGroup>> groups(2);
  RunRanks(2, [&](int r) {
    auto g = ProcessGroup::Create(GroupOptions(2, r, port));
    AZ_CHECK(g.ok(), g.status().ToString());
    groups[r] = std::move(g).value();
  });
  EXPECT_NE(groups[0]->generation(), first_generation);
  std::vector<double> sums[2] = {{1.0, 10.0}, {2.0, 20.0}};
  RunRanks(2, [&](int r) { AZ_CHECK(groups[r]->AllReduceSum(sums[r]).ok(), "sum"); });
  EXPECT_EQ(sums[0], (std::vector<double>{3.0, 30.0}));
  EXPECT_EQ(sums[1], (std::vector<double>{3.0, 30.0}));
}

}  // namespace
}  // namespace az::nn
