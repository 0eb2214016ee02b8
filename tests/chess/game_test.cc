#include "core/chess/game.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/chess/movegen.h"
#include "core/chess/uci.h"

namespace az::chess {
namespace {

Game GameFrom(const std::string& fen, GameOptions options = {}) {
  Result<Game> g = Game::FromFen(fen, options);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? std::move(*g) : Game(options);
}

void PlayAll(Game& game, const std::vector<std::string>& moves) {
  for (const std::string& m : moves) {
    const Status s = game.PlayUci(m);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
}

TEST(GameTest, CheckmateWinsForTheSideThatMated) {
  Game game;
  PlayAll(game, {"f2f3", "e7e5", "g2g4"});
  EXPECT_EQ(game.Outcome(), GameOutcome{});
  PlayAll(game, {"d8h4"});
  EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kBlackWins, EndReason::kCheckmate}));
  EXPECT_TRUE(game.Outcome().is_terminal());
}

TEST(GameTest, StalemateIsADraw) {
  Game game = GameFrom("7k/8/6K1/5Q2/8/8/8/8 w - - 0 1");
  PlayAll(game, {"f5f7"});
  EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kDraw, EndReason::kStalemate}));
}

TEST(GameTest, InsufficientMaterialIsADraw) {
  const GameOutcome draw{GameResult::kDraw, EndReason::kInsufficientMaterial};
  EXPECT_EQ(GameFrom("4k3/8/8/8/8/8/8/4K3 w - - 0 1").Outcome(), draw);               // K v K
  EXPECT_EQ(GameFrom("4k3/8/8/8/8/8/8/4KN2 w - - 0 1").Outcome(), draw);              // K+N v K
  EXPECT_EQ(GameFrom("4k3/8/8/8/8/8/8/4KB2 b - - 0 1").Outcome(), draw);              // K+B v K
  EXPECT_EQ(GameFrom("4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1").Outcome(), draw);            // same colour
  EXPECT_EQ(GameFrom("4k1b1/8/8/8/8/8/8/2B1K3 w - - 0 1").Outcome(), GameOutcome{});  // opposite
  EXPECT_EQ(GameFrom("4k3/8/8/8/8/8/8/3NKN2 w - - 0 1").Outcome(), GameOutcome{});    // K+N+N
  EXPECT_EQ(GameFrom("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").Outcome(), GameOutcome{});    // pawn
  EXPECT_EQ(GameFrom("4k3/8/8/8/8/8/8/4KR2 w - - 0 1").Outcome(), GameOutcome{});     // rook
  // Reached by a capture in play.
  Game game = GameFrom("4k3/8/8/8/8/8/3q4/3NK3 w - - 0 1");
  EXPECT_EQ(game.Outcome(), GameOutcome{});
  PlayAll(game, {"e1d2"});
  EXPECT_EQ(game.Outcome(), draw);
}

TEST(GameTest, ThreefoldRepetitionIsADrawAndCountsAreKeptPerPosition) {
  Game game;
  EXPECT_EQ(game.RepetitionCount(), 1);
  PlayAll(game, {"g1f3", "g8f6", "f3g1", "f6g8"});
  EXPECT_EQ(game.RepetitionCount(), 2);
  EXPECT_EQ(game.RepetitionCount(4), 1);  // the first occurrence
  EXPECT_EQ(game.Outcome(), GameOutcome{});
  PlayAll(game, {"g1f3"});
  EXPECT_EQ(game.RepetitionCount(), 2);
  PlayAll(game, {"g8f6", "f3g1", "f6g8"});
  EXPECT_EQ(game.RepetitionCount(), 3);
  EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kDraw, EndReason::kThreefoldRepetition}));
}

TEST(GameTest, CastlingRightsMakePositionsDifferentForRepetition) {
  Game game;
  PlayAll(game, {"e2e4", "e7e5", "e1e2", "e8e7", "e2e1", "e7e8"});
  // Same placement as after 2...e5 but without castling rights: a new position.
  EXPECT_EQ(game.RepetitionCount(), 1);
  PlayAll(game, {"e1e2", "e8e7", "e2e1", "e7e8"});
  EXPECT_EQ(game.RepetitionCount(), 2);
}

TEST(GameTest, EnPassantSquareCountsForRepetitionOnlyWhenTheCaptureIsLegal) {
  // After e2e4 the pawn on d4 can take en passant: the position differs from the same placement
  // reached later, when the right has lapsed.
  Game legal = GameFrom("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1");
  PlayAll(legal, {"e2e4"});
  EXPECT_EQ(legal.position().EnPassantSquare(), kE3);
  PlayAll(legal, {"e8e7", "e1e2", "e7e8", "e2e1"});
  EXPECT_EQ(legal.RepetitionCount(), 1);
  PlayAll(legal, {"e8e7", "e1e2", "e7e8", "e2e1"});
  EXPECT_EQ(legal.RepetitionCount(), 2);

  // Here the capture would expose the black king on h4 to the rook on a4: the double push leaves
  // no usable en-passant square, so the later position repeats it.
  Game pinned = GameFrom("8/8/8/8/R2p3k/8/4P3/4K3 w - - 0 1");
  PlayAll(pinned, {"e2e4"});
  EXPECT_EQ(pinned.position().EnPassantSquare(), kNoSquare);
  PlayAll(pinned, {"h4h5", "e1e2", "h5h4", "e2e1"});
  EXPECT_EQ(pinned.RepetitionCount(), 2);
}

TEST(GameTest, FiftyMoveRuleDrawsAfterHundredQuietPlies) {
  Game game = GameFrom("4k3/8/8/8/8/8/8/R3K3 w - - 99 80");
  EXPECT_EQ(game.Outcome(), GameOutcome{});
  PlayAll(game, {"a1a2"});
  EXPECT_EQ(game.position().HalfmoveClock(), 100);
  EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kDraw, EndReason::kFiftyMoveRule}));
  // A capture or pawn move resets the clock.
  Game reset = GameFrom("4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80");
  PlayAll(reset, {"e2e3"});
  EXPECT_EQ(reset.position().HalfmoveClock(), 0);
  EXPECT_EQ(reset.Outcome(), GameOutcome{});
}

TEST(GameTest, CheckmateOnTheHundredthPlyIsStillCheckmate) {
  Game game = GameFrom("7k/8/6K1/8/8/8/8/R7 w - - 99 80");
  PlayAll(game, {"a1a8"});
  EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kWhiteWins, EndReason::kCheckmate}));
}

TEST(GameTest, MaxLengthSetByTheCallerEndsTheGameAsADraw) {
  Game game(GameOptions{.max_plies = 4});
  PlayAll(game, {"e2e4", "e7e5", "g1f3"});
  EXPECT_EQ(game.Outcome(), GameOutcome{});
  PlayAll(game, {"b8c6"});
  EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kDraw, EndReason::kMaxLength}));
  // No limit by default.
  Game unlimited;
  PlayAll(unlimited, {"e2e4", "e7e5", "g1f3", "b8c6"});
  EXPECT_EQ(unlimited.Outcome(), GameOutcome{});
}

TEST(GameTest, UndoRestoresPositionHistoryAndCounts) {
  Game game;
  const Position start = game.position();
  PlayAll(game, {"g1f3", "g8f6", "f3g1", "f6g8"});
  ASSERT_EQ(game.ply(), 4);
  EXPECT_TRUE(game.PositionAt(4) == start);
  EXPECT_EQ(MoveToUci(game.moves()[1]), "g8f6");
  game.Undo();
  EXPECT_EQ(game.ply(), 3);
  EXPECT_EQ(game.RepetitionCount(), 1);
  EXPECT_EQ(game.position().PieceOn(kF6), kBlackKnight);
  game.Undo();
  game.Undo();
  game.Undo();
  EXPECT_TRUE(game.position() == start);
  EXPECT_EQ(game.ply(), 0);
}

TEST(GameTest, IllegalUciMoveIsRejectedWithoutChangingTheGame) {
  Game game;
  const Status s = game.PlayUci("e2e5");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(game.ply(), 0);
  EXPECT_FALSE(Game::FromFen("not a fen").ok());
}

TEST(GameTest, OutcomeFromAKnownMoveCountMatches) {
  Game game;
  PlayAll(game, {"f2f3", "e7e5", "g2g4", "d8h4"});
  EXPECT_EQ(game.Outcome(game.LegalMoves().size()), game.Outcome());
}

}  // namespace
}  // namespace az::chess
