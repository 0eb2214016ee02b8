#include "core/games/connect4/connect_four_sample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/games/connect4/connect_four.h"

namespace az::sample {
namespace {

using games::ConnectFourPosition;

ConnectFourPosition Position(std::string_view moves) {
  Result<ConnectFourPosition> p = ConnectFourPosition::FromMoves(moves);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : ConnectFourPosition();
}

ConnectFourSearchSummary Summary(std::array<float, 7> weights) {
  return {weights, {0.5f, 0.3f, 0.2f}, 0.25f};
}

// A finished sample of the position after "4453", whose side to move is the first player.
ConnectFourSample Finished() {
  Result<ConnectFourSample> s =
      MakeConnectFourSample(Position("4453"), Summary({1, 2, 3, 40, 4, 0, 0}), 77, 5);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  ConnectFourSample sample = s.ok() ? *s : ConnectFourSample{};
  SetConnectFourOutcome(sample, -1, 9);
  return sample;
}

TEST(ConnectFourSampleTest, LayoutIsPinned) {
  EXPECT_EQ(sizeof(ConnectFourSample), 80u);
  EXPECT_EQ(alignof(ConnectFourSample), 8u);
  EXPECT_EQ(offsetof(ConnectFourSample, magic), 0u);
  EXPECT_EQ(offsetof(ConnectFourSample, version), 4u);
  EXPECT_EQ(offsetof(ConnectFourSample, reserved0), 6u);
  EXPECT_EQ(offsetof(ConnectFourSample, game_id), 8u);
  EXPECT_EQ(offsetof(ConnectFourSample, model_version), 16u);
  EXPECT_EQ(offsetof(ConnectFourSample, ply), 20u);
  EXPECT_EQ(offsetof(ConnectFourSample, z), 24u);
  EXPECT_EQ(offsetof(ConnectFourSample, root_wdl), 28u);
  EXPECT_EQ(offsetof(ConnectFourSample, soft_value), 40u);
  EXPECT_EQ(offsetof(ConnectFourSample, flags), 44u);
  EXPECT_EQ(offsetof(ConnectFourSample, position), 48u);
  EXPECT_EQ(offsetof(ConnectFourSample, policy), 64u);
  EXPECT_EQ(offsetof(ConnectFourSample, reserved1), 78u);
  EXPECT_EQ(kConnectFourSampleVersion, 1);
  const ConnectFourSample sample;
  EXPECT_EQ(std::memcmp(&sample, "AZC4", 4), 0);
}

TEST(ConnectFourSampleTest, MakeSampleStoresVisitSharesPerColumnAndProvenance) {
  const ConnectFourPosition position = Position("4453");
  Result<ConnectFourSample> made =
      MakeConnectFourSample(position, Summary({10, 0, 0, 60, 30, 0, 0}), 77, 5);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const ConnectFourSample& s = *made;
  EXPECT_EQ(s.game_id, 77u);
  EXPECT_EQ(s.model_version, 5u);
  EXPECT_EQ(s.ply, 4u);
  EXPECT_EQ(s.position, position.ToRecord());
  EXPECT_EQ(s.root_wdl, (std::array<float, 3>{0.5f, 0.3f, 0.2f}));
  EXPECT_EQ(s.soft_value, 0.25f);
  EXPECT_EQ(s.flags, 0u);
  std::uint32_t sum = 0;
  for (std::uint16_t p : s.policy) sum += p;
  EXPECT_EQ(sum, 65535u);
  const std::array<float, 7> policy = ConnectFourPolicy(s);
  EXPECT_NEAR(policy[0], 0.1f, 1e-4);
  EXPECT_NEAR(policy[3], 0.6f, 1e-4);
  EXPECT_NEAR(policy[4], 0.3f, 1e-4);
  EXPECT_EQ(policy[1], 0.0f);
  // Without an outcome it is not a finished sample yet.
  EXPECT_FALSE(ValidateConnectFourSample(s).ok());
}

TEST(ConnectFourSampleTest, OutcomeAlternatesWithTheSideToMove) {
  // The first player connects four in column 1 with the game's 7th stone; the final position has
  // the second player, the loser, to move.
  const std::string moves = "1212121";
  std::vector<ConnectFourSample> samples;
  ConnectFourPosition position;
  for (char c : moves) {
    std::array<float, 7> weights = {};
    weights[c - '1'] = 1.0f;
    Result<ConnectFourSample> s = MakeConnectFourSample(position, Summary(weights), 1, 0);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    samples.push_back(*s);
    position.Play(c - '1');
  }
  ASSERT_TRUE(position.LastMoverWon());
  // The final position: the second player to move, and it has lost.
  SetConnectFourOutcome(samples, -1, static_cast<std::uint32_t>(position.moves_played()));
  for (const ConnectFourSample& s : samples) {
    // Even plies: the first player (the winner) to move.
    EXPECT_EQ(s.z, s.ply % 2 == 0 ? 1.0f : -1.0f) << "ply " << s.ply;
    EXPECT_TRUE(ValidateConnectFourSample(s).ok()) << ValidateConnectFourSample(s).ToString();
  }
  // A draw is +0 for both sides, byte for byte.
  ConnectFourSample draw = samples[1];
  SetConnectFourOutcome(draw, 0, 42);
  const float zero = 0.0f;
  EXPECT_EQ(std::memcmp(&draw.z, &zero, sizeof zero), 0);
}

TEST(ConnectFourSampleTest, AnOffPolicyProvenanceIsFlaggedAndTheSampleStaysValid) {
  // Through the game definition, as self-play builds samples.
  using Move = games::ConnectFour::Move;
  const games::MoveWeight<Move> moves[] = {{Move{3}, 2.0f}, {Move{4}, 1.0f}};
  const games::SearchSummary<Move> summary{moves, {0.5f, 0.3f, 0.2f}, 0.25f};
  Result<ConnectFourSample> made =
      games::ConnectFour::MakeSample(Position("4453"), summary, {77, 5, /*off_policy=*/true});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ConnectFourSample s = *made;
  EXPECT_EQ(s.flags, games::kDenseOffPolicy);
  SetConnectFourOutcome(s, 1, 9);
  EXPECT_TRUE(ValidateConnectFourSample(s).ok()) << ValidateConnectFourSample(s).ToString();
  EXPECT_TRUE(games::ConnectFour::SampleOffPolicy(s));
  EXPECT_FALSE(games::ConnectFour::SampleOffPolicy(Finished()));
}

TEST(ConnectFourSampleTest, MakeSampleRefusesBadSearchResults) {
  const ConnectFourPosition full_column = Position("111111");
  EXPECT_EQ(
      MakeConnectFourSample(full_column, Summary({1, 1, 0, 0, 0, 0, 0}), 1, 0).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_TRUE(MakeConnectFourSample(full_column, Summary({0, 1, 0, 0, 0, 0, 0}), 1, 0).ok());
  EXPECT_FALSE(MakeConnectFourSample({}, Summary({0, 0, 0, 0, 0, 0, 0}), 1, 0).ok());
  EXPECT_FALSE(MakeConnectFourSample({}, Summary({-1, 2, 0, 0, 0, 0, 0}), 1, 0).ok());
  EXPECT_FALSE(MakeConnectFourSample({}, Summary({std::nanf(""), 2, 0, 0, 0, 0, 0}), 1, 0).ok());
  ConnectFourSearchSummary bad_wdl = Summary({1, 0, 0, 0, 0, 0, 0});
  bad_wdl.root_wdl = {0.5f, 0.5f, 0.5f};
  EXPECT_FALSE(MakeConnectFourSample({}, bad_wdl, 1, 0).ok());
  ConnectFourSearchSummary bad_soft = Summary({1, 0, 0, 0, 0, 0, 0});
  bad_soft.soft_value = 1.5f;
  EXPECT_FALSE(MakeConnectFourSample({}, bad_soft, 1, 0).ok());
  // A won position has no move to learn from.
  EXPECT_EQ(MakeConnectFourSample(Position("1212121"), Summary({0, 0, 1, 0, 0, 0, 0}), 1, 0)
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
}

TEST(ConnectFourSampleTest, ValidationNamesEachBrokenField) {
  ASSERT_TRUE(ValidateConnectFourSample(Finished()).ok())
      << ValidateConnectFourSample(Finished()).ToString();
  struct Case {
    const char* name;
    void (*mutate)(ConnectFourSample&);
    const char* expected;
  };
  const Case cases[] = {
      {"magic", [](ConnectFourSample& s) { s.magic = 1; }, "magic"},
      {"version", [](ConnectFourSample& s) { s.version = 2; }, "version"},
      {"reserved", [](ConnectFourSample& s) { s.reserved1[0] = 3; }, "reserved"},
      {"floating stone", [](ConnectFourSample& s) { s.position.own |= 1ull << 40; }, "floating"},
      {"ply", [](ConnectFourSample& s) { s.ply = 5; }, "ply"},
      {"policy sum", [](ConnectFourSample& s) { s.policy[3] -= 5000; }, "sum"},
      {"full column",
       [](ConnectFourSample& s) {
         // Fill column 7 (three stones each, alternating) keeping the counts balanced.
         s.position.own |= 0x15ull << 42;
         s.position.opponent |= 0x2Aull << 42;
         s.ply += 6;
         s.policy[6] = 1;
         s.policy[3] -= 1;
       },
       "illegal"},
      {"z", [](ConnectFourSample& s) { s.z = 2.0f; }, "z"},
      {"wdl", [](ConnectFourSample& s) { s.root_wdl[0] = 0.9f; }, "WDL"},
      {"soft value",
       [](ConnectFourSample& s) { s.soft_value = std::numeric_limits<float>::infinity(); },
       "soft value"},
      {"flags", [](ConnectFourSample& s) { s.flags |= 4; }, "flags"},
      {"no outcome", [](ConnectFourSample& s) { s.flags = 0; }, "outcome"},
      {"decided",
       [](ConnectFourSample& s) {
         const ConnectFourPosition won = *ConnectFourPosition::FromMoves("1212121");
         s.position = won.ToRecord();
         s.ply = 7;
       },
       "decided"},
  };
  for (const Case& c : cases) {
    ConnectFourSample s = Finished();
    c.mutate(s);
    const Status status = ValidateConnectFourSample(s);
    EXPECT_FALSE(status.ok()) << c.name;
    EXPECT_NE(status.message().find(c.expected), std::string::npos)
        << c.name << ": " << status.ToString();
  }
}

}  // namespace
}  // namespace az::sample
