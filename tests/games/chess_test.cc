// games::Chess's rules as the search sees them: a repetition below the search's root is a draw
// (TreeOutcome), while the game itself (Outcome) goes on until the threefold; games without a
// TreeOutcome are judged by Outcome everywhere. MaterialBalance, which self-play's material
// adjudication reads, counts pawn 1, minor 3, rook 5, queen 9 from the side to move's view.

#include "core/games/chess/chess.h"

#include <gtest/gtest.h>

#include "core/games/connect4/connect_four.h"
#include "core/games/game.h"

namespace az::games {
namespace {

GameOutcome Judge(GameOutcome (*judge)(const Chess::State&, int), const Chess::State& state) {
  Chess::Move moves[Chess::kMaxMoves];
  return judge(state, Chess::LegalMoves(state, moves));
}

TEST(ChessMaterialTest, BalanceIsFromTheSideToMovesView) {
  Result<Chess::State> start = Chess::ParsePosition("startpos");
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(Chess::MaterialBalance(*start), 0);
  // White lacks its b1 knight; black lacks its queen and a pawn.
  Result<Chess::State> white =
      Chess::ParsePosition("rnb1kbnr/ppppppp1/8/8/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1");
  ASSERT_TRUE(white.ok());
  EXPECT_EQ(Chess::MaterialBalance(*white), 10 - 3);
  Result<Chess::State> black =
      Chess::ParsePosition("rnb1kbnr/ppppppp1/8/8/8/8/PPPPPPPP/R1BQKBNR b KQkq - 0 1");
  ASSERT_TRUE(black.ok());
  EXPECT_EQ(Chess::MaterialBalance(*black), -(10 - 3));
}

TEST(ChessTreeOutcomeTest, TwofoldIsADrawForTheSearchAndTheGameGoesOnUntilThreefold) {
  Result<Chess::State> game = Chess::ParsePosition("startpos");
  ASSERT_TRUE(game.ok());
  const auto play = [&](const char* uci) { ASSERT_TRUE(game->PlayUci(uci).ok()) << uci; };
  for (const char* uci : {"g1f3", "g8f6", "f3g1"}) {
    play(uci);
    EXPECT_EQ(Judge(&Chess::Outcome, *game), GameOutcome::kOngoing);
    EXPECT_EQ(Judge(&TreeOutcome<Chess>, *game), GameOutcome::kOngoing) << "nothing repeated yet";
  }
  play("f6g8");  // the start position, a second time
  EXPECT_EQ(game->RepetitionCount(), 2);
  EXPECT_EQ(Judge(&Chess::Outcome, *game), GameOutcome::kOngoing);
  EXPECT_EQ(Judge(&Chess::TreeOutcome, *game), GameOutcome::kDraw);
  EXPECT_EQ(Judge(&TreeOutcome<Chess>, *game), GameOutcome::kDraw);
  for (const char* uci : {"g1f3", "g8f6", "f3g1"}) {
    play(uci);  // each a second occurrence too
    EXPECT_EQ(Judge(&Chess::Outcome, *game), GameOutcome::kOngoing) << uci;
    EXPECT_EQ(Judge(&TreeOutcome<Chess>, *game), GameOutcome::kDraw) << uci;
  }
  play("f6g8");  // the third time: the game is drawn
  EXPECT_EQ(Judge(&Chess::Outcome, *game), GameOutcome::kDraw);
  EXPECT_EQ(Judge(&TreeOutcome<Chess>, *game), GameOutcome::kDraw);
}

TEST(ChessTreeOutcomeTest, MateStaysALossInTheTree) {
  // Fool's mate: White is checkmated.
  Result<Chess::State> game = Chess::ParsePosition("startpos moves f2f3 e7e5 g2g4 d8h4");
  ASSERT_TRUE(game.ok());
  EXPECT_EQ(Judge(&Chess::Outcome, *game), GameOutcome::kLoss);
  EXPECT_EQ(Judge(&TreeOutcome<Chess>, *game), GameOutcome::kLoss);
}

TEST(ChessTreeOutcomeTest, GamesWithoutTreeRulesAreJudgedByOutcome) {
  Result<ConnectFour::State> won = ConnectFour::ParsePosition("4455667");  // four in a row
  ASSERT_TRUE(won.ok());
  ConnectFour::Move moves[ConnectFour::kMaxMoves];
  const int count = ConnectFour::LegalMoves(*won, moves);
  EXPECT_EQ(TreeOutcome<ConnectFour>(*won, count), ConnectFour::Outcome(*won, count));
  EXPECT_EQ(TreeOutcome<ConnectFour>(*won, count), GameOutcome::kLoss);
}

}  // namespace
}  // namespace az::games
