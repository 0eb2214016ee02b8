#include "core/sample/chess_sample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/chess/uci.h"
#include "core/encoding/move_index.h"
#include "core/encoding/position_record.h"
#include "core/sample/sample_builder.h"
#include "tests/encoding/test_games.h"

namespace az::sample {
namespace {

using chess::Game;
using chess::Move;

Move Uci(const Game& game, const std::string& uci) {
  Result<Move> m = chess::ParseUciMove(game.position(), uci);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : Move::Null();
}

// A finished sample of the start position: e2e4 60 visits, d2d4 30, g1f3 10.
ChessSample StartSample() {
  const Game game;
  const MoveWeight moves[] = {
      {Uci(game, "e2e4"), 60}, {Uci(game, "d2d4"), 30}, {Uci(game, "g1f3"), 10}};
  Result<ChessSample> s = MakeSample(game, {moves, {0.5f, 0.3f, 0.2f}, 0.25f}, {77, 5});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  ChessSample sample = s.ok() ? *s : ChessSample{};
  SetOutcome(sample, chess::GameResult::kWhiteWins);
  return sample;
}

TEST(ChessSampleTest, LayoutIsPinnedAndUnder2KB) {
  EXPECT_EQ(sizeof(ChessSample), 1160u);
  EXPECT_LE(sizeof(ChessSample), 2048u);
  EXPECT_EQ(offsetof(ChessSample, magic), 0u);
  EXPECT_EQ(offsetof(ChessSample, version), 4u);
  EXPECT_EQ(offsetof(ChessSample, num_moves), 6u);
  EXPECT_EQ(offsetof(ChessSample, game_id), 8u);
  EXPECT_EQ(offsetof(ChessSample, model_version), 16u);
  EXPECT_EQ(offsetof(ChessSample, ply), 20u);
  EXPECT_EQ(offsetof(ChessSample, z), 24u);
  EXPECT_EQ(offsetof(ChessSample, root_wdl), 28u);
  EXPECT_EQ(offsetof(ChessSample, soft_value), 40u);
  EXPECT_EQ(offsetof(ChessSample, flags), 44u);
  EXPECT_EQ(offsetof(ChessSample, position), 48u);
  EXPECT_EQ(offsetof(ChessSample, policy), 288u);
  EXPECT_EQ(kSampleVersion, 1);
  const ChessSample sample;
  EXPECT_EQ(std::memcmp(&sample, "AZCS", 4), 0);
}

TEST(ChessSampleTest, MakeSampleListsEveryLegalMoveWithItsVisitShare) {
  const Game game;
  const MoveWeight moves[] = {
      {Uci(game, "e2e4"), 60}, {Uci(game, "d2d4"), 30}, {Uci(game, "g1f3"), 10}};
  Result<ChessSample> made = MakeSample(game, {moves, {0.5f, 0.3f, 0.2f}, 0.25f}, {77, 5});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ChessSample s = *made;
  EXPECT_EQ(s.num_moves, 20);
  EXPECT_EQ(s.game_id, 77u);
  EXPECT_EQ(s.model_version, 5u);
  EXPECT_EQ(s.ply, 0u);
  EXPECT_EQ(s.root_wdl, (std::array<float, 3>{0.5f, 0.3f, 0.2f}));
  EXPECT_EQ(s.soft_value, 0.25f);
  const encoding::PositionRecord record = encoding::MakeRecord(game);
  EXPECT_EQ(std::memcmp(&s.position, &record, sizeof(record)), 0);
  std::uint32_t sum = 0;
  for (int i = 0; i < s.num_moves; ++i) {
    if (i > 0) {
      EXPECT_LT(s.policy[i - 1].index, s.policy[i].index);
    }
    sum += s.policy[i].probability;
  }
  EXPECT_EQ(sum, 65535u);
  // 0.6, 0.3 and 0.1 of 65535 are 39321, 19660.5 and 6553.5: the two halves go, by largest
  // remainder with ties to the lower index, to d2d4 (index 11*56 + 1 = 617) before g1f3 (3639).
  std::vector<float> dense(encoding::kPolicySize);
  ExpandPolicy(s, dense);
  EXPECT_EQ(dense[673], 39321 / 65535.0f);  // e2e4
  EXPECT_EQ(dense[617], 19661 / 65535.0f);  // d2d4
  EXPECT_EQ(dense[3639], 6553 / 65535.0f);  // g1f3
  int nonzero = 0;
  for (float p : dense) nonzero += p != 0.0f;
  EXPECT_EQ(nonzero, 3);
  EXPECT_TRUE(CheckPolicyIsLegal(s).ok());

  // Not a training sample until the outcome is known.
  EXPECT_NE(ValidateSample(s).message().find("never set"), std::string::npos);
  SetOutcome(s, chess::GameResult::kBlackWins);
  EXPECT_EQ(s.z, -1.0f);
  EXPECT_TRUE(ValidateSample(s).ok()) << ValidateSample(s).ToString();
}

TEST(ChessSampleTest, SamplesFromRandomGamesValidateAndCarryTheOutcomeForTheSideToMove) {
  std::mt19937 rng(9);
  std::vector<ChessSample> samples;
  std::vector<float> dense(encoding::kPolicySize);
  int checked = 0;
  const encoding::testing::RandomGamesOptions options{.seed = 31, .games = 40, .max_plies = 120};
  encoding::testing::ForEachRandomGamePosition(options, [&](const Game& game) {
    const chess::GameOutcome outcome = game.Outcome();
    if (outcome.is_terminal() || game.ply() >= options.max_plies) {
      const chess::GameResult result =
          outcome.is_terminal() ? outcome.result : chess::GameResult::kDraw;
      SetOutcome(samples, result);
      for (const ChessSample& s : samples) {
        // Across a byte boundary, as through the sample ring.
        unsigned char bytes[sizeof(ChessSample)];
        std::memcpy(bytes, &s, sizeof(bytes));
        ChessSample received;
        std::memcpy(&received, bytes, sizeof(received));
        ASSERT_TRUE(ValidateSample(received).ok()) << ValidateSample(received).ToString();
        ASSERT_TRUE(CheckPolicyIsLegal(received).ok()) << CheckPolicyIsLegal(received).ToString();
        const chess::Color mover = static_cast<chess::Color>(received.position.side_to_move);
        float expected_z = 0.0f;
        if (result == chess::GameResult::kWhiteWins) expected_z = mover == chess::kWhite ? 1 : -1;
        if (result == chess::GameResult::kBlackWins) expected_z = mover == chess::kBlack ? 1 : -1;
        ASSERT_EQ(received.z, expected_z);
        ExpandPolicy(received, dense);
        double sum = 0.0;
        for (float p : dense) sum += p;
        ASSERT_NEAR(sum, 1.0, 1e-5);
        ++checked;
      }
      samples.clear();
      return;
    }
    // A search result: random visit counts on a random subset of the legal moves.
    std::vector<MoveWeight> weights;
    for (const Move m : game.LegalMoves()) {
      if (rng() % 3 != 0) weights.push_back({m, static_cast<float>(rng() % 800)});
    }
    if (weights.empty()) weights.push_back({game.LegalMoves()[0], 0.0f});
    if (std::all_of(weights.begin(), weights.end(),
                    [](const MoveWeight& w) { return w.weight == 0; })) {
      weights[0].weight = 1.0f;
    }
    Result<ChessSample> s = MakeSample(game, {weights, {0.2f, 0.5f, 0.3f}, -0.1f},
                                       {static_cast<std::uint64_t>(checked), 3});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_EQ(s->ply, static_cast<std::uint32_t>(game.ply()));
    // Each quantized probability is within one unit of the exact share.
    double total = 0.0;
    for (const MoveWeight& w : weights) total += w.weight;
    for (const MoveWeight& w : weights) {
      const int index = encoding::MoveToIndex(game.position(), w.move);
      const PolicyEntry* e = std::find_if(s->policy, s->policy + s->num_moves,
                                          [&](PolicyEntry p) { return p.index == index; });
      ASSERT_NE(e, s->policy + s->num_moves);
      ASSERT_LT(std::fabs(e->probability - w.weight / total * 65535.0), 1.0);
    }
    samples.push_back(*s);
  });
  RecordProperty("samples", checked);
  EXPECT_GT(checked, 2000);
}

TEST(ChessSampleTest, AnOffPolicyProvenanceIsFlaggedAndTheSampleStaysValid) {
  const Game game;
  const MoveWeight moves[] = {{Uci(game, "e2e4"), 60}, {Uci(game, "d2d4"), 40}};
  Result<ChessSample> made =
      MakeSample(game, {moves, {0.5f, 0.3f, 0.2f}, 0.25f}, {77, 5, /*off_policy=*/true});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ChessSample s = *made;
  EXPECT_EQ(s.flags, kOffPolicy);
  SetOutcome(s, chess::GameResult::kDraw);
  EXPECT_EQ(s.flags, kOffPolicy | kHasOutcome);
  EXPECT_TRUE(ValidateSample(s).ok()) << ValidateSample(s).ToString();
  EXPECT_EQ(StartSample().flags, kHasOutcome);  // on-policy by default
}

TEST(ChessSampleTest, OutcomeIsSeenFromEachSamplesSideToMove) {
  Game game;
  std::vector<ChessSample> samples;
  for (const char* m : {"f2f3", "e7e5", "g2g4", "d8h4"}) {
    const MoveWeight played[] = {{Uci(game, m), 1.0f}};
    Result<ChessSample> s = MakeSample(game, {played}, {});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    samples.push_back(*s);
    ASSERT_TRUE(game.PlayUci(m).ok());
  }
  ASSERT_EQ(game.Outcome().result, chess::GameResult::kBlackWins);
  SetOutcome(samples, game.Outcome().result);
  for (int ply = 0; ply < 4; ++ply) {
    EXPECT_EQ(samples[ply].z, ply % 2 == 0 ? -1.0f : 1.0f) << ply;  // White lost, Black won
    EXPECT_TRUE(ValidateSample(samples[ply]).ok()) << ValidateSample(samples[ply]).ToString();
  }
  SetOutcome(samples, chess::GameResult::kDraw);
  for (const ChessSample& s : samples) EXPECT_FALSE(std::signbit(s.z));  // +0.0f, byte for byte
}

TEST(ChessSampleTest, QuantizedProbabilitiesSumToExactlyOne) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + static_cast<int>(rng() % kMaxPolicyEntries);
    std::vector<double> p(n);
    double total = 0.0;
    for (double& x : p) total += x = (rng() % 4 == 0) ? 0.0 : std::exp(rng() % 2000 / 100.0);
    if (total == 0.0) p[0] = total = 1.0;
    for (double& x : p) x /= total;
    std::vector<std::uint16_t> q(n);
    QuantizeProbabilities(p, q);
    std::uint32_t sum = 0;
    for (int i = 0; i < n; ++i) {
      ASSERT_LT(std::fabs(q[i] - p[i] * 65535.0), 1.0) << i;
      sum += q[i];
    }
    ASSERT_EQ(sum, 65535u);
  }
}

TEST(ChessSampleTest, MakeSampleRejectsMalformedSearchResults) {
  const Game game;
  const Move e4 = Uci(game, "e2e4");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char* what;
    std::vector<MoveWeight> moves;
    std::array<float, 3> wdl;
    float soft;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"illegal move", {{Move::Normal(chess::kE2, chess::kE5), 1}}, {0, 1, 0}, 0, "not legal"},
      {"null move", {{Move::Null(), 1}}, {0, 1, 0}, 0, "not legal"},
      {"twice", {{e4, 1}, {e4, 2}}, {0, 1, 0}, 0, "listed twice"},
      {"negative", {{e4, -1}}, {0, 1, 0}, 0, "weight"},
      {"nan weight", {{e4, nan}}, {0, 1, 0}, 0, "weight"},
      {"all zero", {{e4, 0}}, {0, 1, 0}, 0, "weight 0"},
      {"no moves", {}, {0, 1, 0}, 0, "weight 0"},
      {"wdl nan", {{e4, 1}}, {nan, 1, 0}, 0, "WDL"},
      {"wdl sum", {{e4, 1}}, {0.5f, 0.6f, 0}, 0, "WDL sums"},
      {"soft value", {{e4, 1}}, {0, 1, 0}, 1.5f, "soft value"},
      {"soft nan", {{e4, 1}}, {0, 1, 0}, nan, "soft value"},
  };
  for (const Case& c : cases) {
    const Result<ChessSample> s = MakeSample(game, {c.moves, c.wdl, c.soft}, {});
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(s.status().message().find(c.message), std::string::npos)
        << c.what << ": " << s.status().ToString();
  }
  // A finished game has nothing to search.
  Game mated;
  for (const char* m : {"f2f3", "e7e5", "g2g4", "d8h4"}) ASSERT_TRUE(mated.PlayUci(m).ok());
  EXPECT_EQ(MakeSample(mated, {}, {}).status().code(), StatusCode::kFailedPrecondition);
}

// Each case corrupts one field of a valid sample, as bytes from a faulty peer might.
TEST(ChessSampleTest, ValidationRejectsEachMalformedField) {
  const ChessSample good = StartSample();
  ASSERT_TRUE(ValidateSample(good).ok()) << ValidateSample(good).ToString();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    const char* what;
    std::function<void(ChessSample&)> corrupt;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"magic", [](ChessSample& s) { s.magic = 0; }, "magic"},
      {"version", [](ChessSample& s) { s.version = 9; }, "version 9"},
      {"record", [](ChessSample& s) { s.position.side_to_move = 3; }, "side to move"},
      {"no moves", [](ChessSample& s) { s.num_moves = 0; }, "num_moves 0"},
      {"too many moves", [](ChessSample& s) { s.num_moves = 219; }, "num_moves 219"},
      {"index range", [](ChessSample& s) { s.policy[19].index = 4672; }, "index 4672"},
      {"duplicate", [](ChessSample& s) { s.policy[5].index = s.policy[4].index; },
       "strictly increasing"},
      {"sum", [](ChessSample& s) { s.policy[0].probability += 2000; }, "sum to"},
      {"trailing entry", [](ChessSample& s) { s.policy[20].probability = 1; }, "past num_moves"},
      {"z nan", [nan](ChessSample& s) { s.z = nan; }, "z "},
      {"z range", [](ChessSample& s) { s.z = 2.0f; }, "z "},
      {"wdl nan", [nan](ChessSample& s) { s.root_wdl[1] = nan; }, "root WDL entry"},
      {"wdl sum", [](ChessSample& s) { s.root_wdl[0] += 0.1f; }, "root WDL sums"},
      {"soft value", [](ChessSample& s) { s.soft_value = -1.5f; }, "soft value"},
      {"flags", [](ChessSample& s) { s.flags |= 4; }, "unknown flags"},
      {"outcome", [](ChessSample& s) { s.flags = 0; }, "never set"},
      {"ply", [](ChessSample& s) { s.ply = 3; }, "does not match ply"},
  };
  for (const Case& c : cases) {
    ChessSample bad = good;
    c.corrupt(bad);
    const Status s = ValidateSample(bad);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s.ToString();
  }
  ChessSample bad = good;
  bad.magic = 0;
  EXPECT_EQ(ValidateSample(bad).code(), StatusCode::kDataLoss);
}

TEST(ChessSampleTest, LegalityCheckFindsIndicesThatAreNotMovesOfThePosition) {
  ChessSample s = StartSample();
  ASSERT_TRUE(CheckPolicyIsLegal(s).ok());
  // e2e5 (674) in place of e2e4 (673): still well-formed, but not a legal move.
  for (int i = 0; i < s.num_moves; ++i) {
    if (s.policy[i].index == 673) s.policy[i].index = 674;
  }
  ASSERT_TRUE(ValidateSample(s).ok());
  EXPECT_NE(CheckPolicyIsLegal(s).message().find("674"), std::string::npos);
  // A legal move left out.
  s = StartSample();
  s.policy[0].probability += s.policy[s.num_moves - 1].probability;
  s.policy[s.num_moves - 1] = {};
  --s.num_moves;
  ASSERT_TRUE(ValidateSample(s).ok());
  EXPECT_NE(CheckPolicyIsLegal(s).message().find("19 moves"), std::string::npos);
}

}  // namespace
}  // namespace az::sample
