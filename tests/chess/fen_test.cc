#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/chess/movegen.h"
#include "core/chess/position.h"
#include "core/chess/uci.h"

namespace az::chess {
namespace {

using ::testing::HasSubstr;

class FenRoundTripTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FenRoundTripTest, ParsesAndWritesBackTheSameText) {
  const Result<Position> position = Position::FromFen(GetParam());
  ASSERT_TRUE(position.ok()) << position.status().ToString();
  EXPECT_EQ(position->ToFen(), GetParam());
  // And the written FEN parses to an equal position with the same hash.
  const Result<Position> again = Position::FromFen(position->ToFen());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *position);
  EXPECT_EQ(again->Hash(), position->Hash());
}

INSTANTIATE_TEST_SUITE_P(
    Positions, FenRoundTripTest,
    ::testing::Values("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                      "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                      "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                      "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
                      "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
                      // Legal en-passant captures keep their square.
                      "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
                      "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1", "4k3/8/8/8/8/8/8/4K2R b K - 99 120",
                      "r3k3/8/8/8/8/8/8/4K3 w q - 0 65535"));

TEST(FenTest, StartPositionIsTheDefault) {
  const Position start;
  EXPECT_EQ(start.ToFen(), kStartFen);
  EXPECT_EQ(start.SideToMove(), kWhite);
  EXPECT_EQ(start.Castling(), kAllCastlingRights);
  EXPECT_EQ(start.EnPassantSquare(), kNoSquare);
  EXPECT_EQ(PopCount(start.Occupied()), 32);
  EXPECT_EQ(start.PieceOn(kE1), kWhiteKing);
  EXPECT_EQ(start.PieceOn(kD8), kBlackQueen);
  EXPECT_EQ(start.Pieces(kBlack, kPawn), kRank7);
}

TEST(FenTest, ClockFieldsMayBeLeftOut) {
  const Result<Position> p = Position::FromFen("4k3/8/8/8/8/8/8/4K3 b - -");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->HalfmoveClock(), 0);
  EXPECT_EQ(p->FullmoveNumber(), 1);
  EXPECT_EQ(p->ToFen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1");
}

TEST(FenTest, EnPassantSquareThatNoPawnCanUseIsDropped) {
  // After 1.e4 no black pawn stands next to e4.
  const Result<Position> p =
      Position::FromFen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->EnPassantSquare(), kNoSquare);
  EXPECT_EQ(p->ToFen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
}

TEST(FenTest, EnPassantSquareDroppedWhenTheCaptureWouldExposeTheKing) {
  // b4xc3 e.p. would open the rank between the king on a4 and the rook on h4.
  const Result<Position> p = Position::FromFen("8/8/8/8/kpP4R/8/8/4K3 b - c3 0 1");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->EnPassantSquare(), kNoSquare);
}

struct MalformedFen {
  const char* name;
  const char* fen;
  const char* message;  // a part of the expected error message
};

void PrintTo(const MalformedFen& c, std::ostream* os) { *os << c.name; }

class MalformedFenTest : public ::testing::TestWithParam<MalformedFen> {};

TEST_P(MalformedFenTest, IsRejectedWithAMessageThatSaysWhatIsWrong) {
  const MalformedFen& c = GetParam();
  const Result<Position> p = Position::FromFen(c.fen);
  ASSERT_FALSE(p.ok()) << "accepted: " << c.fen;
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr(c.message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedFenTest,
    ::testing::Values(
        MalformedFen{"Empty", "", "expected 6 space-separated fields"},
        MalformedFen{"TooFewFields", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq",
                     "found 3"},
        MalformedFen{"TooManyFields", "4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", "found 7"},
        MalformedFen{"SevenRanks", "4k3/8/8/8/8/8/4K3 w - - 0 1", "placement has 7 ranks"},
        MalformedFen{"NineRanks", "4k3/8/8/8/8/8/8/8/4K3 w - - 0 1", "more than 8 ranks"},
        MalformedFen{"RankTooShort", "4k3/8/8/8/7/8/8/4K3 w - - 0 1", "rank 4 has 7 squares"},
        MalformedFen{"RankTooLongByDigits", "4k3/8/8/8/54/8/8/4K3 w - - 0 1",
                     "rank 4 has more than 8 squares"},
        MalformedFen{"RankTooLongByPieces", "4k3/8/8/8/8/8/PPPPPPPPP/4K3 w - - 0 1",
                     "rank 2 has more than 8 squares"},
        MalformedFen{"EmptyRank", "4k3/8//8/8/8/8/4K3 w - - 0 1", "rank 6 has 0 squares"},
        MalformedFen{"BadPieceLetter", "4k3/8/8/8/8/8/8/4K2X w - - 0 1", "bad piece letter 'X'"},
        MalformedFen{"DigitZero", "4k3/8/8/08/8/8/8/4K3 w - - 0 1", "bad piece letter '0'"},
        MalformedFen{"DigitNine", "4k3/8/8/9/8/8/8/4K3 w - - 0 1", "bad piece letter '9'"},
        MalformedFen{"PawnOnLastRank", "P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "pawn on a8"},
        MalformedFen{"PawnOnFirstRank", "4k3/8/8/8/8/8/8/p3K3 w - - 0 1", "pawn on a1"},
        MalformedFen{"MissingWhiteKing", "4k3/8/8/8/8/8/8/8 w - - 0 1", "white has 0 kings"},
        MalformedFen{"MissingBlackKing", "8/8/8/8/8/8/8/4K3 w - - 0 1", "black has 0 kings"},
        MalformedFen{"ExtraKing", "4k3/8/8/8/8/8/8/K3K3 w - - 0 1", "white has 2 kings"},
        MalformedFen{"NinePawns", "4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1",
                     "white has 9 pawns, at most 8"},
        MalformedFen{"SeventeenMen", "4k3/8/8/8/8/N7/PPPPPPPP/RNBQKBNR w - - 0 1",
                     "white has 17 men, at most 16"},
        MalformedFen{"TooManyPromotedPieces", "qqqqqk2/ppppp3/8/8/8/8/8/4K3 w - - 0 1",
                     "black has 4 promoted pieces but only 3 missing pawns"},
        MalformedFen{"BadSide", "4k3/8/8/8/8/8/8/4K3 x - - 0 1", "side to move must be"},
        MalformedFen{"SideUpperCase", "4k3/8/8/8/8/8/8/4K3 W - - 0 1", "side to move must be"},
        MalformedFen{"BadCastlingLetter", "r3k2r/8/8/8/8/8/8/R3K2R w KX - 0 1",
                     "bad castling letter 'X'"},
        MalformedFen{"CastlingLetterTwice", "r3k2r/8/8/8/8/8/8/R3K2R w KK - 0 1",
                     "castling letter 'K' twice"},
        MalformedFen{"CastlingFieldTooLong", "r3k2r/8/8/8/8/8/8/R3K2R w KQkqK - 0 1",
                     "castling field"},
        MalformedFen{"CastlingWithoutRook", "r3k3/8/8/8/8/8/8/R3K3 w K - 0 1",
                     "castling right 'K' needs the white king on e1 and a rook on h1"},
        MalformedFen{"CastlingWithKingAway", "r3k2r/8/8/8/8/8/8/R2K3R w Q - 0 1",
                     "castling right 'Q' needs the white king on e1"},
        MalformedFen{"BadEnPassantSquare", "4k3/8/8/8/8/8/8/4K3 w - z9 0 1",
                     "bad en-passant field"},
        MalformedFen{"EnPassantWrongRank", "4k3/8/8/3pP3/8/8/8/4K3 w - d3 0 1",
                     "must be on rank 6 when white is to move"},
        MalformedFen{"EnPassantWithoutDoublePush", "4k3/8/8/4P3/8/8/8/4K3 w - d6 0 1",
                     "does not follow a double pawn push"},
        MalformedFen{"EnPassantOriginOccupied", "4k3/3n4/8/3pP3/8/8/8/4K3 w - d6 0 1",
                     "does not follow a double pawn push"},
        MalformedFen{"HalfmoveNotANumber", "4k3/8/8/8/8/8/8/4K3 w - - x 1", "halfmove clock"},
        MalformedFen{"HalfmoveNegative", "4k3/8/8/8/8/8/8/4K3 w - - -1 1", "halfmove clock"},
        MalformedFen{"FullmoveZero", "4k3/8/8/8/8/8/8/4K3 w - - 0 0", "fullmove number"},
        MalformedFen{"FullmoveTooLarge", "4k3/8/8/8/8/8/8/4K3 w - - 0 70000", "fullmove number"},
        MalformedFen{"SideNotToMoveInCheck", "4k3/8/8/8/8/8/8/4K2r b - - 0 1",
                     "the side not to move (white) is in check"},
        MalformedFen{"BlackNotToMoveInCheck", "4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1",
                     "the side not to move (black) is in check"}),
    [](const auto& info) { return std::string(info.param.name); });

// Random edits of valid FENs: each result is either rejected with a message, or a position that
// the generator, MakeMove, the hash and ToFen all handle (no crash, no half-built board).
TEST(FenTest, CorruptedFensAreRejectedOrFullyUsable) {
  std::mt19937_64 rng(2024);
  const std::string alphabet = "pnbrqkPNBRQK0123456789/ -wbKQkqacdefgh";
  const std::string bases[] = {
      std::string(kStartFen),
      "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
      "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
      "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
  };
  int accepted = 0;
  int rejected = 0;
  for (const std::string& base : bases) {
    for (int trial = 0; trial < 4000; ++trial) {
      std::string fen = base;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % (fen.size() + 1);
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0:
            if (at < fen.size()) fen[at] = c;
            break;
          case 1: fen.insert(at, 1, c); break;
          default:
            if (at < fen.size()) fen.erase(at, 1);
            break;
        }
      }
      const Result<Position> p = Position::FromFen(fen);
      if (!p.ok()) {
        ++rejected;
        EXPECT_FALSE(p.status().message().empty());
        continue;
      }
      ++accepted;
      ASSERT_EQ(p->Hash(), p->ComputeHash()) << fen;
      const Result<Position> again = Position::FromFen(p->ToFen());
      ASSERT_TRUE(again.ok()) << fen << " -> " << p->ToFen();
      ASSERT_TRUE(*again == *p) << fen;
      for (Move m : LegalMoves(*p)) {
        Position child = *p;
        child.MakeMove(m);
        const Color mover = p->SideToMove();
        ASSERT_EQ(child.AttackersTo(child.KingSquare(mover), ~mover, child.Occupied()), 0u) << fen;
        ASSERT_EQ(child.Hash(), child.ComputeHash()) << fen;
      }
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 100);
}

}  // namespace
}  // namespace az::chess
