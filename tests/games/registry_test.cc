// The registry, and the GameDefinition contract checked on every registered game: a game that
// joins the registry is tested here without a line of its own.

#include "core/games/registry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace az::games {
namespace {

TEST(GameRegistryTest, FindsEveryGameByNameAndId) {
  std::set<std::string_view> names;
  for (const GameInfo& info : AllGames()) {
    names.insert(info.name);
    Result<const GameInfo*> by_name = FindGame(info.name);
    ASSERT_TRUE(by_name.ok());
    EXPECT_EQ(*by_name, &info);
    EXPECT_EQ(FindGameById(info.id), &info);
    EXPECT_GT(info.sample_bytes, 0u);
    EXPECT_EQ(info.sample_bytes % 8, 0u);
    EXPECT_GT(info.input.floats(), 0);
  }
  EXPECT_TRUE(names.contains("chess") && names.contains("connect4") && names.contains("tictactoe"));
  EXPECT_EQ(GameNames(), "chess|connect4|tictactoe");
  Result<const GameInfo*> unknown = FindGame("go");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("tictactoe"), std::string::npos);
  EXPECT_EQ(FindGameById(0), nullptr);
}

TEST(GameRegistryTest, VisitGameRunsTheTemplateOfThatGame) {
  for (const GameInfo& info : AllGames()) {
    const std::string_view name =
        VisitGame(info.id, []<GameDefinition G>() { return std::string_view(G::kName); });
    EXPECT_EQ(name, info.name);
  }
}

// Plays seeded random games of G and checks, at every position, what the services rely on.
template <GameDefinition G>
void CheckContract(int games, int max_plies) {
  SCOPED_TRACE(std::string(G::kName));
  const GameInfo& info = *FindGameById(G::kId);
  std::uint64_t seed = 12345;
  for (int g = 0; g < games; ++g) {
    typename G::State state = G::NewGame(max_plies);
    std::vector<typename G::Sample> samples;
    typename G::Move moves[G::kMaxMoves];
    int count = G::LegalMoves(state, moves);
    while (!IsTerminal(G::Outcome(state, count))) {
      // Text: every legal move reads back as itself.
      for (int i = 0; i < count; ++i) {
        Result<typename G::Move> parsed = G::ParseMove(state, G::MoveText(state, moves[i]));
        ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
        EXPECT_EQ(G::PackMove(*parsed), G::PackMove(moves[i]));
        const int index = G::PolicyIndex(state, moves[i]);
        EXPECT_TRUE(index >= 0 && index < G::kPolicySize);
      }
      // The encoder fills exactly its input.
      std::vector<float> input(G::kInput.floats() + 1, -7.0f);
      G::Encode(G::ToRecord(state), std::span<float>(input.data(), G::kInput.floats()));
      EXPECT_EQ(input.back(), -7.0f);
      // A sample of uniform visits builds.
      std::vector<MoveWeight<typename G::Move>> weights;
      for (int i = 0; i < count; ++i) weights.push_back({moves[i], 1.0f});
      const SearchSummary<typename G::Move> summary{weights, {0.2f, 0.5f, 0.3f}, -0.1f};
      Result<typename G::Sample> sample = G::MakeSample(state, summary, {7, 3});
      ASSERT_TRUE(sample.ok()) << sample.status().ToString();
      EXPECT_EQ(G::SampleModelVersion(*sample), 3u);
      samples.push_back(*sample);

      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      G::Apply(state, moves[(seed >> 33) % static_cast<std::uint64_t>(count)]);
      count = G::LegalMoves(state, moves);
    }
    const int final_value = static_cast<int>(OutcomeValue(G::Outcome(state, count)));
    G::SetOutcome(samples, state, final_value);
    for (const typename G::Sample& s : samples) {
      ASSERT_TRUE(G::ValidateSample(s).ok()) << G::ValidateSample(s).ToString();
      // Through the registry's byte form, as the replay daemon sees it.
      const auto bytes = std::as_bytes(std::span(&s, 1));
      EXPECT_TRUE(info.validate_sample(bytes).ok());
      EXPECT_EQ(info.sample_model_version(bytes), 3u);
      EXPECT_FALSE(info.validate_sample(bytes.first(bytes.size() - 8)).ok());
      // Every symmetry of a valid sample is a valid sample with the same targets' mass.
      for (int sym = 0; sym < G::kSymmetries; ++sym) {
        const typename G::Sample t = G::TransformSample(s, sym);
        EXPECT_TRUE(G::ValidateSample(t).ok()) << "symmetry " << sym;
        std::vector<PolicyTarget> a, b;
        G::AppendPolicy(s, a);
        G::AppendPolicy(t, b);
        EXPECT_EQ(a.size(), b.size());
        EXPECT_EQ(G::SampleZ(t), G::SampleZ(s));
      }
      // A flipped magic is data loss, not a crash.
      typename G::Sample bad = s;
      std::memset(static_cast<void*>(&bad), 0xFF, 4);
      EXPECT_EQ(G::ValidateSample(bad).code(), StatusCode::kDataLoss);
    }
  }
}

TEST(GameDefinitionContractTest, EveryRegisteredGameHonoursIt) {
  ForEachGame([]<GameDefinition G>() {
    // Chess games are long: a few, cut short by max_plies.
    CheckContract<G>(G::kId == Chess::kId ? 2 : 20, G::kId == Chess::kId ? 40 : 0);
  });
}

}  // namespace
}  // namespace az::games
