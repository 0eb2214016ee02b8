// The evaluator's cache of answers on its own: exact hits, misses for anything that differs, no
// false hit even when every record hashes alike, bounded size, O(1) clearing, and "off".

#include "services/evaluator/eval_cache.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "core/games/chess/chess.h"
#include "core/games/connect4/connect_four.h"
#include "core/games/tictactoe/tictactoe.h"
#include "tests/services/evaluator/random_leaves.h"

namespace az::evaluator {
namespace {

using games::Chess;
using games::ConnectFour;
using Record = ConnectFour::Record;

// Every record hashes to the same value: only the stored record tells them apart.
struct ConstantHash {
  template <typename R>
  std::uint64_t operator()(const R&) const {
    return 42;
  }
};

struct Answer {
  std::vector<float> priors;
  std::array<float, 3> wdl;
};

Answer MakeAnswer(std::size_t moves, float seed) {
  Answer a;
  for (std::size_t i = 0; i < moves; ++i) a.priors.push_back(seed + 0.001f * static_cast<float>(i));
  a.wdl = {seed, 0.5f * seed, 1 - 1.5f * seed};
  return a;
}

Record RecordOf(std::uint64_t own, std::uint64_t opponent) { return {own, opponent}; }

template <typename Cache>
void Put(Cache& cache, const Record& record, const std::vector<std::uint16_t>& indices,
         const Answer& answer) {
  cache.Insert(record, std::span<const std::uint16_t>(indices),
               std::span<const float>(answer.priors), std::span<const float, 3>(answer.wdl));
}

// The cached answer, or nullopt on a miss.
template <typename Cache>
std::optional<Answer> Get(Cache& cache, const Record& record,
                          const std::vector<std::uint16_t>& indices) {
  Answer a;
  a.priors.assign(indices.size(), -1.0f);
  if (!cache.Lookup(record, std::span<const std::uint16_t>(indices), a.priors.data(),
                    a.wdl.data())) {
    return std::nullopt;
  }
  return a;
}

bool SameBits(const Answer& a, const Answer& b) {
  return a.priors.size() == b.priors.size() &&
         std::memcmp(a.priors.data(), b.priors.data(), a.priors.size() * sizeof(float)) == 0 &&
         std::memcmp(a.wdl.data(), b.wdl.data(), sizeof a.wdl) == 0;
}

TEST(EvalCacheTest, EntrySizesAreWhatTheDocsSay) {
  EXPECT_EQ(sizeof(EvalCache<ConnectFour>::Entry), 88u);
  EXPECT_EQ(sizeof(EvalCache<games::TicTacToe>::Entry), 88u);
  EXPECT_EQ(sizeof(EvalCache<Chess>::Entry), 656u);
  EXPECT_EQ(kCacheMaxMoves<Chess>, 64);
  EXPECT_EQ(kCacheMaxMoves<ConnectFour>, 7);
}

TEST(EvalCacheTest, AHitGivesBackExactlyWhatWasStored) {
  EvalCache<ConnectFour> cache = std::move(EvalCache<ConnectFour>::Create(1024)).value();
  ASSERT_TRUE(cache.enabled());
  const Record record = RecordOf(1ull << 3, 1ull << 10);
  const std::vector<std::uint16_t> indices = {0, 1, 2, 3, 4, 5, 6};
  EXPECT_FALSE(Get(cache, record, indices).has_value());
  const Answer stored = MakeAnswer(indices.size(), 0.1f);
  Put(cache, record, indices, stored);
  const std::optional<Answer> got = Get(cache, record, indices);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(SameBits(*got, stored));
  const EvalCacheStats& stats = cache.stats();
  EXPECT_EQ(stats.lookups, 2u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.insertions, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.capacity, 1024u);
  EXPECT_EQ(stats.entry_bytes, 88u);
}

TEST(EvalCacheTest, AnotherLegalListOrAnotherRecordMisses) {
  EvalCache<ConnectFour> cache = std::move(EvalCache<ConnectFour>::Create(1024)).value();
  const Record record = RecordOf(1ull << 3, 1ull << 10);
  const std::vector<std::uint16_t> indices = {0, 1, 2, 3, 4, 5, 6};
  Put(cache, record, indices, MakeAnswer(7, 0.2f));
  EXPECT_FALSE(Get(cache, record, {6, 5, 4, 3, 2, 1, 0}).has_value()) << "reordered";
  EXPECT_FALSE(Get(cache, record, {0, 1, 2, 3, 4, 5}).has_value()) << "one move fewer";
  EXPECT_FALSE(Get(cache, record, {0, 1, 2, 3, 4, 6, 5}).has_value()) << "two swapped";
  EXPECT_FALSE(Get(cache, RecordOf(1ull << 3, 1ull << 17), indices).has_value()) << "record";
  EXPECT_FALSE(Get(cache, RecordOf(1ull << 10, 1ull << 3), indices).has_value()) << "sides";
  EXPECT_TRUE(Get(cache, record, indices).has_value());
  // Storing the same record with another list replaces the entry: the newest list is the one
  // that hits.
  const Answer six = MakeAnswer(6, 0.3f);
  Put(cache, record, {0, 1, 2, 3, 4, 5}, six);
  EXPECT_EQ(cache.stats().entries, 1u);
  const std::optional<Answer> got = Get(cache, record, {0, 1, 2, 3, 4, 5});
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(SameBits(*got, six));
  EXPECT_FALSE(Get(cache, record, indices).has_value());
}

TEST(EvalCacheTest, RecordsWithTheSameHashNeverGetEachOthersAnswers) {
  // Two entries, one set: every record collides.
  auto cache = std::move(EvalCache<ConnectFour, ConstantHash>::Create(2)).value();
  const std::vector<std::uint16_t> indices = {2, 3, 4};
  const Record a = RecordOf(1, 2), b = RecordOf(1, 4), c = RecordOf(4, 1);
  const Answer answer_a = MakeAnswer(3, 0.1f), answer_b = MakeAnswer(3, 0.2f),
               answer_c = MakeAnswer(3, 0.3f);
  Put(cache, a, indices, answer_a);
  EXPECT_FALSE(Get(cache, b, indices).has_value()) << "same hash, other record";
  Put(cache, b, indices, answer_b);
  ASSERT_TRUE(Get(cache, a, indices).has_value());
  EXPECT_TRUE(SameBits(*Get(cache, a, indices), answer_a));
  EXPECT_TRUE(SameBits(*Get(cache, b, indices), answer_b));
  // a was used last: c replaces b, the least recently used way.
  ASSERT_TRUE(Get(cache, a, indices).has_value());
  Put(cache, c, indices, answer_c);
  EXPECT_FALSE(Get(cache, b, indices).has_value());
  EXPECT_TRUE(SameBits(*Get(cache, a, indices), answer_a));
  EXPECT_TRUE(SameBits(*Get(cache, c, indices), answer_c));
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.stats().entries, 2u);
}

TEST(EvalCacheTest, StaysWithinItsCapacity) {
  EvalCache<ConnectFour> cache = std::move(EvalCache<ConnectFour>::Create(64)).value();
  const std::vector<std::uint16_t> indices = {0, 1, 2, 3, 4, 5, 6};
  const Answer answer = MakeAnswer(7, 0.1f);
  for (std::uint64_t i = 0; i < 10000; ++i) {
    Put(cache, RecordOf(i, i << 32), indices, answer);
    ASSERT_LE(cache.stats().entries, 64u);
  }
  EXPECT_EQ(cache.stats().entries, 64u);
  EXPECT_EQ(cache.stats().insertions, 10000u);
  EXPECT_EQ(cache.stats().evictions, 10000u - 64u);
  // The most recent ones are there (each set keeps its last two).
  EXPECT_TRUE(Get(cache, RecordOf(9999, 9999ull << 32), indices).has_value());
}

TEST(EvalCacheTest, ClearForgetsEveryEntry) {
  EvalCache<ConnectFour> cache = std::move(EvalCache<ConnectFour>::Create(256)).value();
  const std::vector<std::uint16_t> indices = {0, 6};
  for (std::uint64_t i = 0; i < 100; ++i) Put(cache, RecordOf(i, 0), indices, MakeAnswer(2, 0.1f));
  cache.Clear();
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().invalidations, 1u);
  for (std::uint64_t i = 0; i < 100; ++i) {
    EXPECT_FALSE(Get(cache, RecordOf(i, 0), indices).has_value()) << i;
  }
  // And it fills again, with the new answers only.
  const Answer fresh = MakeAnswer(2, 0.4f);
  Put(cache, RecordOf(7, 0), indices, fresh);
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_TRUE(SameBits(*Get(cache, RecordOf(7, 0), indices), fresh));
}

TEST(EvalCacheTest, SizeZeroIsOffAndCountsNothing) {
  EvalCache<ConnectFour> cache = std::move(EvalCache<ConnectFour>::Create(0)).value();
  EXPECT_FALSE(cache.enabled());
  const std::vector<std::uint16_t> indices = {0, 1};
  Put(cache, RecordOf(1, 2), indices, MakeAnswer(2, 0.1f));
  EXPECT_FALSE(Get(cache, RecordOf(1, 2), indices).has_value());
  EXPECT_EQ(cache.stats().lookups, 0u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().capacity, 0u);
}

TEST(EvalCacheTest, SizesThatAreNotZeroOrAPowerOfTwoInRangeAreRefused) {
  for (std::uint64_t bad :
       {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1000}, kMaxCacheSize * 2}) {
    const Result<EvalCache<ConnectFour>> cache = EvalCache<ConnectFour>::Create(bad);
    EXPECT_EQ(cache.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(EvalCache<ConnectFour>::Create(2).ok());
  EXPECT_TRUE(EvalCache<ConnectFour>::Create(kMaxCacheSize).ok());
}

TEST(EvalCacheTest, ChessPositionsHitOnTheirWholeRecordAndLongListsAreNotStored) {
  EvalCache<Chess> cache = std::move(EvalCache<Chess>::Create(1024)).value();
  const auto leaves = service::testing::RandomChessLeaves(40, /*seed=*/3);
  std::vector<float> priors(218), wdl(3);
  for (const auto& leaf : leaves) {
    std::vector<float> stored(leaf.indices.size(), 1.0f / static_cast<float>(leaf.indices.size()));
    const float v[3] = {0.25f, 0.5f, 0.25f};
    cache.Insert(leaf.record, std::span<const std::uint16_t>(leaf.indices),
                 std::span<const float>(stored), std::span<const float, 3>(v));
  }
  for (const auto& leaf : leaves) {
    EXPECT_TRUE(cache.Lookup(leaf.record, std::span<const std::uint16_t>(leaf.indices),
                             priors.data(), wdl.data()));
  }
  // The same placement with another halfmove clock is another record: the network's input differs.
  encoding::PositionRecord other = leaves[5].record;
  ++other.halfmove_clock;
  EXPECT_FALSE(cache.Lookup(other, std::span<const std::uint16_t>(leaves[5].indices), priors.data(),
                            wdl.data()));
  // More moves than an entry holds: never stored, always a miss.
  std::vector<std::uint16_t> many(65);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::uint16_t>(i);
  std::vector<float> many_priors(65, 1.0f / 65);
  const float v[3] = {0.2f, 0.6f, 0.2f};
  const std::uint64_t insertions = cache.stats().insertions;
  cache.Insert(leaves[0].record, std::span<const std::uint16_t>(many),
               std::span<const float>(many_priors), std::span<const float, 3>(v));
  EXPECT_EQ(cache.stats().insertions, insertions);
  EXPECT_FALSE(cache.Lookup(leaves[0].record, std::span<const std::uint16_t>(many), priors.data(),
                            wdl.data()));
}

}  // namespace
}  // namespace az::evaluator
