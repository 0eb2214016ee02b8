// The batcher in process with a real eval channel and a real (tiny) network: what its cache answers
// is the network's own answer for the same record and legal list, anything else goes through the
// network, new weights are never answered from the cache, and a cache of size 0 changes nothing.
// With random symmetry each answer is the network's for the position or for its mirror, mapped
// back to the request's moves, and the cache keeps it under the request's own record.

#include "services/evaluator/eval_batcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "core/games/connect4/connect_four.h"
#include "services/common/eval_protocol.h"
#include "shm/request_channel.h"
#include "tests/services/evaluator/random_leaves.h"
#include "tests/services/evaluator/service_test_util.h"

namespace az::evaluator {
namespace {

using games::ConnectFour;
using service::testing::RandomLeaf;
using service::testing::RunDir;
using service::testing::TinyNet;
using service::testing::WriteNetwork;
using std::chrono::milliseconds;
using Leaf = RandomLeaf<ConnectFour>;

struct Answer {
  service::EvalResponseHeader header;
  std::vector<float> priors;
};

struct Totals {
  int taken = 0;
  int lookups = 0;
  int hits = 0;
  int evaluated = 0;
  int invalid = 0;
};

// `n` positions of random games, no two alike.
std::vector<Leaf> DistinctLeaves(std::size_t n, std::uint32_t seed) {
  std::vector<Leaf> leaves;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (Leaf& leaf : service::testing::RandomConnectFourLeaves(static_cast<int>(4 * n), seed)) {
    if (!seen.insert({leaf.record.own, leaf.record.opponent}).second) continue;
    leaves.push_back(std::move(leaf));
    if (leaves.size() == n) break;
  }
  AZ_CHECK(leaves.size() == n);
  return leaves;
}

bool SameBits(const Answer& a, const Answer& b) {
  return a.priors.size() == b.priors.size() &&
         std::memcmp(a.priors.data(), b.priors.data(), a.priors.size() * sizeof(float)) == 0 &&
         std::memcmp(a.header.wdl.data(), b.header.wdl.data(), sizeof a.header.wdl) == 0 &&
         a.header.model_version == b.header.model_version;
}

bool AnyPriorDiffers(const std::vector<Answer>& a, const std::vector<Answer>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t m = 0; m < a[i].priors.size(); ++m) {
      if (std::fabs(a[i].priors[m] - b[i].priors[m]) > 1e-6f) return true;
    }
  }
  return false;
}

// A batcher over a channel of its own in the test's run directory, and one worker on it.
class Harness {
 public:
  Harness(const RunDir& run, const std::string& name, std::uint64_t cache_size,
          bool random_symmetry = false) {
    const shm::ChannelSpec spec = service::EvalChannelSpec<ConnectFour>(
        {.max_workers = 2, .request_capacity = 1024, .response_capacity = 1024});
    Result<shm::RequestServer> server = shm::RequestServer::Create(run.Scope(), name, spec);
    AZ_CHECK(server.ok(), server.status().ToString());
    BatchOptions options;
    options.first_wait = milliseconds(200);
    options.cache_size = cache_size;
    options.random_symmetry = random_symmetry;
    Result<std::unique_ptr<EvalBatcher>> batcher =
        CreateEvalBatcher(ConnectFour::kId, std::move(server).value(), options);
    AZ_CHECK(batcher.ok(), batcher.status().ToString());
    batcher_ = std::move(batcher).value();
    Result<shm::RequestClient> client =
        shm::RequestClient::Open(run.Scope(), name,
                                 {.worker_id = 0,
                                  .request_bytes = spec.request_bytes,
                                  .response_bytes = spec.response_bytes});
    AZ_CHECK(client.ok(), client.status().ToString());
    client_.emplace(std::move(client).value());
  }

  EvalBatcher& batcher() { return *batcher_; }

  // Submits every leaf, steps the batcher until all are answered; the answers in leaf order.
  std::vector<Answer> Evaluate(nn::Network& network, const std::vector<Leaf>& leaves,
                               Totals* totals = nullptr) {
    const std::uint64_t first = next_id_;
    for (const Leaf& leaf : leaves) {
      const mcts::Leaf<ConnectFour> l = leaf.Leaf();
      const Status status = client_->SubmitWith(
          next_id_++, milliseconds(1000),
          [&](std::span<std::byte> p) { service::WriteEvalRequest<ConnectFour>(l, 1, p); });
      EXPECT_TRUE(status.ok()) << status.ToString();
    }
    std::vector<Answer> answers(leaves.size());
    std::size_t received = 0;
    Totals sum;
    for (int step = 0; step < 100 && received < leaves.size(); ++step) {
      const BatchReport report = batcher_->Step(network);
      EXPECT_TRUE(report.forward_status.ok()) << report.forward_status.ToString();
      sum.taken += report.taken;
      sum.lookups += report.cache_lookups;
      sum.hits += report.cache_hits;
      sum.evaluated += report.evaluated;
      sum.invalid += report.invalid;
      received += client_->TryReceive(1024, [&](std::uint64_t id, std::span<const std::byte> p) {
        const std::size_t i = id - first;
        AZ_CHECK(i < leaves.size());
        const int moves = static_cast<int>(leaves[i].indices.size());
        (void)service::ReadEvalResponseHeader<ConnectFour>(p, moves, answers[i].header);
        answers[i].priors.resize(answers[i].header.num_moves);
        service::CopyPriors<ConnectFour>(p, answers[i].priors);
      });
    }
    EXPECT_EQ(received, leaves.size());
    EXPECT_EQ(sum.taken, static_cast<int>(leaves.size()));
    if (totals != nullptr) *totals = sum;
    return answers;
  }

 private:
  std::unique_ptr<EvalBatcher> batcher_;
  std::optional<shm::RequestClient> client_;
  std::uint64_t next_id_ = 0;
};

std::unique_ptr<nn::Network> TinyNetwork(std::uint64_t seed) {
  nn::NetworkOptions options;
  options.net = TinyNet(nn::NetConfig::ConnectFour());
  options.runtime.device = nn::DeviceChoice::kCpu;
  options.runtime.input_layout = GameInputLayout(ConnectFour::kId);
  options.runtime.seed = seed;
  return std::move(nn::Network::Create(options)).value();
}

void ExpectOk(const std::vector<Answer>& answers, std::uint64_t version) {
  for (const Answer& a : answers) {
    EXPECT_EQ(a.header.status, static_cast<std::uint8_t>(service::EvalStatus::kOk));
    EXPECT_EQ(a.header.model_version, version);
  }
}

TEST(EvalBatcherCacheTest, AHitAnswersWithExactlyWhatTheNetworkGaveForThatRecord) {
  RunDir run;
  Harness h(run, "eval-test", 1024);
  std::unique_ptr<nn::Network> network = TinyNetwork(1);
  const std::vector<Leaf> leaves = DistinctLeaves(24, 5);
  Totals first_totals, again_totals;
  const std::vector<Answer> first = h.Evaluate(*network, leaves, &first_totals);
  ExpectOk(first, 0);
  EXPECT_EQ(first_totals.lookups, 24);
  EXPECT_EQ(first_totals.hits, 0);
  EXPECT_EQ(first_totals.evaluated, 24);
  EXPECT_EQ(h.batcher().CacheStats().entries, 24u);

  const std::vector<Answer> again = h.Evaluate(*network, leaves, &again_totals);
  EXPECT_EQ(again_totals.lookups, 24);
  EXPECT_EQ(again_totals.hits, 24);
  EXPECT_EQ(again_totals.evaluated, 0) << "no position went through the network";
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_TRUE(SameBits(again[i], first[i])) << "leaf " << i;
  }
  const EvalCacheStats stats = h.batcher().CacheStats();
  EXPECT_EQ(stats.lookups, 48u);
  EXPECT_EQ(stats.hits, 24u);
  EXPECT_EQ(stats.capacity, 1024u);
}

TEST(EvalBatcherCacheTest, HitsAndMissesOfOneStepAreAllAnsweredRight) {
  RunDir run;
  Harness h(run, "eval-test", 1024);
  std::unique_ptr<nn::Network> network = TinyNetwork(1);
  const std::vector<Leaf> leaves = DistinctLeaves(32, 6);
  const std::vector<Leaf> known(leaves.begin(), leaves.begin() + 16);
  const std::vector<Answer> reference = h.Evaluate(*network, leaves);  // what the network says
  Harness fresh(run, "eval-test-2", 1024);
  (void)fresh.Evaluate(*network, known);
  Totals totals;
  const std::vector<Answer> mixed = fresh.Evaluate(*network, leaves, &totals);
  EXPECT_EQ(totals.hits, 16);
  EXPECT_EQ(totals.evaluated, 16);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    ASSERT_EQ(mixed[i].priors.size(), reference[i].priors.size());
    for (std::size_t m = 0; m < mixed[i].priors.size(); ++m) {
      EXPECT_NEAR(mixed[i].priors[m], reference[i].priors[m], 1e-5) << i;
    }
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(mixed[i].header.wdl[k], reference[i].header.wdl[k], 1e-5);
  }
}

TEST(EvalBatcherCacheTest, AnotherLegalListOrAnotherRecordMisses) {
  RunDir run;
  Harness h(run, "eval-test", 1024);
  std::unique_ptr<nn::Network> network = TinyNetwork(1);
  const std::vector<Leaf> leaves = DistinctLeaves(16, 7);
  const std::vector<Answer> first = h.Evaluate(*network, leaves);

  // The same records with their moves listed backwards: misses, and the priors follow the list.
  std::vector<Leaf> reversed = leaves;
  for (Leaf& leaf : reversed) {
    std::reverse(leaf.moves.begin(), leaf.moves.end());
    std::reverse(leaf.indices.begin(), leaf.indices.end());
  }
  Totals totals;
  const std::vector<Answer> backwards = h.Evaluate(*network, reversed, &totals);
  EXPECT_EQ(totals.hits,
            static_cast<int>(std::count_if(leaves.begin(), leaves.end(),
                                           [](const Leaf& l) { return l.indices.size() == 1; })))
      << "only a one-move list reads the same backwards";
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const std::size_t n = first[i].priors.size();
    ASSERT_EQ(backwards[i].priors.size(), n);
    for (std::size_t m = 0; m < n; ++m) {
      EXPECT_NEAR(backwards[i].priors[m], first[i].priors[n - 1 - m], 1e-6);
    }
  }

  // One move fewer (a list that is not the position's: the cache must still not serve it).
  std::vector<Leaf> shorter;
  for (const Leaf& leaf : leaves) {
    if (leaf.indices.size() < 2) continue;
    Leaf s = leaf;
    s.moves.pop_back();
    s.indices.pop_back();
    shorter.push_back(s);
  }
  const std::vector<Answer> fewer = h.Evaluate(*network, shorter, &totals);
  EXPECT_EQ(totals.hits, 0);
  EXPECT_EQ(totals.evaluated, static_cast<int>(shorter.size()));
  for (const Answer& a : fewer) {
    double sum = 0;
    for (float p : a.priors) sum += p;
    EXPECT_NEAR(sum, 1.0, 1e-5) << "a softmax over the shorter list";
  }

  // Other records: misses.
  const std::vector<Leaf> others = DistinctLeaves(40, 8);
  std::vector<Leaf> unseen;
  for (const Leaf& o : others) {
    const bool known = std::any_of(leaves.begin(), leaves.end(),
                                   [&](const Leaf& l) { return l.record == o.record; });
    if (!known) unseen.push_back(o);
  }
  (void)h.Evaluate(*network, unseen, &totals);
  EXPECT_EQ(totals.hits, 0);
  EXPECT_EQ(totals.evaluated, static_cast<int>(unseen.size()));
}

TEST(EvalBatcherCacheTest, NewWeightsAreNeverAnsweredFromTheCache) {
  RunDir run;
  WriteNetwork(run.File("v7.azw"), TinyNet(nn::NetConfig::ConnectFour()), 7, 7);
  WriteNetwork(run.File("v7b.azw"), TinyNet(nn::NetConfig::ConnectFour()), 8, 7);
  Harness h(run, "eval-test", 1024);
  std::unique_ptr<nn::Network> network = TinyNetwork(1);
  const std::vector<Leaf> leaves = DistinctLeaves(16, 9);
  Totals totals;
  const std::vector<Answer> v0 = h.Evaluate(*network, leaves);

  // Another model version in the same network: the batcher sees it by itself.
  ASSERT_TRUE(network->LoadWeights(run.File("v7.azw")).ok());
  const std::vector<Answer> v7 = h.Evaluate(*network, leaves, &totals);
  EXPECT_EQ(totals.hits, 0);
  EXPECT_EQ(totals.evaluated, 16);
  ExpectOk(v7, 7);
  EXPECT_TRUE(AnyPriorDiffers(v0, v7));
  (void)h.Evaluate(*network, leaves, &totals);
  EXPECT_EQ(totals.hits, 16) << "the new model's answers are cached in turn";

  // Other weights under the same version number: the caller's InvalidateCache clears it.
  ASSERT_TRUE(network->LoadWeights(run.File("v7b.azw")).ok());
  h.batcher().InvalidateCache();
  const std::vector<Answer> v7b = h.Evaluate(*network, leaves, &totals);
  EXPECT_EQ(totals.hits, 0);
  ExpectOk(v7b, 7);
  EXPECT_TRUE(AnyPriorDiffers(v7, v7b));
  EXPECT_EQ(h.batcher().CacheStats().entries, 16u);

  // Another network object (a rebuilt one): cleared as well.
  std::unique_ptr<nn::Network> rebuilt = TinyNetwork(3);
  ASSERT_TRUE(rebuilt->LoadWeights(run.File("v7.azw")).ok());
  (void)h.Evaluate(*rebuilt, leaves, &totals);
  EXPECT_EQ(totals.hits, 0);
  EXPECT_GE(h.batcher().CacheStats().invalidations, 3u);
}

TEST(EvalBatcherCacheTest, SizeZeroSendsEveryRequestThroughTheNetworkAsBefore) {
  RunDir run;
  Harness off(run, "eval-off", 0);
  Harness on(run, "eval-on", 1024);
  std::unique_ptr<nn::Network> network = TinyNetwork(1);
  const std::vector<Leaf> leaves = DistinctLeaves(20, 10);
  const std::vector<Answer> cached = on.Evaluate(*network, leaves);
  for (int pass = 0; pass < 2; ++pass) {
    Totals totals;
    const std::vector<Answer> answers = off.Evaluate(*network, leaves, &totals);
    EXPECT_EQ(totals.lookups, 0);
    EXPECT_EQ(totals.hits, 0);
    EXPECT_EQ(totals.evaluated, 20);
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      EXPECT_TRUE(SameBits(answers[i], cached[i])) << "pass " << pass << ", leaf " << i;
    }
  }
  const EvalCacheStats stats = off.batcher().CacheStats();
  EXPECT_EQ(stats.capacity, 0u);
  EXPECT_EQ(stats.lookups, 0u);
  EXPECT_EQ(stats.entries, 0u);
}

TEST(EvalBatcherCacheTest, InvalidRequestsAreAnsweredInvalidAndNeverLookedUp) {
  RunDir run;
  Harness h(run, "eval-test", 1024);
  std::unique_ptr<nn::Network> network = TinyNetwork(1);
  std::vector<Leaf> leaves = DistinctLeaves(4, 11);
  (void)h.Evaluate(*network, leaves);
  leaves[2].record.own |= 1ull << 17;  // a floating stone
  Totals totals;
  const std::vector<Answer> answers = h.Evaluate(*network, leaves, &totals);
  EXPECT_EQ(totals.invalid, 1);
  EXPECT_EQ(totals.lookups, 3);
  EXPECT_EQ(totals.hits, 3);
  EXPECT_EQ(answers[2].header.status,
            static_cast<std::uint8_t>(service::EvalStatus::kInvalidRequest));
}

TEST(EvalBatcherCacheTest, CacheSizesOutOfRangeAreRefused) {
  RunDir run;
  const shm::ChannelSpec spec = service::EvalChannelSpec<ConnectFour>({});
  for (std::uint64_t bad : {std::uint64_t{3}, std::uint64_t{1}, kMaxCacheSize * 2}) {
    BatchOptions options;
    options.cache_size = bad;
    Result<shm::RequestServer> server =
        shm::RequestServer::Create(run.Scope(), "eval-" + std::to_string(bad), spec);
    ASSERT_TRUE(server.ok());
    EXPECT_EQ(
        CreateEvalBatcher(ConnectFour::kId, std::move(server).value(), options).status().code(),
        StatusCode::kInvalidArgument)
        << bad;
  }
}

}  // namespace
}  // namespace az::evaluator

namespace az::evaluator {
namespace {

// The leaf's position mirrored, its moves mirrored in the same order: the network's priors for it
// line up with the original leaf's moves.
Leaf Mirrored(const Leaf& leaf) {
  Leaf out;
  out.record = ConnectFour::TransformRecord(leaf.record, 1);
  for (std::size_t m = 0; m < leaf.moves.size(); ++m) {
    const int column = ConnectFour::TransformAction(leaf.indices[m], 1);
    out.moves.push_back(games::ConnectFourMove{static_cast<std::uint8_t>(column)});
    out.indices.push_back(static_cast<std::uint16_t>(column));
  }
  return out;
}

bool Near(const Answer& a, const Answer& b) {
  if (a.priors.size() != b.priors.size()) return false;
  for (std::size_t m = 0; m < a.priors.size(); ++m) {
    if (std::fabs(a.priors[m] - b.priors[m]) > 1e-5f) return false;
  }
  for (int k = 0; k < 3; ++k) {
    if (std::fabs(a.header.wdl[k] - b.header.wdl[k]) > 1e-5f) return false;
  }
  return true;
}

TEST(EvalBatcherSymmetryTest, EachAnswerIsTheNetworksForThePositionOrItsMirrorMappedBack) {
  RunDir run;
  Harness plain(run, "eval-plain", 0);
  Harness random(run, "eval-random", 0, /*random_symmetry=*/true);
  std::unique_ptr<nn::Network> network = TinyNetwork(3);
  const std::vector<Leaf> leaves = DistinctLeaves(24, 12);
  std::vector<Leaf> mirrored;
  for (const Leaf& leaf : leaves) mirrored.push_back(Mirrored(leaf));
  const std::vector<Answer> as_asked = plain.Evaluate(*network, leaves);
  const std::vector<Answer> as_mirrored = plain.Evaluate(*network, mirrored);
  ASSERT_TRUE(AnyPriorDiffers(as_asked, as_mirrored))
      << "an untrained network must tell a position from its mirror for this test to mean much";
  int identity = 0, mirror = 0;
  for (int pass = 0; pass < 4; ++pass) {
    const std::vector<Answer> answers = random.Evaluate(*network, leaves);
    ExpectOk(answers, 0);
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      const bool is_identity = Near(answers[i], as_asked[i]);
      const bool is_mirror = Near(answers[i], as_mirrored[i]);
      EXPECT_TRUE(is_identity || is_mirror) << "pass " << pass << ", leaf " << i;
      identity += is_identity && !is_mirror;
      mirror += is_mirror && !is_identity;
    }
  }
  // 96 draws: both orientations come up (a fixed seed; about half each).
  EXPECT_GT(identity, 20);
  EXPECT_GT(mirror, 20);
}

TEST(EvalBatcherSymmetryTest, TheCacheKeepsTheAnswerUnderTheRequestsOwnRecord) {
  RunDir run;
  Harness h(run, "eval-random", 1024, /*random_symmetry=*/true);
  std::unique_ptr<nn::Network> network = TinyNetwork(3);
  const std::vector<Leaf> leaves = DistinctLeaves(24, 13);
  const std::vector<Answer> first = h.Evaluate(*network, leaves);
  Totals totals;
  const std::vector<Answer> again = h.Evaluate(*network, leaves, &totals);
  EXPECT_EQ(totals.hits, 24) << "the same requests hit, whichever orientation answered them";
  EXPECT_EQ(totals.evaluated, 0);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    EXPECT_TRUE(SameBits(again[i], first[i])) << "leaf " << i;
  }
}

}  // namespace
}  // namespace az::evaluator
