// Perft node counts against the published values (chessprogramming wiki "Perft Results", and the
// TalkChess tricky positions by Martin Sedlak), at depths that together run in about a second.

#include "core/chess/perft.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/chess/movegen.h"
#include "core/chess/position.h"

namespace az::chess {
namespace {

struct PerftCase {
  const char* name;
  const char* fen;
  int depth;
  std::uint64_t nodes;
};

void PrintTo(const PerftCase& c, std::ostream* os) { *os << c.name; }

class PerftTest : public ::testing::TestWithParam<PerftCase> {};

TEST_P(PerftTest, MatchesPublishedNodeCount) {
  const PerftCase& c = GetParam();
  const Result<Position> position = Position::FromFen(c.fen);
  ASSERT_TRUE(position.ok()) << position.status().ToString();
  EXPECT_EQ(Perft(*position, c.depth), c.nodes) << c.fen;
}

// The six standard positions of the chessprogramming wiki.
INSTANTIATE_TEST_SUITE_P(
    Standard, PerftTest,
    ::testing::Values(
        PerftCase{"StartPosition", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 5,
                  4865609},
        PerftCase{"Kiwipete",
                  "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 4,
                  4085603},
        PerftCase{"Position3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 674624},
        PerftCase{"Position4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
                  4, 422333},
        PerftCase{"Position4Mirrored",
                  "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 4, 422333},
        PerftCase{"Position5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 4,
                  2103487},
        PerftCase{"Position6",
                  "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 4,
                  3894594}),
    [](const auto& info) { return std::string(info.param.name); });

// Positions built to catch specific rule bugs.
INSTANTIATE_TEST_SUITE_P(
    Tricky, PerftTest,
    ::testing::Values(
        // En passant that would expose the king along the rank (discovered check).
        PerftCase{"IllegalEnPassantAlongRank", "3k4/3p4/8/K1P4r/8/8/8/8 b - - 0 1", 6, 1134888},
        PerftCase{"IllegalEnPassantAlongRankMirrored", "8/8/8/8/k1p4R/8/3P4/3K4 w - - 0 1", 6,
                  1134888},
        PerftCase{"IllegalEnPassantDiagonalPin", "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", 6, 1015133},
        PerftCase{"EnPassantCaptureGivesCheck", "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1", 6, 1440467},
        PerftCase{"ShortCastlingGivesCheck", "5k2/8/8/8/8/8/8/4K2R w K - 0 1", 6, 661072},
        PerftCase{"LongCastlingGivesCheck", "3k4/8/8/8/8/8/8/R3K3 w Q - 0 1", 6, 803711},
        // Castling rights lost when a rook is captured on its home square.
        PerftCase{"CastlingRightsLostByRookCapture", "r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1", 4,
                  1274206},
        PerftCase{"CastlingThroughAttackedSquares", "r3k2r/8/3Q4/8/8/5q2/8/R3K2R b KQkq - 0 1", 4,
                  1720476},
        PerftCase{"PromoteOutOfCheck", "2K2r2/4P3/8/8/8/8/8/3k4 w - - 0 1", 6, 3821001},
        PerftCase{"DiscoveredCheck", "8/8/1P2K3/8/2n5/1q6/8/5k2 b - - 0 1", 5, 1004658},
        PerftCase{"PromoteToGiveCheck", "4k3/1P6/8/8/8/8/K7/8 w - - 0 1", 6, 217342},
        PerftCase{"UnderpromoteToGiveCheck", "8/P1k5/K7/8/8/8/8/8 w - - 0 1", 6, 92683},
        PerftCase{"SelfStalemate", "K1k5/8/P7/8/8/8/8/8 w - - 0 1", 6, 2217},
        PerftCase{"StalemateAndCheckmate", "8/8/2k5/5q2/5n2/8/5K2/8 b - - 0 1", 4, 23527},
        PerftCase{"CastlingRookCapturedByBishop", "1k6/1b6/8/8/7R/8/8/4K2R b K - 0 1", 5, 1063513}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PerftDivideTest, SumsToPerftAndListsEveryLegalRootMove) {
  const Result<Position> kiwipete =
      Position::FromFen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
  ASSERT_TRUE(kiwipete.ok());
  const std::vector<PerftDivideEntry> entries = PerftDivide(*kiwipete, 3);
  const MoveList legal = LegalMoves(*kiwipete);
  ASSERT_EQ(static_cast<int>(entries.size()), legal.size());
  std::uint64_t total = 0;
  for (const PerftDivideEntry& e : entries) {
    EXPECT_TRUE(legal.contains(e.move));
    total += e.nodes;
  }
  EXPECT_EQ(total, Perft(*kiwipete, 3));
  EXPECT_EQ(total, 97862u);
}

TEST(PerftTest, DepthZeroIsOneNodeAndDepthOneIsTheMoveCount) {
  const Position start;
  EXPECT_EQ(Perft(start, 0), 1u);
  EXPECT_EQ(Perft(start, 1), 20u);
  EXPECT_EQ(Perft(start, 1), static_cast<std::uint64_t>(CountLegalMoves(start)));
}

}  // namespace
}  // namespace az::chess
