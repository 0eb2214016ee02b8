// Position::FromFen and Position::ToFen.

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

#include "core/chess/position.h"
#include "core/chess/uci.h"

namespace az::chess {
namespace {

constexpr std::string_view kPieceLetters = "PNBRQK";

std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
    if (j > i) fields.push_back(text.substr(i, j - i));
    i = j;
  }
  return fields;
}

// Parses a decimal number in [min, max]; false for anything else (signs, junk, overflow).
bool ParseNumber(std::string_view text, int min, int max, int& out) {
  if (text.empty() || text.size() > 9) return false;
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  if (value < min || value > max) return false;
  out = value;
  return true;
}

char PieceChar(Piece p) {
  const char c = kPieceLetters[TypeOf(p)];
  return ColorOf(p) == kWhite ? c : static_cast<char>(c - 'A' + 'a');
}

}  // namespace

Result<Position> Position::FromFen(std::string_view fen) {
  internal::EnsureTablesInitialized();
  const auto error = [fen](const std::string& what) {
    return InvalidArgument("bad FEN \"" + std::string(fen) + "\": " + what);
  };

  const std::vector<std::string_view> fields = SplitFields(fen);
  if (fields.size() < 4 || fields.size() > 6) {
    return error(
        "expected 6 space-separated fields (placement, side to move, castling, "
        "en passant, halfmove clock, fullmove number), found " +
        std::to_string(fields.size()));
  }

  Position p{EmptyBoard{}};

  // Placement, from rank 8 down to rank 1.
  {
    const std::string_view placement = fields[0];
    int rank = 7;
    int file = 0;
    for (std::size_t i = 0; i <= placement.size(); ++i) {
      const char c = i < placement.size() ? placement[i] : '/';
      const std::string rank_name = "rank " + std::to_string(rank + 1);
      if (c == '/') {
        if (file != 8) {
          return error(rank_name + " has " + std::to_string(file) + " squares, expected 8");
        }
        if (i == placement.size()) break;
        if (--rank < 0) return error("placement has more than 8 ranks");
        file = 0;
      } else if (c >= '1' && c <= '8') {
        file += c - '0';
        if (file > 8) return error(rank_name + " has more than 8 squares");
      } else {
        const std::size_t type = kPieceLetters.find(static_cast<char>(c & ~0x20));
        if (type == std::string_view::npos || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) {
          return error("bad piece letter '" + std::string(1, c) + "' in " + rank_name);
        }
        if (file >= 8) return error(rank_name + " has more than 8 squares");
        const Color color = (c >= 'a') ? kBlack : kWhite;
        p.PutPiece(MakeSquare(file, rank), MakePiece(color, static_cast<PieceType>(type)));
        ++file;
      }
    }
    if (rank != 0) {
      return error("placement has " + std::to_string(8 - rank) + " ranks, expected 8");
    }
  }
  for (Color c : {kWhite, kBlack}) {
    const int kings = PopCount(p.Pieces(c, kKing));
    if (kings != 1) {
      return error(std::string(c == kWhite ? "white" : "black") + " has " + std::to_string(kings) +
                   " kings, expected 1");
    }
  }
  // Piece counts that promotions can explain. Besides rejecting nonsense, this bounds the number of
  // legal moves below MoveList's capacity (see kMaxMoves).
  for (Color c : {kWhite, kBlack}) {
    const std::string side = c == kWhite ? "white" : "black";
    const auto count = [&](PieceType pt) { return PopCount(p.Pieces(c, pt)); };
    const int pawns = count(kPawn);
    const int pieces = PopCount(p.Pieces(c));
    if (pawns > 8) return error(side + " has " + std::to_string(pawns) + " pawns, at most 8");
    if (pieces > 16) return error(side + " has " + std::to_string(pieces) + " men, at most 16");
    const auto extra = [&](PieceType pt, int initial) { return std::max(0, count(pt) - initial); };
    const int promoted = extra(kQueen, 1) + extra(kRook, 2) + extra(kBishop, 2) + extra(kKnight, 2);
    if (promoted > 8 - pawns) {
      return error(side + " has " + std::to_string(promoted) + " promoted pieces but only " +
                   std::to_string(8 - pawns) + " missing pawns");
    }
  }
  if (const Bitboard bad = p.Pieces(kPawn) & (kRank1 | kRank8)) {
    return error("pawn on " + SquareToString(Lsb(bad)) + " (first or last rank)");
  }

  // Side to move.
  if (fields[1] == "w") {
    p.side_ = kWhite;
  } else if (fields[1] == "b") {
    p.side_ = kBlack;
  } else {
    return error("side to move must be 'w' or 'b', not \"" + std::string(fields[1]) + "\"");
  }
  const Color us = p.SideToMove();

  // Castling rights, each checked against the king and rook on their home squares.
  if (fields[2] != "-") {
    if (fields[2].size() > 4) return error("castling field \"" + std::string(fields[2]) + "\"");
    for (const char c : fields[2]) {
      CastlingRights right = 0;
      Color color = kWhite;
      Square rook_square = kNoSquare;
      switch (c) {
        case 'K': right = kWhiteKingSide, color = kWhite, rook_square = kH1; break;
        case 'Q': right = kWhiteQueenSide, color = kWhite, rook_square = kA1; break;
        case 'k': right = kBlackKingSide, color = kBlack, rook_square = kH8; break;
        case 'q': right = kBlackQueenSide, color = kBlack, rook_square = kA8; break;
        default:
          return error("bad castling letter '" + std::string(1, c) +
                       "' (expected '-' or letters from KQkq)");
      }
      if (p.castling_ & right) return error("castling letter '" + std::string(1, c) + "' twice");
      const Square king_square = color == kWhite ? kE1 : kE8;
      if (p.PieceOn(king_square) != MakePiece(color, kKing) ||
          p.PieceOn(rook_square) != MakePiece(color, kRook)) {
        return error("castling right '" + std::string(1, c) + "' needs the " +
                     (color == kWhite ? "white" : "black") + " king on " +
                     SquareToString(king_square) + " and a rook on " + SquareToString(rook_square));
      }
      p.castling_ |= right;
    }
  }

  // En passant: must be the square a double push just passed over.
  if (fields[3] != "-") {
    Result<Square> ep = ParseSquare(fields[3]);
    if (!ep.ok()) return error("bad en-passant field \"" + std::string(fields[3]) + "\"");
    const Square s = *ep;
    const int expected_rank = us == kWhite ? 5 : 2;
    if (RankOf(s) != expected_rank) {
      return error("en-passant square " + SquareToString(s) + " must be on rank " +
                   std::to_string(expected_rank + 1) + " when " +
                   (us == kWhite ? "white" : "black") + " is to move");
    }
    const int up = us == kWhite ? 8 : -8;  // from the capturer's side
    if (p.PieceOn(s) != kNoPiece || p.PieceOn(s + up) != kNoPiece ||
        p.PieceOn(s - up) != MakePiece(~us, kPawn)) {
      return error("en-passant square " + SquareToString(s) +
                   " does not follow a double pawn push");
    }
    const bool legal =
        us == kWhite ? p.EnPassantCaptureLegal<kBlack>(s) : p.EnPassantCaptureLegal<kWhite>(s);
    if (legal) p.ep_square_ = static_cast<std::uint8_t>(s);
  }

  // Clocks.
  int halfmove = 0;
  int fullmove = 1;
  if (fields.size() > 4 && !ParseNumber(fields[4], 0, 65535, halfmove)) {
    return error("halfmove clock \"" + std::string(fields[4]) + "\" is not a number in 0..65535");
  }
  if (fields.size() > 5 && !ParseNumber(fields[5], 1, 65535, fullmove)) {
    return error("fullmove number \"" + std::string(fields[5]) + "\" is not a number in 1..65535");
  }
  p.halfmove_clock_ = static_cast<std::uint16_t>(halfmove);
  p.fullmove_number_ = static_cast<std::uint16_t>(fullmove);

  if (p.AttackersTo(p.KingSquare(~us), us, p.Occupied())) {
    return error(std::string("the side not to move (") + (us == kWhite ? "black" : "white") +
                 ") is in check");
  }

  p.hash_ = p.ComputeHash();
  return p;
}

std::string Position::ToFen() const {
  std::string fen;
  fen.reserve(90);
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const Piece piece = PieceOn(MakeSquare(file, rank));
      if (piece == kNoPiece) {
        ++empty;
        continue;
      }
      if (empty) fen += static_cast<char>('0' + empty);
      empty = 0;
      fen += PieceChar(piece);
    }
    if (empty) fen += static_cast<char>('0' + empty);
    if (rank > 0) fen += '/';
  }
  fen += SideToMove() == kWhite ? " w " : " b ";
  if (castling_ == 0) fen += '-';
  if (castling_ & kWhiteKingSide) fen += 'K';
  if (castling_ & kWhiteQueenSide) fen += 'Q';
  if (castling_ & kBlackKingSide) fen += 'k';
  if (castling_ & kBlackQueenSide) fen += 'q';
  fen += ' ';
  fen += ep_square_ == kNoSquare ? std::string("-") : SquareToString(ep_square_);
  fen += ' ';
  fen += std::to_string(halfmove_clock_);
  fen += ' ';
  fen += std::to_string(fullmove_number_);
  return fen;
}

}  // namespace az::chess
