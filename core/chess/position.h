#pragma once

// Position: one chess position as a small trivially copyable value (144 bytes): bitboards per piece
// type and per colour, a square-indexed board, side to move, castling rights, en-passant square,
// clocks and an incrementally updated Zobrist hash. Copy it to keep it; MakeMove changes it in
// place (copy-make: `Position child = parent; child.MakeMove(m);`).
//
// En passant: the stored en-passant square is set only when a legal en-passant capture exists for
// the side to move. FEN input with an en-passant square that no pawn can legally use is accepted
// and the square dropped, and ToFen() writes it only when the capture is legal. The hash follows
// the same rule, so positions that differ only by a useless en-passant square are equal, as the
// threefold-repetition rule requires.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/base/status.h"
#include "core/chess/bitboard.h"
#include "core/chess/types.h"

namespace az::chess {

inline constexpr std::string_view kStartFen =
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

class Position {
 public:
  // The standard start position.
  Position();

  // Parses a FEN string (6 fields; the two clock fields may be left out and default to 0 and 1).
  // Returns InvalidArgument, naming the problem, for: a wrong field count, a placement without 8
  // ranks or with a rank that is not 8 squares, a bad piece letter, a pawn on the first or last
  // rank, not exactly one king per side, piece counts that promotions cannot explain (over 8 pawns
  // or 16 men a side, or more promoted pieces than missing pawns), a side other than 'w'/'b', a
  // castling field that is malformed or claims a right whose king and rook are not on their home
  // squares, a malformed en-passant field or one that does not follow a double pawn push, a clock
  // that is not a number in range, or the side not to move being in check. Never returns a partly
  // built position. Thread-safe.
  static Result<Position> FromFen(std::string_view fen);

  // FEN of this position (en-passant square only when the capture is legal, see above).
  std::string ToFen() const;

  // Pieces.
  Bitboard Pieces(Color c, PieceType pt) const { return by_color_[c] & by_type_[pt]; }
  Bitboard Pieces(PieceType pt) const { return by_type_[pt]; }
  Bitboard Pieces(Color c) const { return by_color_[c]; }
  Bitboard Occupied() const { return by_color_[kWhite] | by_color_[kBlack]; }
  Piece PieceOn(Square s) const { return static_cast<Piece>(board_[s]); }
  Square KingSquare(Color c) const { return Lsb(Pieces(c, kKing)); }

  // State.
  Color SideToMove() const { return static_cast<Color>(side_); }
  CastlingRights Castling() const { return castling_; }
  bool CanCastle(Color c, CastlingSide side) const {
    return (castling_ & CastlingRight(c, side)) != 0;
  }
  // The en-passant target square (the square the capturing pawn moves to), or kNoSquare.
  Square EnPassantSquare() const { return ep_square_; }
  // Plies since the last capture or pawn move (the fifty-move rule counts 100 of them).
  int HalfmoveClock() const { return halfmove_clock_; }
  // Starts at 1 and increases after each Black move.
  int FullmoveNumber() const { return fullmove_number_; }
  // Zobrist hash of placement, side to move, castling rights and the (legal-only) en-passant file.
  std::uint64_t Hash() const { return hash_; }

  // Pieces of the side not to move that attack the side to move's king.
  Bitboard Checkers() const;
  bool InCheck() const { return Checkers() != 0; }
  // Pieces of colour `by` that attack square s, with the board occupied as `occupied`.
  Bitboard AttackersTo(Square s, Color by, Bitboard occupied) const;

  // Plays a legal move of the side to move (one from GenerateLegalMoves for this position).
  // Anything else is a bug and leaves the position unspecified. Updates the hash incrementally.
  void MakeMove(Move m);

  // The hash computed from scratch, for checking the incremental one.
  std::uint64_t ComputeHash() const;

  friend bool operator==(const Position& a, const Position& b);

 private:
  struct EmptyBoard {};
  explicit Position(EmptyBoard) { Clear(); }

  template <Color Us>
  void DoMove(Move m);
  template <Color Us>
  bool EnPassantCaptureLegal(Square ep_square) const;
  void PutPiece(Square s, Piece p);
  void RemovePiece(Square s);
  void MovePiece(Square from, Square to);
  void Clear();

  Bitboard by_type_[kNumPieceTypes];
  Bitboard by_color_[kNumColors];
  std::uint8_t board_[64];  // Piece per square, kNoPiece where empty
  std::uint64_t hash_;
  std::uint8_t side_;
  CastlingRights castling_;
  std::uint8_t ep_square_;
  std::uint8_t unused_ = 0;
  std::uint16_t halfmove_clock_;
  std::uint16_t fullmove_number_;
};
inline void Position::PutPiece(Square s, Piece p) {
  const Bitboard b = SquareBb(s);
  by_type_[TypeOf(p)] |= b;
  by_color_[ColorOf(p)] |= b;
  board_[s] = p;
}

inline void Position::RemovePiece(Square s) {
  const Piece p = PieceOn(s);
  const Bitboard b = SquareBb(s);
  by_type_[TypeOf(p)] ^= b;
  by_color_[ColorOf(p)] ^= b;
  board_[s] = kNoPiece;
}

inline void Position::MovePiece(Square from, Square to) {
  const Piece p = PieceOn(from);
  const Bitboard b = SquareBb(from) | SquareBb(to);
  by_type_[TypeOf(p)] ^= b;
  by_color_[ColorOf(p)] ^= b;
  board_[to] = p;
  board_[from] = kNoPiece;
}

static_assert(std::is_trivially_copyable_v<Position>);
static_assert(sizeof(Position) == 144);

}  // namespace az::chess
