// The search against an exact solver: on late Connect Four positions (16 empty cells), the
// move the search plays must keep the game-theoretic value (win, draw or loss) of the position.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/games/connect4/connect_four.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"
#include "tests/mcts/tree_checks.h"

namespace az::mcts {
namespace {

using games::ConnectFour;
using games::ConnectFourMove;
using games::ConnectFourPosition;

// Negamax with alpha-beta over {-1, 0, +1}: the value of `position` for its side to move.
int Solve(const ConnectFourPosition& position, int alpha, int beta) {
  if (position.LastMoverWon()) return -1;
  if (position.BoardFull()) return 0;
  for (int column = 0; column < 7; ++column) {
    if (position.CanPlay(column) && position.IsWinningMove(column)) return 1;
  }
  int best = -1;
  for (int column : {3, 2, 4, 1, 5, 0, 6}) {  // centre first: more cut-offs
    if (!position.CanPlay(column)) continue;
    ConnectFourPosition child = position;
    child.Play(column);
    best = std::max(best, -Solve(child, -beta, -alpha));
    alpha = std::max(alpha, best);
    if (alpha >= beta) break;
  }
  return best;
}

int ValueAfter(const ConnectFourPosition& position, int column) {
  ConnectFourPosition child = position;
  child.Play(column);
  return -Solve(child, -1, 1);
}

// Late positions from games in which both sides avoid handing out an immediate win.
std::vector<ConnectFourPosition> LatePositions(int count, int empty_cells) {
  std::vector<ConnectFourPosition> positions;
  std::uint64_t seed = 2718;
  while (static_cast<int>(positions.size()) < count) {
    ConnectFourPosition position;
    bool over = false;
    while (position.moves_played() < 42 - empty_cells) {
      std::vector<int> quiet;
      for (int column = 0; column < 7; ++column) {
        if (position.CanPlay(column) && !position.IsWinningMove(column)) quiet.push_back(column);
      }
      if (quiet.empty()) {
        over = true;
        break;
      }
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      position.Play(quiet[(seed >> 33) % quiet.size()]);
    }
    if (!over && !position.LastMoverWon()) positions.push_back(position);
  }
  return positions;
}

TEST(ConnectFourSolverTest, SearchKeepsTheExactValueOfLatePositions) {
  int wins = 0;
  for (const ConnectFourPosition& position : LatePositions(24, 16)) {
    SCOPED_TRACE(position.ToString());
    const int value = Solve(position, -1, 1);
    wins += value == 1;
    Result<Search<ConnectFour>> search = Search<ConnectFour>::Create({}, position);
    ASSERT_TRUE(search.ok());
    UniformEvaluator<ConnectFour> evaluator;
    ASSERT_TRUE(search->Run(evaluator, 3000).ok());
    const ConnectFourMove best = search->BestMove();
    EXPECT_EQ(ValueAfter(position, best.column), value) << "played column " << best.column + 1;
    ExpectConsistentTree(*search);
  }
  EXPECT_GT(wins, 0);  // the sample holds positions where a win must be found
}

}  // namespace
}  // namespace az::mcts
