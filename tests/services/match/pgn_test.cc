// SAN and PGN export: each SAN rule (disambiguation, captures, en passant, promotion, castling,
// check and mate) from hand-made positions, a famous game written exactly as published, and the
// PGN layout that other tools rely on (tag order, FEN tags, move numbers, comments, line length).

#include "services/match/pgn.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/chess/position.h"
#include "core/chess/uci.h"

namespace az::match {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

chess::Position FromFen(std::string_view fen) {
  Result<chess::Position> position = chess::Position::FromFen(fen);
  AZ_CHECK(position.ok(), position.status().ToString());
  return *position;
}

// SAN of the UCI move `uci` in the position `fen`.
std::string San(std::string_view fen, std::string_view uci) {
  const chess::Position position = FromFen(fen);
  Result<chess::Move> move = chess::ParseUciMove(position, uci);
  AZ_CHECK(move.ok(), move.status().ToString());
  return MoveToSan(position, *move);
}

// The moves of `ucis` from `fen` (the start position when empty), checked legal.
std::vector<chess::Move> Moves(const std::vector<std::string>& ucis, std::string_view fen = {}) {
  chess::Position position = fen.empty() ? chess::Position() : FromFen(fen);
  std::vector<chess::Move> moves;
  for (const std::string& uci : ucis) {
    Result<chess::Move> move = chess::ParseUciMove(position, uci);
    AZ_CHECK(move.ok(), move.status().ToString());
    moves.push_back(*move);
    position.MakeMove(*move);
  }
  return moves;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(MoveToSanTest, PawnPushHasNoPieceLetter) {
  EXPECT_EQ(San(chess::kStartFen, "e2e4"), "e4");
  EXPECT_EQ(San(chess::kStartFen, "g1f3"), "Nf3");
}

TEST(MoveToSanTest, DisambiguatesByFileFirst) {
  // Knights on b1 and f1 both reach d2.
  EXPECT_EQ(San("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "b1d2"), "Nbd2");
  EXPECT_EQ(San("4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "f1d2"), "Nfd2");
}

TEST(MoveToSanTest, DisambiguatesByRankWhenFilesMatch) {
  // Knights on a1 and a5 both reach b3.
  EXPECT_EQ(San("4k3/8/8/N7/8/8/8/N3K3 w - - 0 1", "a1b3"), "N1b3");
  EXPECT_EQ(San("4k3/8/8/N7/8/8/8/N3K3 w - - 0 1", "a5b3"), "N5b3");
}

TEST(MoveToSanTest, DisambiguatesByFileAndRankWithThreeQueens) {
  // Queens on e4, h4 and h1 all reach e1; h4 shares a file with h1 and a rank with e4.
  constexpr std::string_view kFen = "6k1/8/K7/8/4Q2Q/8/8/7Q w - - 0 1";
  EXPECT_EQ(San(kFen, "h4e1"), "Qh4e1");
  EXPECT_EQ(San(kFen, "e4e1"), "Qee1");
  EXPECT_EQ(San(kFen, "h1e1"), "Q1e1");
}

TEST(MoveToSanTest, NoDisambiguationWhenTheOtherPieceIsPinned) {
  // Knights on c4 and e4 both see d2, but the e4 one is pinned by the rook on e8.
  EXPECT_EQ(San("4r1k1/8/8/8/2N1N3/8/8/4K3 w - - 0 1", "c4d2"), "Nd2");
}

TEST(MoveToSanTest, CastlesBothSides) {
  constexpr std::string_view kFen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
  EXPECT_EQ(San(kFen, "e1g1"), "O-O");
  EXPECT_EQ(San(kFen, "e1c1"), "O-O-O");
  EXPECT_EQ(San("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "e8c8"), "O-O-O");
}

TEST(MoveToSanTest, PromotesWithCaptureAndCheck) {
  constexpr std::string_view kFen = "3r3k/4P3/8/8/8/8/8/K7 w - - 0 1";
  EXPECT_EQ(San(kFen, "e7d8q"), "exd8=Q+");
  EXPECT_EQ(San(kFen, "e7d8n"), "exd8=N");
  EXPECT_EQ(San(kFen, "e7e8r"), "e8=R+");
}

TEST(MoveToSanTest, EnPassantIsAPawnCapture) {
  EXPECT_EQ(San("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "e5f6"), "exf6");
}

TEST(MoveToSanTest, PieceCaptureAndMate) {
  // Scholar's mate.
  constexpr std::string_view kFen =
      "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";
  EXPECT_EQ(San(kFen, "h5f7"), "Qxf7#");
  EXPECT_EQ(San(kFen, "c4f7"), "Bxf7+");
}

TEST(MoveToSanTest, WritesTheOperaGameAsPublished) {
  // Morphy vs Duke Karl / Count Isouard, Paris 1858.
  const std::vector<std::string> ucis = {
      "e2e4", "e7e5", "g1f3", "d7d6", "d2d4", "c8g4", "d4e5", "g4f3", "d1f3", "d6e5", "f1c4",
      "g8f6", "f3b3", "d8e7", "b1c3", "c7c6", "c1g5", "b7b5", "c3b5", "c6b5", "c4b5", "b8d7",
      "e1c1", "a8d8", "d1d7", "d8d7", "h1d1", "e7e6", "b5d7", "f6d7", "b3b8", "d7b8", "d1d8"};
  const std::vector<std::string> expected = {
      "e4",    "e5",  "Nf3",  "d6",   "d4",  "Bg4", "dxe5",  "Bxf3", "Qxf3", "dxe5",  "Bc4",
      "Nf6",   "Qb3", "Qe7",  "Nc3",  "c6",  "Bg5", "b5",    "Nxb5", "cxb5", "Bxb5+", "Nbd7",
      "O-O-O", "Rd8", "Rxd7", "Rxd7", "Rd1", "Qe6", "Bxd7+", "Nxd7", "Qb8+", "Nxb8",  "Rd8#"};
  chess::Position position;
  for (size_t i = 0; i < ucis.size(); ++i) {
    Result<chess::Move> move = chess::ParseUciMove(position, ucis[i]);
    ASSERT_TRUE(move.ok()) << ucis[i];
    EXPECT_EQ(MoveToSan(position, *move), expected[i]) << "ply " << i + 1;
    position.MakeMove(*move);
  }
}

TEST(FormatPgnTest, WritesTheTagRosterInOrderThenMovetextAndResult) {
  PgnGame game;
  game.white = "az-uci";
  game.black = "stockfish";
  game.result = "1-0";
  game.termination = "checkmate";
  game.extra_tags = {{"TimeControl", "10+0.1"}, {"Opening", "Scholar's \"mate\""}};
  game.moves = Moves({"e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"});
  const std::string pgn = FormatPgn(game);
  EXPECT_EQ(pgn,
            "[Event \"az-match\"]\n"
            "[Site \"?\"]\n"
            "[Date \"????.??.??\"]\n"
            "[Round \"?\"]\n"
            "[White \"az-uci\"]\n"
            "[Black \"stockfish\"]\n"
            "[Result \"1-0\"]\n"
            "[Termination \"checkmate\"]\n"
            "[PlyCount \"7\"]\n"
            "[TimeControl \"10+0.1\"]\n"
            "[Opening \"Scholar's \\\"mate\\\"\"]\n"
            "\n"
            "1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n"
            "\n");
}

TEST(FormatPgnTest, EscapesBackslashesInTags) {
  PgnGame game;
  game.white = "C:\\engines\\sf";
  EXPECT_THAT(FormatPgn(game), HasSubstr("[White \"C:\\\\engines\\\\sf\"]\n"));
}

TEST(FormatPgnTest, AnEmptyGameIsJustTheResult) {
  const std::string pgn = FormatPgn(PgnGame{});
  EXPECT_THAT(pgn, HasSubstr("[Result \"*\"]\n[PlyCount \"0\"]\n\n*\n\n"));
  EXPECT_THAT(pgn, Not(HasSubstr("FEN")));
}

TEST(FormatPgnTest, AStartPositionGetsSetUpAndFenAndBlackBeginsWithEllipsis) {
  constexpr std::string_view kFen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 12";
  PgnGame game;
  game.start_fen = kFen;
  game.result = "1/2-1/2";
  game.moves = Moves({"e7e5", "g1f3", "b8c6"}, kFen);
  const std::string pgn = FormatPgn(game);
  EXPECT_THAT(pgn, HasSubstr("[Result \"1/2-1/2\"]\n[SetUp \"1\"]\n[FEN \"" + std::string(kFen) +
                             "\"]\n[PlyCount \"3\"]\n\n"));
  EXPECT_THAT(pgn, HasSubstr("\n12... e5 13. Nf3 Nc6 1/2-1/2\n\n"));
}

TEST(FormatPgnTest, CommentsFollowTheirMoveAndRenumberBlack) {
  PgnGame game;
  game.moves = Moves({"e2e4", "e7e5", "g1f3"});
  game.comments = {"+0.35/12 0.51s", "", "book}"};
  const std::string pgn = FormatPgn(game);
  EXPECT_THAT(pgn, HasSubstr("\n1. e4 {+0.35/12 0.51s} 1... e5 2. Nf3 {book)} *\n"));
}

TEST(FormatPgnTest, LinesStayWithin80CharactersAndEndWithTheResult) {
  PgnGame game;
  game.result = "0-1";
  // Knights shuffle back and forth: a long game of short moves.
  std::vector<std::string> ucis;
  for (int i = 0; i < 20; ++i) {
    for (const char* uci : {"g1f3", "g8f6", "f3g1", "f6g8"}) ucis.push_back(uci);
  }
  game.moves = Moves(ucis);
  game.comments.assign(game.moves.size(), "");
  game.comments[5] =
      "a long comment that has to wrap across lines because it goes on and on "
      "and on for well over eighty characters";
  const std::string pgn = FormatPgn(game);
  const std::vector<std::string> lines = Lines(pgn);
  ASSERT_GE(lines.size(), 3u);
  size_t movetext_lines = 0;
  bool in_movetext = false;
  for (const std::string& line : lines) {
    EXPECT_LE(line.size(), 80u) << line;
    if (in_movetext && !line.empty()) ++movetext_lines;
    if (line.empty()) in_movetext = true;
  }
  EXPECT_GT(movetext_lines, 3u);
  EXPECT_THAT(lines.front(), StartsWith("[Event "));
  EXPECT_EQ(lines.back(), "");
  const std::string& last_movetext = lines[lines.size() - 2];
  EXPECT_EQ(last_movetext.substr(last_movetext.size() - 4), " 0-1");
  EXPECT_THAT(pgn, HasSubstr("[PlyCount \"80\"]"));
  EXPECT_THAT(pgn, HasSubstr(" Ng8 0-1\n\n"));
}

}  // namespace
}  // namespace az::match
