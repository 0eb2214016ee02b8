// Where self-play games start: the opening book (reading, parsing for a game, errors naming the
// file and line) with the shipped chess book checked line by line, and the random opening plies.

#include "services/selfplay/driver/openings.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "core/chess/game.h"
#include "core/games/chess/chess.h"
#include "core/games/connect4/connect_four.h"
#include "core/games/tactics.h"
#include "core/games/tictactoe/tictactoe.h"

namespace az::selfplay {
namespace {

using games::Chess;

const std::string kChessBook = std::string(AZ_SOURCE_DIR) + "/deploy/openings/chess.txt";

TEST(OpeningBookTest, ShippedChessBookIsVariedLegalAndLeavesAGameToPlay) {
  Result<OpeningBook> book = ReadOpeningBook(kChessBook);
  ASSERT_TRUE(book.ok()) << book.status().ToString();
  EXPECT_GE(book->lines.size(), 50u);
  EXPECT_LE(book->lines.size(), 100u);
  Result<std::vector<Chess::State>> states = OpeningPositions<Chess>(*book);
  ASSERT_TRUE(states.ok()) << states.status().ToString();
  ASSERT_EQ(states->size(), book->lines.size());
  std::set<std::string> fens;
  for (std::size_t i = 0; i < states->size(); ++i) {
    const Chess::State& state = (*states)[i];
    SCOPED_TRACE(book->lines[i].text);
    EXPECT_EQ(state.Outcome().result, chess::GameResult::kOngoing);
    EXPECT_GE(state.ply(), 8);
    EXPECT_LE(state.ply(), 16);
    // The position's FEN reads back through the FEN parser as the same position.
    const std::string fen = Chess::PositionText(state);
    Result<chess::Game> reread = chess::Game::FromFen(fen);
    ASSERT_TRUE(reread.ok()) << fen << ": " << reread.status().ToString();
    EXPECT_EQ(reread->position(), state.position());
    fens.insert(fen);
  }
  EXPECT_EQ(fens.size(), states->size()) << "two lines reach the same position";
}

TEST(OpeningBookTest, SkipsCommentsAndBlankLinesAndKeepsLineNumbers) {
  Result<OpeningBook> book = ParseOpeningBook(
      "# a book\n\nstartpos moves e2e4 e7e5  # Open Game\r\n   \n"
      "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n",
      "book.txt");
  ASSERT_TRUE(book.ok()) << book.status().ToString();
  ASSERT_EQ(book->lines.size(), 2u);
  EXPECT_EQ(book->lines[0].line, 3);
  EXPECT_EQ(book->lines[0].text, "startpos moves e2e4 e7e5");
  EXPECT_EQ(book->lines[1].line, 5);
  Result<std::vector<Chess::State>> states = OpeningPositions<Chess>(*book);
  ASSERT_TRUE(states.ok()) << states.status().ToString();
  EXPECT_EQ((*states)[0].position(), (*states)[1].position());
  EXPECT_EQ((*states)[0].ply(), 2);  // the move list keeps the game's history
}

TEST(OpeningBookTest, BadLineIsNamedByFileAndLine) {
  const auto error = [](std::string_view text) {
    Result<OpeningBook> book = ParseOpeningBook(text, "book.txt");
    EXPECT_TRUE(book.ok()) << book.status().ToString();
    Status status = OpeningPositions<Chess>(*book).status();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    return status.message();
  };
  const std::string illegal = error("startpos\n# fine so far\nstartpos moves e2e4 e7e5 e4e5\n");
  EXPECT_EQ(illegal.rfind("book.txt:3: ", 0), 0u) << illegal;
  EXPECT_NE(illegal.find("e4e5"), std::string::npos) << illegal;
  const std::string bad_fen = error("rnbqkbnr/pppppppp/8/8 w KQkq - 0 1\n");
  EXPECT_EQ(bad_fen.rfind("book.txt:1: ", 0), 0u) << bad_fen;
  const std::string over = error("startpos\nstartpos moves f2f3 e7e5 g2g4 d8h4\n");
  EXPECT_EQ(over, "book.txt:2: the game is already over in 'startpos moves f2f3 e7e5 g2g4 d8h4'");

  // The same file for another game: Connect Four's text is columns.
  Result<OpeningBook> columns = ParseOpeningBook("44\n4448\n", "c4.txt");
  ASSERT_TRUE(columns.ok());
  const Status c4 = OpeningPositions<games::ConnectFour>(*columns).status();
  EXPECT_EQ(c4.message().rfind("c4.txt:2: ", 0), 0u) << c4.ToString();
}

TEST(OpeningBookTest, EmptyOrMissingBookIsRefused) {
  const Result<OpeningBook> empty = ParseOpeningBook("# nothing\n\n", "empty.txt");
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("empty.txt"), std::string::npos);
  const Result<OpeningBook> missing = ReadOpeningBook("/nonexistent/book.txt");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/book.txt"), std::string::npos);
}

TEST(RandomOpeningPliesTest, PlaysLegalMovesThatVaryAndNeverEndTheGame) {
  mcts::Rng rng(5);
  std::set<std::string> positions;
  for (int i = 0; i < 20; ++i) {
    Chess::State state = Chess::NewGame(0);
    ASSERT_EQ(PlayRandomPlies<Chess>(state, 6, rng), 6);
    EXPECT_EQ(state.ply(), 6);
    EXPECT_EQ(state.Outcome().result, chess::GameResult::kOngoing);
    positions.insert(Chess::PositionText(state));
  }
  EXPECT_GE(positions.size(), 18u);

  // Tic-tac-toe runs out of moves that do not end the game: it stops early, the game still on.
  for (int i = 0; i < 50; ++i) {
    games::TicTacToe::State state = games::TicTacToe::NewGame(9);
    const int played = PlayRandomPlies<games::TicTacToe>(state, 9, rng);
    EXPECT_LE(played, 8);
    games::TicTacToe::Move moves[games::TicTacToe::kMaxMoves];
    EXPECT_FALSE(games::IsTerminal(
        games::TicTacToe::Outcome(state, games::TicTacToe::LegalMoves(state, moves))));
  }
}

// One random ply, as self-play draws it for a random opening ply it searches and records: the
// position is left as it was, the move is legal and never ends the game, and there is none when
// every move would.
TEST(RandomOpeningPliesTest, OneRandomPlyLeavesThePositionAndNeverEndsTheGame) {
  using games::TicTacToe;
  mcts::Rng rng(3);
  std::set<int> drawn;
  for (int i = 0; i < 40; ++i) {
    TicTacToe::State state = TicTacToe::NewGame(9);
    const std::optional<TicTacToe::Move> move = RandomPly<TicTacToe>(state, rng);
    ASSERT_TRUE(move.has_value());
    EXPECT_EQ(TicTacToe::Ply(state), 0);
    drawn.insert(TicTacToe::PolicyIndex(state, *move));
  }
  EXPECT_GE(drawn.size(), 7u);  // the nine cells, drawn at random
  // Eight stones and no line: the last cell fills the board, so every move ends the game.
  Result<TicTacToe::State> last = TicTacToe::ParsePosition("51283746");
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  const std::string before = TicTacToe::PositionText(*last);
  EXPECT_FALSE(RandomPly<TicTacToe>(*last, rng).has_value());
  EXPECT_EQ(TicTacToe::PositionText(*last), before);
}

// Careful random plies leave the side to move no win at once wherever a careful move existed: in
// Connect Four, where a third of uniformly random openings of 0-24 plies do (a threat left open),
// such positions become rare; the plies still vary and never end the game.
TEST(RandomOpeningPliesTest, CarefulPliesLeaveNoWinAtOnceWhereTheyCan) {
  using games::ConnectFour;
  mcts::Rng rng(11);
  int careless_open = 0;
  int careful_open = 0;
  std::set<std::string> positions;
  constexpr int kGames = 400;
  for (int i = 0; i < kGames; ++i) {
    const int plies = 4 + i % 21;
    ConnectFour::State careless = ConnectFour::NewGame(ConnectFour::kPlay.max_plies);
    PlayRandomPlies<ConnectFour>(careless, plies, rng);
    careless_open += games::WinningMoves<ConnectFour>(careless).empty() ? 0 : 1;

    ConnectFour::State careful = ConnectFour::NewGame(ConnectFour::kPlay.max_plies);
    const int played = PlayRandomPlies<ConnectFour>(careful, plies, rng, /*careful=*/true);
    EXPECT_EQ(played, plies);
    ConnectFour::Move moves[ConnectFour::kMaxMoves];
    EXPECT_FALSE(
        games::IsTerminal(ConnectFour::Outcome(careful, ConnectFour::LegalMoves(careful, moves))));
    careful_open += games::WinningMoves<ConnectFour>(careful).empty() ? 0 : 1;
    positions.insert(ConnectFour::PositionText(careful));
  }
  EXPECT_GT(careless_open, kGames / 6);
  EXPECT_LT(careful_open, kGames / 12);
  EXPECT_GE(positions.size(), static_cast<std::size_t>(kGames * 9 / 10));

  // Chess: each careful ply avoids allowing a mate in one; the plies still vary.
  std::set<std::string> chess_positions;
  for (int i = 0; i < 10; ++i) {
    Chess::State state = Chess::NewGame(0);
    ASSERT_EQ(PlayRandomPlies<Chess>(state, 6, rng, /*careful=*/true), 6);
    EXPECT_TRUE(games::WinningMoves<Chess>(state).empty());
    chess_positions.insert(Chess::PositionText(state));
  }
  EXPECT_GE(chess_positions.size(), 9u);
}

}  // namespace
}  // namespace az::selfplay
