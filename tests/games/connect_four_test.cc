#include "core/games/connect4/connect_four.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <utility>
#include <vector>

#include "core/games/connect4/connect_four_encoder.h"

namespace az::games {
namespace {

using Position = ConnectFourPosition;

Position Play(std::string_view moves) {
  Result<Position> position = Position::FromMoves(moves);
  EXPECT_TRUE(position.ok()) << position.status().ToString();
  return position.ok() ? *position : Position();
}

std::uint64_t Bits(std::initializer_list<int> bits) {
  std::uint64_t result = 0;
  for (int bit : bits) result |= 1ull << bit;
  return result;
}

int LegalCount(const Position& position) {
  ConnectFourMove moves[ConnectFour::kMaxMoves];
  return ConnectFour::LegalMoves(position, moves);
}

TEST(ConnectFourTest, EmptyBoardHasSevenMovesAndIsOngoing) {
  Position position;
  ConnectFourMove moves[ConnectFour::kMaxMoves];
  ASSERT_EQ(ConnectFour::LegalMoves(position, moves), 7);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(moves[i].column, i);
  EXPECT_EQ(ConnectFour::Outcome(position, 7), GameOutcome::kOngoing);
  EXPECT_EQ(position.side_to_move(), 0);
}

TEST(ConnectFourTest, FourInEachDirectionIsALossForTheSideToMove) {
  // X plays the odd moves. Vertical in column 1, horizontal on the bottom row, and both diagonals.
  for (const char* moves : {"1212121", "1122334", "12233434544", "76655454344"}) {
    SCOPED_TRACE(moves);
    const Position position = Play(moves);
    EXPECT_TRUE(position.LastMoverWon());
    EXPECT_EQ(ConnectFour::Outcome(position, LegalCount(position)), GameOutcome::kLoss);
    // One move earlier, nobody has won yet.
    const Position before =
        Play(std::string_view(moves).substr(0, std::string_view(moves).size() - 1));
    EXPECT_FALSE(before.LastMoverWon());
    EXPECT_TRUE(before.IsWinningMove(moves[std::string_view(moves).size() - 1] - '1'));
  }
}

TEST(ConnectFourTest, LinesDoNotWrapAcrossColumns) {
  // Column 0 rows 3..5 and column 1 row 0 are consecutive bits but not a line: the sentinel bit 6
  // breaks the vertical run.
  EXPECT_FALSE(Position::HasFour(Bits({3, 4, 5, 7})));
  EXPECT_FALSE(Position::HasFour(Bits({4, 5, 7, 8})));
  EXPECT_TRUE(Position::HasFour(Bits({2, 3, 4, 5})));
  // A diagonal down and to the right from the top-left corner.
  EXPECT_TRUE(Position::HasFour(Bits({5, 11, 17, 23})));
  // Three in a row is not four.
  EXPECT_FALSE(Position::HasFour(Bits({0, 7, 14})));
}

TEST(ConnectFourTest, FullBoardWithoutFourIsADraw) {
  // Play games where both sides avoid completing four whenever they can, until one fills the board.
  std::uint64_t seed = 12345;
  bool found = false;
  for (int game = 0; game < 200 && !found; ++game) {
    Position position;
    while (!position.LastMoverWon() && !position.BoardFull()) {
      std::vector<int> quiet;
      std::vector<int> all;
      for (int column = 0; column < 7; ++column) {
        if (!position.CanPlay(column)) continue;
        all.push_back(column);
        if (!position.IsWinningMove(column)) quiet.push_back(column);
      }
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      const std::vector<int>& choice = quiet.empty() ? all : quiet;
      position.Play(choice[(seed >> 33) % choice.size()]);
    }
    if (position.LastMoverWon()) continue;
    found = true;
    EXPECT_EQ(LegalCount(position), 0);
    EXPECT_EQ(ConnectFour::Outcome(position, 0), GameOutcome::kDraw);
    EXPECT_EQ(OutcomeValue(GameOutcome::kDraw), 0.0f);
  }
  EXPECT_TRUE(found) << "no drawn game in 200 tries";
}

TEST(ConnectFourTest, FullColumnIsNotLegal) {
  const Position position = Play("444444");
  EXPECT_FALSE(position.CanPlay(3));
  ConnectFourMove moves[ConnectFour::kMaxMoves];
  ASSERT_EQ(ConnectFour::LegalMoves(position, moves), 6);
  for (int i = 0; i < 6; ++i) EXPECT_NE(moves[i].column, 3);
}

TEST(ConnectFourTest, UndoRestoresEveryEarlierPosition) {
  const std::string_view moves = "4453726111222";
  std::vector<Position> history = {Position()};
  Position position;
  for (char c : moves) {
    position.Play(c - '1');
    history.push_back(position);
  }
  for (std::size_t i = moves.size(); i-- > 0;) {
    ConnectFour::Undo(position, ConnectFourMove{static_cast<std::uint8_t>(moves[i] - '1')});
    EXPECT_EQ(position, history[i]) << "after taking back move " << i + 1;
  }
}

TEST(ConnectFourTest, FromMovesRejectsBadInput) {
  EXPECT_EQ(Position::FromMoves("8").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Position::FromMoves("0").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Position::FromMoves("4a").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Position::FromMoves("1111111").status().code(), StatusCode::kInvalidArgument);
  // X wins with its fourth stone in column 1 at move 7; an eighth move is refused.
  EXPECT_TRUE(Position::FromMoves("1212121").ok());
  const Result<Position> after_win = Position::FromMoves("12121212");
  ASSERT_FALSE(after_win.ok());
  EXPECT_NE(after_win.status().message().find("move 8"), std::string::npos);
}

TEST(ConnectFourTest, StonesAndTextShowWhoPlayedWhere) {
  const Position position = Play("4453");
  EXPECT_EQ(position.StoneAt(0, 3), 0);
  EXPECT_EQ(position.StoneAt(1, 3), 1);
  EXPECT_EQ(position.StoneAt(0, 4), 0);
  EXPECT_EQ(position.StoneAt(0, 2), 1);
  EXPECT_EQ(position.StoneAt(0, 0), -1);
  EXPECT_EQ(position.ToString(),
            ".......\n"
            ".......\n"
            ".......\n"
            ".......\n"
            "...O...\n"
            "..OXX..\n");
}

TEST(ConnectFourTest, RecordRoundTripsEveryPositionOfAGame) {
  Position position;
  for (char c : std::string_view("44443322115566771")) {
    const Result<Position> copy = Position::FromRecord(position.ToRecord());
    ASSERT_TRUE(copy.ok()) << copy.status().ToString();
    EXPECT_EQ(*copy, position);
    position.Play(c - '1');
  }
}

TEST(ConnectFourTest, FromRecordRejectsUnreachablePositions) {
  // A stone on the sentinel row, two stones on one cell, a floating stone, counts that do not
  // alternate (the side to move may have as many stones as the opponent, or one fewer).
  EXPECT_FALSE(Position::FromRecord({Bits({6}), 0}).ok());
  EXPECT_FALSE(Position::FromRecord({Bits({0}), Bits({0, 7})}).ok());
  EXPECT_FALSE(Position::FromRecord({Bits({1}), Bits({7})}).ok());
  EXPECT_FALSE(Position::FromRecord({Bits({0, 7}), 0}).ok());
  EXPECT_FALSE(Position::FromRecord({0, Bits({0, 7})}).ok());
  EXPECT_TRUE(Position::FromRecord({0, Bits({0})}).ok());
  EXPECT_TRUE(Position::FromRecord({Bits({0}), Bits({1})}).ok());
}

TEST(ConnectFourTest, GameTraitsPackAndIndexMovesByColumn) {
  const Position position = Play("44");
  for (std::uint8_t column = 0; column < 7; ++column) {
    const ConnectFourMove move{column};
    EXPECT_EQ(ConnectFour::PolicyIndex(position, move), column);
    EXPECT_EQ(ConnectFour::UnpackMove(position, ConnectFour::PackMove(move)), move);
  }
  Position applied = position;
  ConnectFour::Apply(applied, ConnectFourMove{2});
  EXPECT_EQ(applied, Play("443"));
}

TEST(ConnectFourEncoderTest, PlanesAreFromTheSideToMovesView) {
  // After "4453" X (first player) is to move: X has (0,3) and (0,4); O has (1,3) and (0,2).
  const Position position = Play("4453");
  std::array<float, kConnectFourInputSize> planes;
  planes.fill(-1.0f);
  EncodeConnectFour(position.ToRecord(), planes);
  const auto at = [&](int plane, int row, int column) {
    return planes[plane * kConnectFourCells + row * kConnectFourWidth + column];
  };
  float own = 0, opponent = 0;
  for (int row = 0; row < 6; ++row) {
    for (int column = 0; column < 7; ++column) {
      own += at(0, row, column);
      opponent += at(1, row, column);
      EXPECT_EQ(at(2, row, column), 1.0f);
    }
  }
  EXPECT_EQ(own, 2.0f);
  EXPECT_EQ(opponent, 2.0f);
  EXPECT_EQ(at(0, 0, 3), 1.0f);
  EXPECT_EQ(at(0, 0, 4), 1.0f);
  EXPECT_EQ(at(1, 1, 3), 1.0f);
  EXPECT_EQ(at(1, 0, 2), 1.0f);

  // One move later O is to move, and the planes swap.
  Position next = position;
  next.Play(0);
  EncodeConnectFour(next.ToRecord(), planes);
  EXPECT_EQ(at(0, 1, 3), 1.0f);
  EXPECT_EQ(at(1, 0, 3), 1.0f);
  EXPECT_EQ(at(1, 0, 0), 1.0f);
}

// The cells of one plane that are 1, as (row, column) pairs; every other cell must be exactly 0.
std::vector<std::pair<int, int>> CellsOf(std::span<const float> planes, int plane) {
  std::vector<std::pair<int, int>> cells;
  for (int row = 0; row < 6; ++row) {
    for (int column = 0; column < 7; ++column) {
      const float v = planes[plane * kConnectFourCells + row * kConnectFourWidth + column];
      EXPECT_TRUE(v == 0.0f || v == 1.0f);
      if (v == 1.0f) cells.emplace_back(row, column);
    }
  }
  return cells;
}

TEST(ConnectFourEncoderTest, ThreatPlanesMarkWhereEachSideWouldConnectFour) {
  using Cells = std::vector<std::pair<int, int>>;
  std::array<float, kConnectFourInputSize> planes;
  // "44556": X has three in a row on the bottom (columns 4-6 in 1-based digits), O two above it;
  // O is to move, the second player.
  EncodeConnectFour(Play("44556").ToRecord(), planes);
  EXPECT_EQ(
      CellsOf(planes, 3),
      (Cells{{0, 0}, {0, 1}, {0, 2}, {0, 6}, {1, 5}, {2, 3}, {2, 4}}));  // where a stone lands
  EXPECT_EQ(CellsOf(planes, 4), Cells{});                                // O cannot win
  EXPECT_EQ(CellsOf(planes, 5), (Cells{{0, 2}, {0, 6}}));                // X wins on either end
  EXPECT_EQ(CellsOf(planes, 6), Cells{});  // the side to move is not the first player

  // O blocks on the left; X to move (the first player) still wins on the right.
  EncodeConnectFour(Play("445563").ToRecord(), planes);
  EXPECT_EQ(CellsOf(planes, 4), (Cells{{0, 6}}));
  EXPECT_EQ(CellsOf(planes, 5), Cells{});
  EXPECT_EQ(CellsOf(planes, 6).size(), 42u);

  // A threat above an empty cell is marked though no stone can land there yet: X's diagonal
  // (0,0) (1,1) (2,2) wants (3,3), and column 4 (0-based 3) holds one stone.
  EncodeConnectFour(Play("1223433").ToRecord(), planes);
  const Cells opponent = CellsOf(planes, 5);
  EXPECT_NE(std::find(opponent.begin(), opponent.end(), std::pair{3, 3}), opponent.end());
  const Cells playable = CellsOf(planes, 3);
  EXPECT_EQ(std::find(playable.begin(), playable.end(), std::pair{3, 3}), playable.end());
}

}  // namespace
}  // namespace az::games
