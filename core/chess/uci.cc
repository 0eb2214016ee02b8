#include "core/chess/uci.h"

#include <string>

#include "core/chess/movegen.h"

namespace az::chess {

std::string SquareToString(Square s) {
  return {static_cast<char>('a' + FileOf(s)), static_cast<char>('1' + RankOf(s))};
}

Result<Square> ParseSquare(std::string_view text) {
  if (text.size() != 2 || text[0] < 'a' || text[0] > 'h' || text[1] < '1' || text[1] > '8') {
    std::string message = "\"";
    message.append(text);
    message += "\" is not a square (a1..h8)";
    return InvalidArgument(std::move(message));
  }
  return MakeSquare(text[0] - 'a', text[1] - '1');
}

std::string MoveToUci(Move m) {
  if (m.is_null()) return "0000";
  std::string out = SquareToString(m.from()) + SquareToString(m.to());
  if (m.kind() == Move::kPromotion) out += "nbrq"[m.promotion() - kKnight];
  return out;
}

Result<Move> ParseUciMove(const Position& position, std::string_view uci) {
  const auto error = [uci](const std::string& what) {
    return InvalidArgument("bad UCI move \"" + std::string(uci) + "\": " + what);
  };
  if (uci.size() != 4 && uci.size() != 5) return error("expected 4 or 5 characters, e.g. e2e4");
  const Result<Square> from = ParseSquare(uci.substr(0, 2));
  const Result<Square> to = ParseSquare(uci.substr(2, 2));
  if (!from.ok() || !to.ok()) return error("squares must be a1..h8");
  PieceType promotion = kNoPieceType;
  if (uci.size() == 5) {
    switch (uci[4]) {
      case 'n': promotion = kKnight; break;
      case 'b': promotion = kBishop; break;
      case 'r': promotion = kRook; break;
      case 'q': promotion = kQueen; break;
      default: return error("promotion letter must be one of n, b, r, q");
    }
  }
  for (Move m : LegalMoves(position)) {
    if (m.from() == *from && m.to() == *to && m.promotion() == promotion) return m;
  }
  return error("not a legal move in " + position.ToFen());
}

}  // namespace az::chess
