// The Connect Four solver against a plain alpha-beta search (slow but obviously right) on late
// positions, and on positions whose values are known.

#include "core/games/connect4/connect_four_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/games/connect4/connect_four.h"

namespace az::games {
namespace {

int PlainSolve(const ConnectFourPosition& position, int alpha, int beta) {
  if (position.LastMoverWon()) return -1;
  if (position.BoardFull()) return 0;
  int best = -1;
  for (int column = 0; column < kConnectFourWidth; ++column) {
    if (!position.CanPlay(column)) continue;
    ConnectFourPosition child = position;
    child.Play(column);
    best = std::max(best, -PlainSolve(child, -beta, -alpha));
    alpha = std::max(alpha, best);
    if (alpha >= beta) break;
  }
  return best;
}

// Random positions with `empty` cells left where the game goes on.
std::vector<ConnectFourPosition> RandomPositions(int count, int empty, std::uint64_t seed) {
  std::vector<ConnectFourPosition> positions;
  while (static_cast<int>(positions.size()) < count) {
    ConnectFourPosition position;
    bool over = false;
    while (!over && position.moves_played() < kConnectFourCells - empty) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const int column = static_cast<int>((seed >> 33) % kConnectFourWidth);
      if (!position.CanPlay(column)) continue;
      position.Play(column);
      over = position.LastMoverWon();
    }
    if (!over) positions.push_back(position);
  }
  return positions;
}

TEST(ConnectFourSolverTest, AgreesWithPlainAlphaBetaOnLatePositions) {
  ConnectFourSolver solver(16);
  int values[3] = {};
  for (const ConnectFourPosition& position : RandomPositions(60, 12, 42)) {
    const int expected = PlainSolve(position, -1, 1);
    ASSERT_EQ(solver.Solve(position), expected) << position.ToString();
    ++values[expected + 1];
  }
  // The sample holds positions of more than one value, so agreement means something.
  EXPECT_GT(values[0] + values[1], 0);
  EXPECT_GT(values[2], 0);
}

TEST(ConnectFourSolverTest, MoveValuesAgreeWithSolvingEachChild) {
  ConnectFourSolver solver(16);
  for (const ConnectFourPosition& position : RandomPositions(20, 14, 7)) {
    const auto values = solver.MoveValues(position);
    int best = -2;
    for (int column = 0; column < kConnectFourWidth; ++column) {
      if (!position.CanPlay(column)) {
        EXPECT_EQ(values[column], ConnectFourSolver::kIllegal);
        continue;
      }
      ConnectFourPosition child = position;
      child.Play(column);
      EXPECT_EQ(values[column], -PlainSolve(child, -1, 1)) << position.ToString() << column;
      best = std::max(best, values[column]);
    }
    EXPECT_EQ(best, solver.Solve(position));
  }
}

TEST(ConnectFourSolverTest, KnownValues) {
  ConnectFourSolver solver;
  // Three in the bottom row with both ends open: the side to move (X) wins at once.
  EXPECT_EQ(solver.Solve(*ConnectFourPosition::FromMoves("415263")), 1);
  // After the last move connected four the side to move has lost.
  EXPECT_EQ(solver.Solve(*ConnectFourPosition::FromMoves("4152637")), -1);
  // X threatens 1-2-3-4 open on both sides on the next move whatever O does: O to move loses.
  EXPECT_EQ(solver.Solve(*ConnectFourPosition::FromMoves("4455")), 1);
  EXPECT_EQ(solver.Solve(*ConnectFourPosition::FromMoves("44553")), -1);
}

TEST(ConnectFourSolverTest, GameDefinitionSolveMatchesTheSolver) {
  ConnectFourSolver solver(16);
  for (const ConnectFourPosition& position : RandomPositions(10, 10, 3)) {
    EXPECT_EQ(ConnectFour::Solve(position), solver.Solve(position));
  }
}

}  // namespace
}  // namespace az::games
