// az-uci's pure parts: the protocol's text (go, setoption, position, the score mapping), the time
// manager's budgets, and the NN cache in front of an evaluator.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "core/chess/uci.h"
#include "core/games/chess/chess.h"
#include "core/mcts/fake_evaluators.h"
#include "services/uci/engine_evaluator.h"
#include "services/uci/time_manager.h"
#include "services/uci/uci_commands.h"

namespace az::uci {
namespace {

TEST(UciCommandsTest, SplitsTheCommandFromItsArguments) {
  EXPECT_EQ(SplitCommand("  go  nodes 5 \r").first, "go");
  EXPECT_EQ(SplitCommand("  go  nodes 5 \r").second, "nodes 5");
  EXPECT_EQ(SplitCommand("isready").second, "");
  EXPECT_EQ(SplitCommand("   ").first, "");
}

TEST(UciCommandsTest, ParsesEveryGoLimit) {
  const GoLimits limits = ParseGo(
      "wtime 60000 btime 59000 winc 1000 binc 900 movestogo 20 movetime 500 nodes 800 depth 7");
  EXPECT_EQ(limits.white_time_ms, 60000);
  EXPECT_EQ(limits.black_time_ms, 59000);
  EXPECT_EQ(limits.white_increment_ms, 1000);
  EXPECT_EQ(limits.black_increment_ms, 900);
  EXPECT_EQ(limits.moves_to_go, 20);
  EXPECT_EQ(limits.move_time_ms, 500);
  EXPECT_EQ(limits.nodes, 800u);
  EXPECT_EQ(limits.depth, 7);
  EXPECT_FALSE(limits.infinite);
  EXPECT_TRUE(limits.warnings.empty());
  EXPECT_TRUE(ParseGo("infinite").infinite);
}

TEST(UciCommandsTest, GoWarnsAboutWhatItCannotUseAndKeepsTheRest) {
  const GoLimits limits = ParseGo(
      "wtime -50 nodes abc movetime 300 foo searchmoves e2e4 d2d4 "
      "mate 3 ponder depth");
  EXPECT_EQ(limits.white_time_ms, 0);  // a fallen flag counts as no time left
  EXPECT_FALSE(limits.nodes.has_value());
  EXPECT_EQ(limits.move_time_ms, 300);
  EXPECT_FALSE(limits.depth.has_value());
  // nodes abc, foo, searchmoves, mate, ponder, depth without its number.
  ASSERT_EQ(limits.warnings.size(), 6u);
  EXPECT_NE(limits.warnings[0].find("nodes"), std::string::npos);
  EXPECT_NE(limits.warnings[1].find("'foo'"), std::string::npos);
}

TEST(UciCommandsTest, ParsesSetOptionNamesWithSpacesAndEmptyValues) {
  Result<OptionSetting> overhead = ParseSetOption("name Move Overhead value 250");
  ASSERT_TRUE(overhead.ok());
  EXPECT_EQ(overhead->name, "Move Overhead");
  EXPECT_EQ(overhead->value, "250");
  Result<OptionSetting> file = ParseSetOption("name WeightsFile value /tmp/my model.azw");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->value, "/tmp/my model.azw");
  Result<OptionSetting> button = ParseSetOption("name Clear Hash");
  ASSERT_TRUE(button.ok());
  EXPECT_EQ(button->name, "Clear Hash");
  EXPECT_EQ(button->value, "");
  EXPECT_FALSE(ParseSetOption("").ok());
  EXPECT_FALSE(ParseSetOption("Hash value 5").ok());
  EXPECT_FALSE(ParseSetOption("name value 5").ok());
}

TEST(UciCommandsTest, ParsesPositionsAndKeepsTheMovesBeforeAnIllegalOne) {
  PositionCommand start = ParsePosition("startpos moves e2e4 e7e5 g1f3");
  ASSERT_TRUE(start.game.has_value());
  EXPECT_TRUE(start.error.empty());
  EXPECT_EQ(start.game->ply(), 3);
  EXPECT_EQ(start.game->position().ToFen(),
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2");

  PositionCommand fen = ParsePosition("fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1 moves d1d8");
  ASSERT_TRUE(fen.game.has_value());
  EXPECT_EQ(fen.game->ply(), 1);
  EXPECT_TRUE(fen.game->Outcome().is_terminal());  // mate

  PositionCommand illegal = ParsePosition("startpos moves e2e4 e7e6 e4e6 d2d4");
  ASSERT_TRUE(illegal.game.has_value());
  EXPECT_EQ(illegal.game->ply(), 2);
  EXPECT_NE(illegal.error.find("e4e6"), std::string::npos) << illegal.error;

  EXPECT_FALSE(ParsePosition("fen not/a/fen w - - 0 1").game.has_value());
  EXPECT_FALSE(ParsePosition("").game.has_value());
  EXPECT_FALSE(ParsePosition("startpos e2e4").game.has_value());
  EXPECT_TRUE(ParsePosition("startpos moves").game.has_value());
}

TEST(UciCommandsTest, MapsQToCentipawnsWithLc0sFormula) {
  EXPECT_EQ(QToCentipawns(0.0), 0);
  EXPECT_EQ(QToCentipawns(0.5), static_cast<int>(std::lround(90 * std::tan(1.5637541897 * 0.5))));
  EXPECT_EQ(QToCentipawns(-0.3), -QToCentipawns(0.3));
  EXPECT_GT(QToCentipawns(1.0), 12000);
  EXPECT_EQ(QToCentipawns(3.0), QToCentipawns(1.0));  // clamped
  EXPECT_EQ(QToCentipawns(std::nan("")), 0);
  for (double q = -0.99; q < 0.99; q += 0.01) EXPECT_LE(QToCentipawns(q), QToCentipawns(q + 0.01));
}

TEST(UciCommandsTest, WdlPermilleAlwaysSumsToAThousand) {
  const WdlPermille even = ToPermille(1.0 / 3, 1.0 / 3, 1.0 / 3);
  EXPECT_EQ(even.win + even.draw + even.loss, 1000);
  const WdlPermille skewed = ToPermille(0.4996, 0.0008, 0.4996);
  EXPECT_EQ(skewed.win + skewed.draw + skewed.loss, 1000);
  EXPECT_GE(skewed.draw, 0);
  const WdlPermille win = ToPermille(1, 0, 0);
  EXPECT_EQ(win.win, 1000);
  EXPECT_EQ(win.draw, 0);
  const WdlPermille nothing = ToPermille(0, 0, 0);
  EXPECT_EQ(nothing.draw, 1000);
}

TEST(TimeManagerTest, SpendsAShareOfTheClockPlusMostOfTheIncrement) {
  const TimeManagerOptions options;  // 100 ms overhead, 30 moves, 0.75 of the increment
  EXPECT_EQ(ClockBudgetMs(60'000, 0, 0, options), (60'000 - 100) / 30);
  EXPECT_EQ(ClockBudgetMs(60'000, 1'000, 0, options), (60'000 - 100) / 30 + 750);
  EXPECT_EQ(ClockBudgetMs(60'000, 0, 10, options), (60'000 - 100) / 10);
}

TEST(TimeManagerTest, NeverSpendsMoreThanHalfOfWhatIsLeft) {
  const TimeManagerOptions options;
  EXPECT_EQ(ClockBudgetMs(1'100, 0, 1, options), 500);       // movestogo 1: still half
  EXPECT_EQ(ClockBudgetMs(1'100, 10'000, 0, options), 500);  // a big increment is not time now
  EXPECT_EQ(ClockBudgetMs(50, 1'000, 0, options), 0);        // below the overhead: answer at once
  EXPECT_EQ(ClockBudgetMs(0, 0, 0, options), 0);
  for (std::int64_t left = 0; left < 100'000; left += 777) {
    for (std::int64_t inc : {0, 100, 5'000}) {
      for (int to_go : {0, 1, 2, 40}) {
        const std::int64_t budget = ClockBudgetMs(left, inc, to_go, options);
        EXPECT_GE(budget, 0);
        EXPECT_LE(budget, std::max<std::int64_t>(0, left - options.move_overhead_ms) / 2);
      }
    }
  }
}

TEST(TimeManagerTest, MoveTimeKeepsTheOverheadBack) {
  const TimeManagerOptions options;
  EXPECT_EQ(MoveTimeBudgetMs(1'000, options), 900);
  EXPECT_EQ(MoveTimeBudgetMs(100, options), 50);  // at most half of a short move time
  EXPECT_EQ(MoveTimeBudgetMs(0, options), 1);
}

TEST(TimeManagerTest, PlansWithOurSidesClockAndTheSmallerBudget) {
  const TimeManagerOptions options;
  GoLimits limits;
  limits.white_time_ms = 30'100;
  limits.black_time_ms = 3'100;
  SearchTimePlan white = PlanSearchTime(limits, true, options);
  ASSERT_TRUE(white.budget_ms.has_value());
  EXPECT_EQ(*white.budget_ms, 1000);
  EXPECT_TRUE(white.from_clock);
  EXPECT_EQ(*PlanSearchTime(limits, false, options).budget_ms, 100);
  limits.move_time_ms = 400;
  const SearchTimePlan both = PlanSearchTime(limits, true, options);
  EXPECT_EQ(*both.budget_ms, 300);
  EXPECT_FALSE(both.from_clock);
  EXPECT_FALSE(PlanSearchTime(GoLimits{}, true, options).budget_ms.has_value());
}

// Counts the leaves it is asked for; answers like HashEvaluator.
class CountingEvaluator final : public ChessEvaluator {
 public:
  explicit CountingEvaluator(int* leaves) : leaves_(leaves) {}
  Status Evaluate(std::span<const mcts::Leaf<games::Chess>> leaves,
                  std::span<mcts::LeafEval> evals) override {
    *leaves_ += static_cast<int>(leaves.size());
    return hash_.Evaluate(leaves, evals);
  }

 private:
  int* leaves_;
  mcts::HashEvaluator<games::Chess> hash_;
};

// One leaf of `game`, with storage for its answer.
struct OneLeaf {
  explicit OneLeaf(const chess::Game& game) : record(games::Chess::ToRecord(game)) {
    for (chess::Move move : game.LegalMoves()) {
      moves.push_back(move);
      indices.push_back(static_cast<std::uint16_t>(games::Chess::PolicyIndex(game, move)));
    }
    priors.assign(moves.size(), -1.0f);
  }
  mcts::Leaf<games::Chess> leaf() const { return {&record, moves, indices}; }
  mcts::LeafEval eval() { return {priors, std::span<float, 3>(wdl)}; }

  games::Chess::Record record;
  std::vector<chess::Move> moves;
  std::vector<std::uint16_t> indices;
  std::vector<float> priors;
  std::array<float, 3> wdl{};
};

TEST(CachedEvaluatorTest, AnswersRepeatedPositionsWithoutTheInnerEvaluator) {
  int inner_leaves = 0;
  Result<std::unique_ptr<CachedEvaluator>> cached =
      CachedEvaluator::Create(std::make_unique<CountingEvaluator>(&inner_leaves), 1000);
  ASSERT_TRUE(cached.ok()) << cached.status().ToString();
  EXPECT_EQ((*cached)->stats().capacity, 512u);  // rounded down to a power of two

  chess::Game start;
  chess::Game after_e4;
  ASSERT_TRUE(after_e4.PlayUci("e2e4").ok());
  OneLeaf a(start), b(after_e4);
  std::vector<mcts::Leaf<games::Chess>> leaves = {a.leaf(), b.leaf()};
  std::vector<mcts::LeafEval> evals = {a.eval(), b.eval()};
  ASSERT_TRUE((*cached)->Evaluate(leaves, evals).ok());
  EXPECT_EQ(inner_leaves, 2);
  const std::vector<float> first_priors = a.priors;
  const std::array<float, 3> first_wdl = a.wdl;

  // Again, in another order, with a new position between them: only the new one goes through.
  chess::Game after_d4;
  ASSERT_TRUE(after_d4.PlayUci("d2d4").ok());
  OneLeaf a2(start), c(after_d4), b2(after_e4);
  leaves = {b2.leaf(), c.leaf(), a2.leaf()};
  evals = {b2.eval(), c.eval(), a2.eval()};
  ASSERT_TRUE((*cached)->Evaluate(leaves, evals).ok());
  EXPECT_EQ(inner_leaves, 3);
  EXPECT_EQ(a2.priors, first_priors);
  EXPECT_EQ(a2.wdl, first_wdl);
  EXPECT_EQ(b2.priors, b.priors);
  for (float p : c.priors) EXPECT_GE(p, 0.0f);  // answered by the inner evaluator
  EXPECT_EQ((*cached)->stats().hits, 2u);
}

TEST(CachedEvaluatorTest, SizesRoundDownToPowersOfTwo) {
  EXPECT_EQ(CacheEntriesFor(0), 0u);
  EXPECT_EQ(CacheEntriesFor(1), 0u);
  EXPECT_EQ(CacheEntriesFor(2), 2u);
  EXPECT_EQ(CacheEntriesFor(65535), 32768u);
  EXPECT_EQ(CacheEntriesFor(std::uint64_t{1} << 40), evaluator::kMaxCacheSize);
}

TEST(CachedEvaluatorTest, LoadsTheUniformEvaluatorWithoutACache) {
  Result<LoadedEvaluator> loaded = LoadChessEvaluator({"uniform", 1, 1 << 16});
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->is_network);
  EXPECT_EQ(dynamic_cast<CachedEvaluator*>(loaded->evaluator.get()), nullptr);
  Result<LoadedEvaluator> missing = LoadChessEvaluator({"/nonexistent/model.azw", 1, 1 << 16});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
}

}  // namespace
}  // namespace az::uci
