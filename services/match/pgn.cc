#include "services/match/pgn.h"

#include <string>
#include <string_view>
#include <utility>

#include "core/base/check.h"
#include "core/chess/movegen.h"
#include "core/chess/uci.h"

namespace az::match {
namespace {

using chess::Move;
using chess::Position;

constexpr int kMaxLineLength = 80;

char FileLetter(chess::Square s) { return static_cast<char>('a' + chess::FileOf(s)); }
char RankDigit(chess::Square s) { return static_cast<char>('1' + chess::RankOf(s)); }

char PieceLetter(chess::PieceType type) {
  static constexpr char kLetters[] = {'P', 'N', 'B', 'R', 'Q', 'K'};
  return kLetters[type];
}

std::string EscapeTagValue(std::string_view value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    // A tag is one line.
    escaped += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return escaped;
}

void AppendTag(std::string& out, std::string_view name, std::string_view value) {
  out += '[';
  out += name;
  out += " \"";
  out += EscapeTagValue(value);
  out += "\"]\n";
}

// Collects movetext words into lines of at most kMaxLineLength characters.
class LineWrapper {
 public:
  // Adds `word` (which may hold spaces, as "12. e4") to the current line, or to a new one when it
  // would not fit.
  void Add(std::string_view word) {
    if (word.empty()) return;
    if (!line_.empty() && line_.size() + 1 + word.size() > kMaxLineLength) Flush();
    if (!line_.empty()) line_ += ' ';
    line_ += word;
  }
  // Adds a braced comment word by word, so that a long comment wraps too.
  void AddComment(std::string_view comment) {
    std::string text = "{";
    for (char c : comment) text += (c == '}') ? ')' : (c == '\n' || c == '\r') ? ' ' : c;
    text += '}';
    std::string_view rest = text;
    while (!rest.empty()) {
      const size_t space = rest.find(' ');
      Add(rest.substr(0, space));
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
  }
  std::string Finish() {
    Flush();
    return std::move(text_);
  }

 private:
  void Flush() {
    if (line_.empty()) return;
    text_ += line_;
    text_ += '\n';
    line_.clear();
  }
  std::string text_;
  std::string line_;
};

}  // namespace

std::string MoveToSan(const Position& before, Move move) {
  const chess::MoveList legal = chess::LegalMoves(before);
  AZ_CHECK(legal.contains(move),
           "MoveToSan of an illegal move " + chess::MoveToUci(move) + " in " + before.ToFen());
  const chess::Square from = move.from();
  const chess::Square to = move.to();
  const chess::PieceType type = chess::TypeOf(before.PieceOn(from));
  std::string san;
  if (move.kind() == Move::kCastling) {
    san = chess::FileOf(to) > chess::FileOf(from) ? "O-O" : "O-O-O";
  } else {
    const bool capture = move.kind() == Move::kEnPassant || before.PieceOn(to) != chess::kNoPiece;
    if (type == chess::kPawn) {
      if (capture) san += FileLetter(from);
    } else {
      san += PieceLetter(type);
      // Other pieces of the same type that can reach the same square.
      bool ambiguous = false, same_file = false, same_rank = false;
      for (Move other : legal) {
        if (other.to() != to || other.from() == from ||
            chess::TypeOf(before.PieceOn(other.from())) != type) {
          continue;
        }
        ambiguous = true;
        same_file |= chess::FileOf(other.from()) == chess::FileOf(from);
        same_rank |= chess::RankOf(other.from()) == chess::RankOf(from);
      }
      if (ambiguous) {
        if (!same_file) {
          san += FileLetter(from);
        } else if (!same_rank) {
          san += RankDigit(from);
        } else {
          san += FileLetter(from);
          san += RankDigit(from);
        }
      }
    }
    if (capture) san += 'x';
    san += FileLetter(to);
    san += RankDigit(to);
    if (move.kind() == Move::kPromotion) {
      san += '=';
      san += PieceLetter(move.promotion());
    }
  }
  Position after = before;
  after.MakeMove(move);
  if (after.InCheck()) san += chess::CountLegalMoves(after) == 0 ? '#' : '+';
  return san;
}

std::string FormatPgn(const PgnGame& game) {
  AZ_CHECK(game.comments.empty() || game.comments.size() == game.moves.size(),
           "PgnGame needs no comments or one per move");
  Position position;
  if (!game.start_fen.empty()) {
    Result<Position> start = Position::FromFen(game.start_fen);
    AZ_CHECK(start.ok(), "PgnGame start_fen: " + start.status().ToString());
    position = *start;
  }

  std::string pgn;
  AppendTag(pgn, "Event", game.event);
  AppendTag(pgn, "Site", game.site);
  AppendTag(pgn, "Date", game.date);
  AppendTag(pgn, "Round", game.round);
  AppendTag(pgn, "White", game.white);
  AppendTag(pgn, "Black", game.black);
  AppendTag(pgn, "Result", game.result);
  if (!game.start_fen.empty()) {
    AppendTag(pgn, "SetUp", "1");
    AppendTag(pgn, "FEN", game.start_fen);
  }
  if (!game.termination.empty()) AppendTag(pgn, "Termination", game.termination);
  AppendTag(pgn, "PlyCount", std::to_string(game.moves.size()));
  for (const auto& [name, value] : game.extra_tags) AppendTag(pgn, name, value);
  pgn += '\n';

  LineWrapper movetext;
  // The export format numbers a Black move when it does not directly follow White's move.
  bool black_needs_number = true;
  for (size_t i = 0; i < game.moves.size(); ++i) {
    const Move move = game.moves[i];
    // A move number stays on the line of its move.
    std::string word;
    if (position.SideToMove() == chess::kWhite) {
      word = std::to_string(position.FullmoveNumber()) + ". ";
    } else if (black_needs_number) {
      word = std::to_string(position.FullmoveNumber()) + "... ";
    }
    word += MoveToSan(position, move);
    movetext.Add(word);
    position.MakeMove(move);
    black_needs_number = false;
    if (!game.comments.empty() && !game.comments[i].empty()) {
      movetext.AddComment(game.comments[i]);
      black_needs_number = true;
    }
  }
  movetext.Add(game.result);
  pgn += movetext.Finish();
  pgn += '\n';
  return pgn;
}

}  // namespace az::match
