#pragma once

// The small value types of the chess core: colours, piece types, pieces, squares, castling rights,
// 16-bit moves and a fixed-capacity move list. All are trivially copyable and allocation-free, so
// they can sit in search trees and in records that cross process boundaries.

#include <array>
#include <cstdint>
#include <type_traits>

namespace az::chess {

// One bit per square, bit i = square i (a1 = bit 0, h8 = bit 63).
using Bitboard = std::uint64_t;

enum Color : std::uint8_t { kWhite = 0, kBlack = 1 };
inline constexpr int kNumColors = 2;
constexpr Color operator~(Color c) { return static_cast<Color>(c ^ 1); }

enum PieceType : std::uint8_t { kPawn, kKnight, kBishop, kRook, kQueen, kKing, kNoPieceType };
inline constexpr int kNumPieceTypes = 6;

// A coloured piece: (colour << 3) | type, so ColorOf and TypeOf are a shift and a mask. The values
// 6, 7 and 14, 15 are unused; arrays indexed by Piece have kPieceIndexSize entries.
enum Piece : std::uint8_t {
  kWhitePawn = 0,
  kWhiteKnight,
  kWhiteBishop,
  kWhiteRook,
  kWhiteQueen,
  kWhiteKing,
  kNoPiece = 6,
  kBlackPawn = 8,
  kBlackKnight,
  kBlackBishop,
  kBlackRook,
  kBlackQueen,
  kBlackKing,
};
inline constexpr int kPieceIndexSize = 16;
constexpr Piece MakePiece(Color c, PieceType pt) { return static_cast<Piece>((c << 3) | pt); }
// Both require p != kNoPiece.
constexpr Color ColorOf(Piece p) { return static_cast<Color>(p >> 3); }
constexpr PieceType TypeOf(Piece p) { return static_cast<PieceType>(p & 7); }

// Squares 0..63: a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ..., h8 = 63. kNoSquare (64) means none.
using Square = int;
inline constexpr Square kNoSquare = 64;
constexpr Square MakeSquare(int file, int rank) { return rank * 8 + file; }
constexpr int FileOf(Square s) { return s & 7; }
constexpr int RankOf(Square s) { return s >> 3; }
constexpr bool IsValidSquare(Square s) { return s >= 0 && s < 64; }
// The same square seen from Black's side (a1 <-> a8): rank flipped, file kept.
constexpr Square FlipRank(Square s) { return s ^ 56; }

// clang-format off
enum : int {
  kA1, kB1, kC1, kD1, kE1, kF1, kG1, kH1,
  kA2, kB2, kC2, kD2, kE2, kF2, kG2, kH2,
  kA3, kB3, kC3, kD3, kE3, kF3, kG3, kH3,
  kA4, kB4, kC4, kD4, kE4, kF4, kG4, kH4,
  kA5, kB5, kC5, kD5, kE5, kF5, kG5, kH5,
  kA6, kB6, kC6, kD6, kE6, kF6, kG6, kH6,
  kA7, kB7, kC7, kD7, kE7, kF7, kG7, kH7,
  kA8, kB8, kC8, kD8, kE8, kF8, kG8, kH8,
};
// clang-format on

// Castling rights as a 4-bit set.
using CastlingRights = std::uint8_t;
inline constexpr CastlingRights kWhiteKingSide = 1;
inline constexpr CastlingRights kWhiteQueenSide = 2;
inline constexpr CastlingRights kBlackKingSide = 4;
inline constexpr CastlingRights kBlackQueenSide = 8;
inline constexpr CastlingRights kAllCastlingRights = 15;
enum CastlingSide : std::uint8_t { kKingSide = 0, kQueenSide = 1 };
constexpr CastlingRights CastlingRight(Color c, CastlingSide side) {
  return static_cast<CastlingRights>(1 << (2 * c + side));
}

// A move in 16 bits: from (bits 0-5), to (6-11), promotion piece (12-13: knight, bishop, rook,
// queen) and kind (14-15). Castling is the king's two-square move (e1g1), as in UCI. A
// value-initialised Move (`Move{}` or Move::Null()) is the null move, which is never legal; a
// default-initialised one is indeterminate like an int, so that MoveList needs no clearing.
class Move {
 public:
  enum Kind : std::uint16_t {
    kNormal = 0,
    kPromotion = 1 << 14,
    kEnPassant = 2 << 14,
    kCastling = 3 << 14,
  };

  Move() = default;
  static constexpr Move Null() { return FromRaw(0); }
  static constexpr Move Normal(Square from, Square to) { return Make(from, to, kNormal); }
  static constexpr Move EnPassant(Square from, Square to) { return Make(from, to, kEnPassant); }
  static constexpr Move Castling(Square king_from, Square king_to) {
    return Make(king_from, king_to, kCastling);
  }
  // promotion is kKnight, kBishop, kRook or kQueen.
  static constexpr Move Promotion(Square from, Square to, PieceType promotion) {
    return FromRaw(
        static_cast<std::uint16_t>(from | (to << 6) | ((promotion - kKnight) << 12) | kPromotion));
  }
  // The 16-bit form, for compact records; FromRaw(m.raw()) == m.
  static constexpr Move FromRaw(std::uint16_t raw) {
    Move m;
    m.data_ = raw;
    return m;
  }

  constexpr Square from() const { return data_ & 63; }
  constexpr Square to() const { return (data_ >> 6) & 63; }
  constexpr Kind kind() const { return static_cast<Kind>(data_ & (3 << 14)); }
  // The promotion piece type, or kNoPieceType when this is not a promotion.
  constexpr PieceType promotion() const {
    return kind() == kPromotion ? static_cast<PieceType>(((data_ >> 12) & 3) + kKnight)
                                : kNoPieceType;
  }
  constexpr bool is_null() const { return data_ == 0; }
  constexpr std::uint16_t raw() const { return data_; }

  friend constexpr bool operator==(Move a, Move b) { return a.data_ == b.data_; }

 private:
  static constexpr Move Make(Square from, Square to, Kind kind) {
    return FromRaw(static_cast<std::uint16_t>(from | (to << 6) | kind));
  }
  std::uint16_t data_;
};
static_assert(sizeof(Move) == 2 && std::is_trivially_copyable_v<Move>);

// MoveList capacity. No reachable position is known with more than 218 legal moves; every position
// Position::FromFen accepts has at most 321 (9 queens x 27 + 2 rooks x 14 + 2 bishops x 13 +
// 2 knights x 8 + king 8, the most its piece-count checks allow), so generation never overflows.
inline constexpr int kMaxMoves = 336;

// A fixed-capacity list of moves: no allocation, no clearing on construction.
class MoveList {
 public:
  MoveList() = default;

  int size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Move operator[](int i) const { return moves_[i]; }
  const Move* begin() const { return moves_.data(); }
  const Move* end() const { return moves_.data() + size_; }
  bool contains(Move m) const {
    for (Move x : *this) {
      if (x == m) return true;
    }
    return false;
  }
  void clear() { size_ = 0; }
  // The caller guarantees room (the generator never writes more than kMaxMoves).
  void push_back(Move m) { moves_[size_++] = m; }

  // For the generator: writes go through data(), then set_size().
  Move* data() { return moves_.data(); }
  void set_size(int n) { size_ = n; }

 private:
  std::array<Move, kMaxMoves> moves_;
  int size_ = 0;
};

}  // namespace az::chess
