// The search on chess through games::Chess: mates in one for both colours with a uniform evaluator,
// exact values for stalemate, repetition and the fifty-move rule, what the evaluator is handed, and
// the bookkeeping invariants.

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/chess/uci.h"
#include "core/encoding/move_index.h"
#include "core/encoding/position_record.h"
#include "core/games/chess/chess.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"
#include "tests/mcts/tree_checks.h"

namespace az::mcts {
namespace {

using games::Chess;
using ChessSearch = Search<Chess>;

chess::Game GameFromFen(std::string_view fen) {
  Result<chess::Game> game = chess::Game::FromFen(fen);
  AZ_CHECK(game.ok(), game.status().ToString());
  return std::move(game).value();
}

// Without a network the priors say nothing, so the FPU reduction (which trusts them) only slows the
// search down: a uniform search values unvisited moves at the parent's Q (fpu_base 0), as az-search
// does without --model. docs/mcts.md has the simulations each mate takes at fpu_base 1.
constexpr SearchOptions kUniform = {.fpu_base = 0.0f};

ChessSearch MakeSearch(const chess::Game& root, SearchOptions options = kUniform) {
  Result<ChessSearch> search = ChessSearch::Create(options, root);
  AZ_CHECK(search.ok(), search.status().ToString());
  return std::move(search).value();
}

const ChildStats<chess::Move>* FindChild(const std::vector<ChildStats<chess::Move>>& children,
                                         std::string_view uci) {
  for (const auto& child : children) {
    if (chess::MoveToUci(child.move) == uci) return &child;
  }
  return nullptr;
}

// Checks what the search hands the evaluator: a valid record of a non-terminal position, its legal
// moves, and their policy indices.
struct CheckingEvaluator {
  UniformEvaluator<Chess> inner;
  int leaves = 0;
  Status Evaluate(std::span<const Leaf<Chess>> batch, std::span<LeafEval> evals) {
    for (const Leaf<Chess>& leaf : batch) {
      ++leaves;
      EXPECT_TRUE(encoding::ValidateRecord(*leaf.record).ok());
      Result<chess::Position> position = encoding::RecordToPosition(*leaf.record);
      if (!position.ok()) {
        ADD_FAILURE() << position.status().ToString();
        continue;
      }
      const chess::MoveList legal = chess::LegalMoves(*position);
      EXPECT_GT(legal.size(), 0);
      EXPECT_EQ(leaf.moves.size(), static_cast<std::size_t>(legal.size()));
      for (std::size_t i = 0; i < leaf.moves.size(); ++i) {
        EXPECT_TRUE(legal.contains(leaf.moves[i]));
        EXPECT_EQ(leaf.policy_indices[i], encoding::MoveToIndex(*position, leaf.moves[i]));
      }
    }
    return inner.Evaluate(batch, evals);
  }
};

struct MateInOne {
  const char* name;
  const char* fen;
  const char* mate;
};

class ChessMateInOneTest : public testing::TestWithParam<MateInOne> {};

TEST_P(ChessMateInOneTest, UniformSearchFindsTheMateInAFewHundredSimulations) {
  const MateInOne& test = GetParam();
  for (int batch : {1, 8}) {
    SCOPED_TRACE(batch);
    ChessSearch search = MakeSearch(GameFromFen(test.fen), {.fpu_base = 0.0f, .max_batch = batch});
    CheckingEvaluator evaluator;
    ASSERT_TRUE(search.Run(evaluator, 300).ok());
    EXPECT_EQ(chess::MoveToUci(search.BestMove()), test.mate);
    const auto children = search.RootChildren();
    const auto* mate = FindChild(children, test.mate);
    ASSERT_NE(mate, nullptr);
    EXPECT_EQ(mate->q, 1.0);  // a terminal loss for the mated side, every visit exact
    EXPECT_GT(search.RootWdl().win, 0.5);
    ExpectConsistentTree(search);
  }
}

INSTANTIATE_TEST_SUITE_P(
    BothColours, ChessMateInOneTest,
    testing::Values(MateInOne{"WhiteBackRank", "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "d1d8"},
                    MateInOne{"BlackBackRank", "3r2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1", "d8d1"},
                    MateInOne{"WhiteScholars",
                              "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
                              "f3f7"},
                    MateInOne{"BlackFools",
                              "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
                              "d8h4"},
                    MateInOne{"BlackRookLadder", "6k1/8/8/8/8/1r6/r7/6K1 b - - 0 1", "b3b1"}),
    [](const testing::TestParamInfo<MateInOne>& info) { return info.param.name; });

TEST(ChessSearchTest, StalematedRootIsADrawWithNothingToSearch) {
  ChessSearch search = MakeSearch(GameFromFen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"));
  EXPECT_EQ(search.root_outcome(), games::GameOutcome::kDraw);
  UniformEvaluator<Chess> evaluator;
  EXPECT_EQ(search.Run(evaluator, 10).code(), StatusCode::kFailedPrecondition);
}

TEST(ChessSearchTest, StalematingMoveIsValuedExactlyZeroAndTheMateIsPreferred) {
  // Qg7 mates (the king on f6 guards g7); Qg6 stalemates. Without the lookahead at expansion both
  // are found by visiting them; with it both are terminal before any visit, and the mate takes
  // almost every playout.
  for (bool detect : {false, true}) {
    SCOPED_TRACE(detect);
    SearchOptions options = kUniform;
    options.detect_terminal_children = detect;
    ChessSearch search = MakeSearch(GameFromFen("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1"), options);
    UniformEvaluator<Chess> evaluator;
    ASSERT_TRUE(search.Run(evaluator, 300).ok());
    EXPECT_EQ(chess::MoveToUci(search.BestMove()), "g1g7");
    const auto children = search.RootChildren();
    const auto* stalemate = FindChild(children, "g1g6");
    ASSERT_NE(stalemate, nullptr);
    if (detect) {
      EXPECT_GT(FindChild(children, "g1g7")->visits, 250u);
    } else {
      ASSERT_GT(stalemate->visits, 0u);
      EXPECT_EQ(stalemate->q, 0.0);
    }
    const Node& root = search.root();
    for (std::uint32_t i = 0; i < root.num_children; ++i) {
      const Node& child = search.arena()[root.first_child + i];
      if (chess::MoveToUci(chess::Move::FromRaw(child.move)) != "g1g6") continue;
      EXPECT_EQ(child.state, NodeState::kTerminal);
      EXPECT_EQ(child.outcome, games::GameOutcome::kDraw);
      EXPECT_EQ(child.ValueSum(), 0);
      EXPECT_EQ(child.DrawSum(), static_cast<std::int64_t>(child.N()) * kValueScale);
    }
    ExpectConsistentTree(search);
  }
}

// The node reached from the root by `uci`, which must have been expanded (visited).
const Node& ChildNode(const ChessSearch& search, std::string_view uci) {
  const Node& root = search.root();
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const Node& child = search.arena()[root.first_child + i];
    if (chess::MoveToUci(chess::Move::FromRaw(child.move)) == uci) return child;
  }
  AZ_CHECK(false, "no such root move");
  return root;
}

TEST(ChessSearchTest, ThreefoldRepetitionInTheTreeIsATerminalDraw) {
  // After Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1, Black's Ng8 brings the start position back a third time.
  chess::Game game;
  for (const char* uci : {"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"}) {
    ASSERT_TRUE(game.PlayUci(uci).ok());
  }
  ChessSearch search = MakeSearch(game);
  UniformEvaluator<Chess> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 300).ok());
  const Node& repeat = ChildNode(search, "f6g8");
  ASSERT_GT(repeat.N(), 0u);
  EXPECT_EQ(repeat.state, NodeState::kTerminal);
  EXPECT_EQ(repeat.outcome, games::GameOutcome::kDraw);
  EXPECT_EQ(repeat.ValueSum(), 0);
  // Any other knight move is not a repetition.
  ASSERT_GT(ChildNode(search, "f6h5").N(), 0u);
  EXPECT_EQ(ChildNode(search, "f6h5").state, NodeState::kExpanded);
  ExpectConsistentTree(search);
}

TEST(ChessSearchTest, TwofoldRepetitionInTheTreeIsADrawButTheGameGoesOn) {
  // After Nf3 Nf6 Ng1, Black's Ng8 brings the start position back a second time: a draw for the
  // search (games::Chess::TreeOutcome), not yet for the game.
  chess::Game game;
  for (const char* uci : {"g1f3", "g8f6", "f3g1"}) ASSERT_TRUE(game.PlayUci(uci).ok());
  ChessSearch search = MakeSearch(game);
  UniformEvaluator<Chess> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 300).ok());
  const Node& repeat = ChildNode(search, "f6g8");
  ASSERT_GT(repeat.N(), 0u);
  EXPECT_EQ(repeat.state, NodeState::kTerminal);
  EXPECT_EQ(repeat.outcome, games::GameOutcome::kDraw);
  EXPECT_EQ(repeat.ValueSum(), 0);
  EXPECT_EQ(ChildNode(search, "f6h5").state, NodeState::kExpanded);
  ExpectConsistentTree(search);

  // The game plays Ng8: its root is the twofold repetition, which the search takes as a root to
  // search (Outcome), not as a draw; the subtree below it starts afresh.
  search.Advance(*Chess::ParseMove(search.root_state(), "f6g8"));
  EXPECT_EQ(search.root_outcome(), games::GameOutcome::kOngoing);
  EXPECT_EQ(search.root_state().RepetitionCount(), 2);
  ASSERT_TRUE(search.Run(evaluator, 200).ok());
  EXPECT_EQ(search.RootChildren().size(), 20u);
  ExpectConsistentTree(search);
}

TEST(ChessSearchTest, DrawScoreMakesPlayingIntoARepetitionWorseThanAnEvenPosition) {
  // After Nf3 Nf6 Ng1, Black's Ng8 repeats. A uniform evaluator values every position at 0, so
  // without contempt the repetition (exactly 0) is as good as any move; with draw_score 0.1 it is
  // worth -0.1 to Black, and the search spends fewer playouts on it than on an even move.
  chess::Game game;
  for (const char* uci : {"g1f3", "g8f6", "f3g1"}) ASSERT_TRUE(game.PlayUci(uci).ok());
  SearchOptions contempt = kUniform;
  contempt.draw_score = 0.1f;
  ChessSearch search = MakeSearch(game, contempt);
  UniformEvaluator<Chess> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 400).ok());
  const auto children = search.RootChildren();
  const auto* repeat = FindChild(children, "f6g8");
  const auto* even = FindChild(children, "e7e5");
  ASSERT_NE(repeat, nullptr);
  ASSERT_NE(even, nullptr);
  ASSERT_GT(repeat->visits, 0u);
  EXPECT_NEAR(repeat->q, -0.1, 1e-4);
  EXPECT_NEAR(even->q, 0.0, 1e-4);
  EXPECT_LT(repeat->visits, even->visits);
  // The draw is still a draw: its WDL says so, only its value carries the contempt.
  EXPECT_EQ(ChildNode(search, "f6g8").outcome, games::GameOutcome::kDraw);
  const Wdl wdl = search.RootWdl();  // still a distribution, as samples need
  EXPECT_GE(wdl.win, 0.0);
  EXPECT_GE(wdl.loss, 0.0);
  EXPECT_NEAR(wdl.win + wdl.draw + wdl.loss, 1.0, 1e-9);
  EXPECT_EQ(SearchOptions{.draw_score = 1.5f}.Validate().code(), StatusCode::kInvalidArgument);
}

// Uniform, but the knights' way back (Ng1, Ng8) is what a network would play first.
struct KnightsBackEvaluator {
  Status Evaluate(std::span<const Leaf<Chess>> batch, std::span<LeafEval> evals) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
      for (std::size_t m = 0; m < batch[i].moves.size(); ++m) {
        const std::string uci = chess::MoveToUci(batch[i].moves[m]);
        evals[i].priors[m] = uci == "f3g1" || uci == "f6g8" ? 50.0f : 1.0f;
      }
      evals[i].SetWdl(0.3f, 0.4f, 0.3f);
    }
    return Status::Ok();
  }
};

TEST(ChessSearchTest, PositionReachedTwiceInsideASearchLineIsADraw) {
  // The root is after Nf3 Nf6: the line Ng1 Ng8 inside the tree returns to the start position,
  // which only the game's history holds; the position after Ng1 is new to the game.
  chess::Game game;
  for (const char* uci : {"g1f3", "g8f6"}) ASSERT_TRUE(game.PlayUci(uci).ok());
  ChessSearch search = MakeSearch(game);
  KnightsBackEvaluator evaluator;
  ASSERT_TRUE(search.Run(evaluator, 200).ok());
  const Node& back = ChildNode(search, "f3g1");
  ASSERT_EQ(back.state, NodeState::kExpanded);
  const Node* repeat = nullptr;
  for (std::uint32_t i = 0; i < back.num_children; ++i) {
    const Node& child = search.arena()[back.first_child + i];
    if (chess::MoveToUci(chess::Move::FromRaw(child.move)) == "f6g8") repeat = &child;
  }
  ASSERT_NE(repeat, nullptr);
  ASSERT_GT(repeat->N(), 0u);
  EXPECT_EQ(repeat->state, NodeState::kTerminal);
  EXPECT_EQ(repeat->outcome, games::GameOutcome::kDraw);
  EXPECT_EQ(repeat->ValueSum(), 0);
  ExpectConsistentTree(search);
}

TEST(ChessSearchTest, FiftyMoveRuleDrawsAQuietMoveButNotACapture) {
  // 99 plies without progress: any quiet move ends the game drawn; the capture Rxa8 resets the
  // clock.
  ChessSearch search = MakeSearch(GameFromFen("r3k3/8/8/8/8/8/8/R3K3 w - - 99 80"));
  UniformEvaluator<Chess> evaluator;
  ASSERT_TRUE(search.Run(evaluator, 300).ok());
  const Node& root = search.root();
  int visited = 0;
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const Node& child = search.arena()[root.first_child + i];
    if (child.N() == 0) continue;
    ++visited;
    const bool capture = chess::MoveToUci(chess::Move::FromRaw(child.move)) == "a1a8";
    EXPECT_EQ(child.state == NodeState::kTerminal, !capture);
    if (!capture) {
      EXPECT_EQ(child.ValueSum(), 0);
    }
  }
  EXPECT_GT(ChildNode(search, "a1a8").N(), 0u);
  EXPECT_GE(visited, 5);
  ExpectConsistentTree(search);
}

TEST(ChessSearchTest, VisitsAddUpAndTheRootMovesAreTheLegalMoves) {
  ChessSearch search =
      MakeSearch(chess::Game(), {.virtual_loss = VirtualLoss::kLoss, .max_batch = 16});  // defaults
  HashEvaluator<Chess> evaluator(3);
  ASSERT_TRUE(search.Run(evaluator, 500).ok());
  EXPECT_EQ(search.RootChildVisits(), 500u);
  const auto children = search.RootChildren();
  const chess::MoveList legal = chess::LegalMoves(chess::Position());
  ASSERT_EQ(children.size(), static_cast<std::size_t>(legal.size()));
  for (const auto& child : children) EXPECT_TRUE(legal.contains(child.move));
  ExpectConsistentTree(search);
}

TEST(ChessSearchTest, SubtreeReuseThroughAGameKeepsTheTreeConsistent) {
  // A few plies of a game with reuse and noise; the scratch state must come back to the root
  // after every playout, or the records handed out would drift.
  ChessSearch search = MakeSearch(chess::Game(), {.root_noise = true, .max_batch = 4});
  CheckingEvaluator evaluator;
  chess::Game reference;
  for (int ply = 0; ply < 12; ++ply) {
    ASSERT_TRUE(search.Run(evaluator, 150).ok());
    ExpectConsistentTree(search);
    const chess::Move move = search.SelectMove(1.0f);
    reference.Play(move);
    search.Advance(move);
    EXPECT_EQ(search.root_state().position(), reference.position());
    EXPECT_EQ(search.root_state().ply(), ply + 1);
  }
  EXPECT_GT(evaluator.leaves, 0);
}

}  // namespace
}  // namespace az::mcts
