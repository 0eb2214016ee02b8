#include "core/chess/uci.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/chess/movegen.h"
#include "core/chess/position.h"

namespace az::chess {
namespace {

using ::testing::HasSubstr;

TEST(UciTest, EveryLegalMoveRoundTrips) {
  for (const char* fen : {
           "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
           "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
           "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
           "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
       }) {
    const Position p = *Position::FromFen(fen);
    for (Move m : LegalMoves(p)) {
      const Result<Move> parsed = ParseUciMove(p, MoveToUci(m));
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      EXPECT_EQ(*parsed, m) << MoveToUci(m);
    }
  }
}

TEST(UciTest, WritesSpecialMovesInUciForm) {
  EXPECT_EQ(MoveToUci(Move::Normal(kE2, kE4)), "e2e4");
  EXPECT_EQ(MoveToUci(Move::Castling(kE1, kG1)), "e1g1");
  EXPECT_EQ(MoveToUci(Move::Castling(kE8, kC8)), "e8c8");
  EXPECT_EQ(MoveToUci(Move::EnPassant(kE5, kF6)), "e5f6");
  EXPECT_EQ(MoveToUci(Move::Promotion(kA7, kB8, kKnight)), "a7b8n");
  EXPECT_EQ(MoveToUci(Move::Promotion(kH2, kH1, kQueen)), "h2h1q");
  EXPECT_EQ(MoveToUci(Move::Null()), "0000");
}

TEST(UciTest, ParsesCastlingAndEnPassantIntoTheirKinds) {
  const Position castle = *Position::FromFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  EXPECT_EQ(ParseUciMove(castle, "e1g1")->kind(), Move::kCastling);
  EXPECT_EQ(ParseUciMove(castle, "e1c1")->kind(), Move::kCastling);
  const Position ep =
      *Position::FromFen("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3");
  EXPECT_EQ(ParseUciMove(ep, "e5f6")->kind(), Move::kEnPassant);
}

TEST(UciTest, RejectsMalformedAndIllegalMovesWithTheReason) {
  const Position start;
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "expected 4 or 5 characters"},
      {"e2e", "expected 4 or 5 characters"},
      {"e2e4qq", "expected 4 or 5 characters"},
      {"i2e4", "squares must be a1..h8"},
      {"e2e9", "squares must be a1..h8"},
      {"E2E4", "squares must be a1..h8"},
      {"e2e4k", "promotion letter must be one of n, b, r, q"},
      {"e2e5", "not a legal move"},
      {"e1g1", "not a legal move"},
      {"e2e4q", "not a legal move"},  // promotion letter on a non-promotion
      {"0000", "squares must be a1..h8"},
  };
  for (const auto& c : cases) {
    const Result<Move> m = ParseUciMove(start, c.text);
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(m.status().message(), HasSubstr(c.message)) << c.text;
  }
  // A promotion needs its letter.
  const Position promote = *Position::FromFen("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
  EXPECT_FALSE(ParseUciMove(promote, "a7a8").ok());
  EXPECT_TRUE(ParseUciMove(promote, "a7a8q").ok());
}

TEST(UciTest, SquaresRoundTrip) {
  for (Square s = 0; s < 64; ++s) EXPECT_EQ(*ParseSquare(SquareToString(s)), s);
  EXPECT_EQ(SquareToString(kA1), "a1");
  EXPECT_EQ(SquareToString(kH8), "h8");
  EXPECT_FALSE(ParseSquare("a0").ok());
  EXPECT_FALSE(ParseSquare("a10").ok());
}

TEST(MoveTest, EncodesFromToKindAndPromotionInSixteenBits) {
  const Move m = Move::Promotion(kG7, kH8, kRook);
  EXPECT_EQ(m.from(), kG7);
  EXPECT_EQ(m.to(), kH8);
  EXPECT_EQ(m.kind(), Move::kPromotion);
  EXPECT_EQ(m.promotion(), kRook);
  EXPECT_EQ(Move::FromRaw(m.raw()), m);
  EXPECT_EQ(Move::Normal(kE2, kE4).promotion(), kNoPieceType);
  EXPECT_TRUE(Move::Null().is_null());
  EXPECT_TRUE(Move{}.is_null());
}

}  // namespace
}  // namespace az::chess
