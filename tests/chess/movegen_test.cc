#include "core/chess/movegen.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/chess/position.h"
#include "core/chess/uci.h"

namespace az::chess {
namespace {

Position FromFen(const std::string& fen) {
  Result<Position> p = Position::FromFen(fen);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Position();
}

bool HasMove(const Position& p, const std::string& uci) {
  for (Move m : LegalMoves(p)) {
    if (MoveToUci(m) == uci) return true;
  }
  return false;
}

TEST(MovegenTest, DoubleCheckAllowsOnlyKingMoves) {
  // Black king e8 checked by the rook on e1 and the bishop on b5; the knight on d6 could capture
  // the bishop, but that leaves the rook's check.
  const Position p = FromFen("4k3/8/3n4/1B6/8/8/8/4R1K1 b - - 0 1");
  EXPECT_EQ(PopCount(p.Checkers()), 2);
  const MoveList moves = LegalMoves(p);
  ASSERT_FALSE(moves.empty());
  for (Move m : moves) EXPECT_EQ(m.from(), kE8) << MoveToUci(m);
}

TEST(MovegenTest, SingleCheckIsAnsweredByCaptureBlockOrKingMove) {
  // Rook e1 checks e8; the knight on c6 can block on e7 or e5, the bishop on a4 cannot help.
  const Position p = FromFen("4k3/8/2n5/8/b7/8/8/4R1K1 b - - 0 1");
  EXPECT_TRUE(HasMove(p, "c6e7"));
  EXPECT_TRUE(HasMove(p, "c6e5"));
  EXPECT_FALSE(HasMove(p, "c6d4"));
  EXPECT_FALSE(HasMove(p, "a4b3"));
  EXPECT_TRUE(HasMove(p, "e8d7"));
  EXPECT_FALSE(HasMove(p, "e8e7"));  // still on the rook's file
}

TEST(MovegenTest, PinnedPieceMovesOnlyAlongThePin) {
  // The white rook on e4 is pinned by the rook on e8 against the king on e1.
  const Position p = FromFen("4r1k1/8/8/8/4R3/8/8/4K3 w - - 0 1");
  EXPECT_TRUE(HasMove(p, "e4e8"));
  EXPECT_TRUE(HasMove(p, "e4e2"));
  EXPECT_FALSE(HasMove(p, "e4a4"));
  // A pinned knight cannot move at all.
  const Position knight = FromFen("4r1k1/8/8/8/4N3/8/8/4K3 w - - 0 1");
  for (Move m : LegalMoves(knight)) EXPECT_NE(m.from(), kE4) << MoveToUci(m);
}

TEST(MovegenTest, EnPassantThatExposesTheKingAlongTheRankIsNotGenerated) {
  // After ...d7d5 the white pawn on e5 could take on d6, but that clears the fifth rank between the
  // white king on a5 and the black rook on h5.
  Position p = FromFen("8/3p4/8/K3P2r/8/8/8/7k b - - 0 1");
  p.MakeMove(*ParseUciMove(p, "d7d5"));
  EXPECT_EQ(p.EnPassantSquare(), kNoSquare);
  EXPECT_FALSE(HasMove(p, "e5d6"));
  // Without the rook the same capture is legal and the square is kept.
  Position q = FromFen("8/3p4/8/K3P3/8/8/8/7k b - - 0 1");
  q.MakeMove(*ParseUciMove(q, "d7d5"));
  EXPECT_EQ(q.EnPassantSquare(), kD6);
  EXPECT_TRUE(HasMove(q, "e5d6"));
}

TEST(MovegenTest, EnPassantCanCaptureACheckingPawn) {
  // d2d4 checks the king on c5; the pawn on e4 can take it en passant, and so can the king.
  Position p = FromFen("8/8/8/2k5/4p3/8/3P4/7K w - - 0 1");
  p.MakeMove(*ParseUciMove(p, "d2d4"));
  ASSERT_TRUE(p.InCheck());
  EXPECT_TRUE(HasMove(p, "e4d3"));
  EXPECT_TRUE(HasMove(p, "c5d4"));
}

TEST(MovegenTest, CastlingNeitherOutOfNorThroughNorIntoCheck) {
  const std::string base = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
  const Position free = FromFen(base);
  EXPECT_TRUE(HasMove(free, "e1g1"));
  EXPECT_TRUE(HasMove(free, "e1c1"));
  // Out of check: a rook on e8 instead of the king's file being free.
  const Position in_check = FromFen("r3k2r/8/8/8/8/8/4r3/R3K2R w KQkq - 0 1");
  EXPECT_FALSE(HasMove(in_check, "e1g1"));
  EXPECT_FALSE(HasMove(in_check, "e1c1"));
  // Through an attacked square (f1, d1) or into one (g1, c1).
  const Position through = FromFen("r3k2r/8/8/8/8/8/3r1r2/R3K2R w KQkq - 0 1");
  EXPECT_FALSE(HasMove(through, "e1g1"));
  EXPECT_FALSE(HasMove(through, "e1c1"));
  const Position into = FromFen("r3k2r/8/8/8/8/8/2r3r1/R3K2R w KQkq - 0 1");
  EXPECT_FALSE(HasMove(into, "e1g1"));
  EXPECT_FALSE(HasMove(into, "e1c1"));
  // b1 may be attacked on the queen side: only the king's path matters.
  const Position b1 = FromFen("r3k2r/8/8/8/8/8/1r6/R3K2R w KQkq - 0 1");
  EXPECT_TRUE(HasMove(b1, "e1c1"));
  // But it must be empty.
  const Position blocked = FromFen("r3k2r/8/8/8/8/8/8/RN2K2R w KQkq - 0 1");
  EXPECT_FALSE(HasMove(blocked, "e1c1"));
}

TEST(MovegenTest, CastlingMovesBothPiecesAndDropsBothRights) {
  Position p = FromFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  p.MakeMove(*ParseUciMove(p, "e1g1"));
  EXPECT_EQ(p.PieceOn(kG1), kWhiteKing);
  EXPECT_EQ(p.PieceOn(kF1), kWhiteRook);
  EXPECT_EQ(p.PieceOn(kH1), kNoPiece);
  EXPECT_EQ(p.Castling(), kBlackKingSide | kBlackQueenSide);
  p.MakeMove(*ParseUciMove(p, "e8c8"));
  EXPECT_EQ(p.PieceOn(kC8), kBlackKing);
  EXPECT_EQ(p.PieceOn(kD8), kBlackRook);
  EXPECT_EQ(p.PieceOn(kA8), kNoPiece);
  EXPECT_EQ(p.Castling(), 0);
  EXPECT_EQ(p.ToFen(), "2kr3r/8/8/8/8/8/8/R4RK1 w - - 2 2");
}

TEST(MovegenTest, CapturingARookOnItsHomeSquareRemovesThatRight) {
  Position p = FromFen("r3k2r/8/8/8/8/8/6B1/R3K2R w KQkq - 0 1");
  p.MakeMove(*ParseUciMove(p, "g2a8"));
  EXPECT_EQ(p.Castling(), kWhiteKingSide | kWhiteQueenSide | kBlackKingSide);
}

TEST(MovegenTest, AllFourPromotionsIncludingCaptures) {
  const Position p = FromFen("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
  for (const char* m : {"a7a8q", "a7a8r", "a7a8b", "a7a8n", "a7b8q", "a7b8r", "a7b8b", "a7b8n"}) {
    EXPECT_TRUE(HasMove(p, m)) << m;
  }
  int promotions = 0;
  for (Move m : LegalMoves(p)) promotions += m.kind() == Move::kPromotion;
  EXPECT_EQ(promotions, 8);
  Position after = p;
  after.MakeMove(*ParseUciMove(p, "a7b8n"));
  EXPECT_EQ(after.PieceOn(kB8), kWhiteKnight);
  EXPECT_EQ(after.Pieces(kPawn), 0u);
}

TEST(MovegenTest, PositionWithTheMostKnownLegalMovesFitsTheList) {
  // 218 legal moves, the known maximum.
  const Position p = FromFen("R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1");
  EXPECT_EQ(LegalMoves(p).size(), 218);
  EXPECT_EQ(CountLegalMoves(p), 218);
}

TEST(MovegenTest, CheckmateAndStalemateHaveNoMoves) {
  EXPECT_EQ(
      CountLegalMoves(FromFen("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")), 0);
  EXPECT_EQ(CountLegalMoves(FromFen("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")), 0);
}

// Random games from several positions: every generated move is legal (the mover's king is safe
// afterwards), the counting path agrees with the writing path, the incremental hash equals the
// hash from scratch, and FEN round-trips.
TEST(MovegenTest, InvariantsHoldOverRandomGames) {
  std::mt19937_64 rng(12345);
  const char* starts[] = {
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
      "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
      "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
      "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
  };
  int positions_checked = 0;
  for (const char* fen : starts) {
    for (int game = 0; game < 40; ++game) {
      Position p = FromFen(fen);
      for (int ply = 0; ply < 200; ++ply) {
        const MoveList moves = LegalMoves(p);
        ASSERT_EQ(CountLegalMoves(p), moves.size()) << p.ToFen();
        ASSERT_EQ(p.Hash(), p.ComputeHash()) << p.ToFen();
        const Result<Position> reparsed = Position::FromFen(p.ToFen());
        ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
        ASSERT_TRUE(*reparsed == p) << p.ToFen();
        ++positions_checked;
        for (Move m : moves) {
          Position child = p;
          child.MakeMove(m);
          const Color mover = p.SideToMove();
          ASSERT_EQ(child.AttackersTo(child.KingSquare(mover), ~mover, child.Occupied()), 0u)
              << p.ToFen() << " " << MoveToUci(m);
        }
        if (moves.empty()) break;
        p.MakeMove(moves[static_cast<int>(rng() % static_cast<std::uint64_t>(moves.size()))]);
      }
    }
  }
  EXPECT_GT(positions_checked, 5000);
}

}  // namespace
}  // namespace az::chess
