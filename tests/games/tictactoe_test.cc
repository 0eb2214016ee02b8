// Tic-tac-toe: rules, text forms, the sample, the symmetries and the solver.

#include "core/games/tictactoe/tictactoe.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace az::games {
namespace {

TicTacToePosition Parse(std::string_view text) {
  Result<TicTacToePosition> position = TicTacToe::ParsePosition(text);
  EXPECT_TRUE(position.ok()) << position.status().ToString();
  return *position;
}

TEST(TicTacToeTest, RowsColumnsAndDiagonalsWin) {
  // X: 1 2 3 (top row); O: 4 5.
  TicTacToePosition top = Parse("14253");
  EXPECT_TRUE(top.LastMoverWon());
  TicTacToeMove moves[9];
  EXPECT_EQ(TicTacToe::Outcome(top, TicTacToe::LegalMoves(top, moves)), GameOutcome::kLoss);
  EXPECT_TRUE(Parse("12457").LastMoverWon());  // X 1 4 7: the left column
  EXPECT_FALSE(Parse("1245").LastMoverWon());
}

TEST(TicTacToeTest, DiagonalAndColumn) {
  EXPECT_TRUE(Parse("12569").LastMoverWon());   // X 1 5 9
  EXPECT_TRUE(Parse("21437").LastMoverWon() == false);
  EXPECT_TRUE(Parse("214378").LastMoverWon() == false);
  EXPECT_TRUE(Parse("1247").LastMoverWon() == false);
  EXPECT_TRUE(Parse("31527").LastMoverWon());   // X 3 5 7: the anti-diagonal
}

TEST(TicTacToeTest, DrawnFullBoard) {
  const TicTacToePosition full = Parse("519328746");
  EXPECT_TRUE(full.BoardFull());
  EXPECT_FALSE(full.LastMoverWon());
  TicTacToeMove moves[9];
  EXPECT_EQ(TicTacToe::Outcome(full, TicTacToe::LegalMoves(full, moves)), GameOutcome::kDraw);
}

TEST(TicTacToeTest, TextFormsAndErrors) {
  EXPECT_EQ(Parse("start"), TicTacToePosition());
  EXPECT_EQ(Parse(" 5 "), *TicTacToePosition::FromMoves("5"));
  EXPECT_EQ(TicTacToe::PositionText(Parse("51")), "O..\n.X.\n...\n");
  EXPECT_FALSE(TicTacToe::ParsePosition("55").ok());      // taken
  EXPECT_FALSE(TicTacToe::ParsePosition("0").ok());       // not a cell
  EXPECT_FALSE(TicTacToe::ParsePosition("12437x").ok());  // not a digit
  EXPECT_FALSE(TicTacToe::ParsePosition("124378").ok());  // after the win
  const TicTacToePosition position = Parse("5");
  EXPECT_EQ(TicTacToe::ParseMove(position, "9")->cell, 8);
  EXPECT_FALSE(TicTacToe::ParseMove(position, "5").ok());
  EXPECT_FALSE(TicTacToe::ParseMove(position, "10").ok());
  EXPECT_EQ(TicTacToe::MoveText(position, {8}), "9");
}

TEST(TicTacToeTest, RecordsRoundTripAndUnreachableOnesAreRefused) {
  const TicTacToePosition position = Parse("5137");
  EXPECT_EQ(*TicTacToePosition::FromRecord(position.ToRecord()), position);
  EXPECT_FALSE(TicTacToePosition::FromRecord({0x200, 0}).ok());   // off the board
  EXPECT_FALSE(TicTacToePosition::FromRecord({0x1, 0x1}).ok());   // one cell twice
  EXPECT_FALSE(TicTacToePosition::FromRecord({0x7, 0x0}).ok());   // counts do not alternate
  EXPECT_FALSE(TicTacToePosition::FromRecord({0x7, 0x38}).ok());  // the side to move has a line
}

TEST(TicTacToeTest, EncodesOwnOpponentAndOnesPlanes) {
  const TicTacToePosition position = Parse("51");  // X centre, O top-left; X to move
  std::vector<float> planes(27, -1.0f);
  TicTacToe::Encode(position.ToRecord(), planes);
  for (int cell = 0; cell < 9; ++cell) {
    EXPECT_EQ(planes[cell], cell == 4 ? 1.0f : 0.0f);
    EXPECT_EQ(planes[9 + cell], cell == 0 ? 1.0f : 0.0f);
    EXPECT_EQ(planes[18 + cell], 1.0f);
  }
}

TEST(TicTacToeTest, SymmetriesAreTheEightMapsOfTheSquare) {
  std::set<std::vector<int>> maps;
  for (int s = 0; s < TicTacToe::kSymmetries; ++s) {
    std::vector<int> map;
    for (int cell = 0; cell < 9; ++cell) map.push_back(TicTacToe::TransformAction(cell, s));
    EXPECT_EQ(std::set<int>(map.begin(), map.end()).size(), 9u) << "not a permutation";
    EXPECT_EQ(map[4], 4) << "the centre stays";
    maps.insert(map);
    // A line maps to a line: the rules, and so the values, are unchanged.
    for (std::uint16_t own : {0007, 0070, 0111, 0421, 0124}) {
      const TicTacToeRecord mapped = TicTacToe::TransformRecord({0, own}, s);
      EXPECT_TRUE(TicTacToePosition::HasLine(mapped.opponent));
    }
  }
  EXPECT_EQ(maps.size(), 8u);
  // Rotation 1 is clockwise: the top-left corner goes to the top-right.
  EXPECT_EQ(TicTacToe::TransformAction(0, 1), 2);
}

TEST(TicTacToeTest, SolverKnowsTheGame) {
  EXPECT_EQ(TicTacToe::Solve(TicTacToePosition()), 0);  // a draw with perfect play
  EXPECT_EQ(TicTacToe::Solve(Parse("12")), 1);           // O's edge reply to a corner loses
  EXPECT_EQ(TicTacToe::Solve(Parse("15")), 0);           // the centre reply holds
  EXPECT_EQ(TicTacToe::Solve(Parse("1253")), 1);         // X to move completes 1 5 9
  EXPECT_EQ(TicTacToe::Solve(Parse("12437")), -1);       // O to move, X has a line
  // Every symmetry keeps every value.
  const TicTacToePosition position = Parse("162");
  for (int s = 0; s < TicTacToe::kSymmetries; ++s) {
    const auto mapped =
        TicTacToePosition::FromRecord(TicTacToe::TransformRecord(position.ToRecord(), s));
    ASSERT_TRUE(mapped.ok());
    EXPECT_EQ(TicTacToe::Solve(*mapped), TicTacToe::Solve(position));
  }
}

TEST(TicTacToeTest, SampleLayoutIsPinned) {
  EXPECT_EQ(sizeof(TicTacToeSample), 72u);
  EXPECT_EQ(offsetof(TicTacToeSample, position), 48u);
  EXPECT_EQ(offsetof(TicTacToeSample, policy), 52u);
  EXPECT_EQ(offsetof(TicTacToeSample, reserved1), 70u);
  EXPECT_EQ(TicTacToeSample().magic, kTicTacToeSampleMagic);
}

}  // namespace
}  // namespace az::games
