#include "core/chess/position.h"

#include <cstring>

#include "core/chess/zobrist.h"

namespace az::chess {
namespace {

// Rights that survive a move touching the square (as from or to square): moving the king or a
// rook, or capturing a rook on its home square, removes the matching rights.
constexpr std::array<CastlingRights, 64> MakeCastlingMasks() {
  std::array<CastlingRights, 64> masks{};
  for (auto& m : masks) m = kAllCastlingRights;
  masks[kE1] = kAllCastlingRights & ~(kWhiteKingSide | kWhiteQueenSide);
  masks[kH1] = kAllCastlingRights & ~kWhiteKingSide;
  masks[kA1] = kAllCastlingRights & ~kWhiteQueenSide;
  masks[kE8] = kAllCastlingRights & ~(kBlackKingSide | kBlackQueenSide);
  masks[kH8] = kAllCastlingRights & ~kBlackKingSide;
  masks[kA8] = kAllCastlingRights & ~kBlackQueenSide;
  return masks;
}
constexpr std::array<CastlingRights, 64> kCastlingMasks = MakeCastlingMasks();

const Position& StartPosition() {
  static const Position start = [] {
    Result<Position> p = Position::FromFen(kStartFen);
    AZ_CHECK(p.ok(), p.status().ToString());
    return *p;
  }();
  return start;
}

}  // namespace

Position::Position() { *this = StartPosition(); }

void Position::Clear() {
  std::memset(by_type_, 0, sizeof(by_type_));
  std::memset(by_color_, 0, sizeof(by_color_));
  std::memset(board_, kNoPiece, sizeof(board_));
  hash_ = 0;
  side_ = kWhite;
  castling_ = 0;
  ep_square_ = kNoSquare;
  unused_ = 0;
  halfmove_clock_ = 0;
  fullmove_number_ = 1;
}

Bitboard Position::AttackersTo(Square s, Color by, Bitboard occupied) const {
  const Bitboard rooks = by_type_[kRook] | by_type_[kQueen];
  const Bitboard bishops = by_type_[kBishop] | by_type_[kQueen];
  return by_color_[by] &
         ((PawnAttacks(~by, s) & by_type_[kPawn]) | (KnightAttacks(s) & by_type_[kKnight]) |
          (KingAttacks(s) & by_type_[kKing]) | (RookAttacks(s, occupied) & rooks) |
          (BishopAttacks(s, occupied) & bishops));
}

Bitboard Position::Checkers() const {
  const Color us = SideToMove();
  return AttackersTo(KingSquare(us), ~us, Occupied());
}

// Whether Them (the side to move after Us's double push, or in a FEN) has a legal en-passant
// capture onto ep_square. The pawn being captured stands one square behind ep_square from the
// capturer's view. Rare, so a full "is the king attacked afterwards" test for each capturer.
template <Color Us>
bool Position::EnPassantCaptureLegal(Square ep_square) const {
  constexpr Color Them = ~Us;
  const Square victim = Us == kWhite ? ep_square + 8 : ep_square - 8;
  Bitboard capturers = PawnAttacks(Us, ep_square) & Pieces(Them, kPawn);
  const Square king = KingSquare(Them);
  const Bitboard rooks = (by_type_[kRook] | by_type_[kQueen]) & by_color_[Us];
  const Bitboard bishops = (by_type_[kBishop] | by_type_[kQueen]) & by_color_[Us];
  const Bitboard others = ((PawnAttacks(Them, king) & by_type_[kPawn] & ~SquareBb(victim)) |
                           (KnightAttacks(king) & by_type_[kKnight])) &
                          by_color_[Us];
  if (others) return false;
  while (capturers) {
    const Square from = PopLsb(capturers);
    const Bitboard occupied = Occupied() ^ SquareBb(from) ^ SquareBb(victim) ^ SquareBb(ep_square);
    if (!(RookAttacks(king, occupied) & rooks) && !(BishopAttacks(king, occupied) & bishops)) {
      return true;
    }
  }
  return false;
}
template bool Position::EnPassantCaptureLegal<kWhite>(Square) const;
template bool Position::EnPassantCaptureLegal<kBlack>(Square) const;

template <Color Us>
inline void Position::DoMove(Move m) {
  constexpr Color Them = ~Us;
  constexpr int kUp = Us == kWhite ? 8 : -8;
  const Square from = m.from();
  const Square to = m.to();
  const Piece piece = PieceOn(from);
  std::uint64_t h = hash_ ^ zobrist::BlackToMove();
  if (ep_square_ != kNoSquare) {
    h ^= zobrist::EnPassantFile(FileOf(ep_square_));
    ep_square_ = kNoSquare;
  }
  const CastlingRights rights = castling_ & kCastlingMasks[from] & kCastlingMasks[to];
  if (rights != castling_) {
    h ^= zobrist::Castling(castling_) ^ zobrist::Castling(rights);
    castling_ = rights;
  }
  ++halfmove_clock_;

  switch (m.kind()) {
    case Move::kNormal:
    case Move::kPromotion: {
      const Piece captured = PieceOn(to);
      if (captured != kNoPiece) {
        RemovePiece(to);
        h ^= zobrist::PieceSquare(captured, to);
        halfmove_clock_ = 0;
      }
      MovePiece(from, to);
      h ^= zobrist::PieceSquare(piece, from) ^ zobrist::PieceSquare(piece, to);
      if (TypeOf(piece) == kPawn) {
        halfmove_clock_ = 0;
        if (m.kind() == Move::kPromotion) {
          const Piece promoted = MakePiece(Us, m.promotion());
          RemovePiece(to);
          PutPiece(to, promoted);
          h ^= zobrist::PieceSquare(piece, to) ^ zobrist::PieceSquare(promoted, to);
        } else if (to - from == 2 * kUp) {
          const Square ep = from + kUp;
          // Only a capture that is actually legal sets the square (see position.h).
          if ((PawnAttacks(Us, ep) & Pieces(Them, kPawn)) && EnPassantCaptureLegal<Us>(ep)) {
            ep_square_ = static_cast<std::uint8_t>(ep);
            h ^= zobrist::EnPassantFile(FileOf(ep));
          }
        }
      }
      break;
    }
    case Move::kEnPassant: {
      const Square victim = to - kUp;
      const Piece their_pawn = MakePiece(Them, kPawn);
      RemovePiece(victim);
      MovePiece(from, to);
      h ^= zobrist::PieceSquare(their_pawn, victim) ^ zobrist::PieceSquare(piece, from) ^
           zobrist::PieceSquare(piece, to);
      halfmove_clock_ = 0;
      break;
    }
    case Move::kCastling: {
      const bool king_side = to > from;
      const Square rook_from = king_side ? from + 3 : from - 4;
      const Square rook_to = king_side ? from + 1 : from - 1;
      const Piece rook = MakePiece(Us, kRook);
      MovePiece(from, to);
      MovePiece(rook_from, rook_to);
      h ^= zobrist::PieceSquare(piece, from) ^ zobrist::PieceSquare(piece, to) ^
           zobrist::PieceSquare(rook, rook_from) ^ zobrist::PieceSquare(rook, rook_to);
      break;
    }
  }
  side_ = Them;
  if (Us == kBlack) ++fullmove_number_;
  hash_ = h;
}

void Position::MakeMove(Move m) {
  if (side_ == kWhite) {
    DoMove<kWhite>(m);
  } else {
    DoMove<kBlack>(m);
  }
}

std::uint64_t Position::ComputeHash() const {
  std::uint64_t h = 0;
  for (Square s = 0; s < 64; ++s) {
    if (PieceOn(s) != kNoPiece) h ^= zobrist::PieceSquare(PieceOn(s), s);
  }
  if (side_ == kBlack) h ^= zobrist::BlackToMove();
  h ^= zobrist::Castling(castling_);
  if (ep_square_ != kNoSquare) h ^= zobrist::EnPassantFile(FileOf(ep_square_));
  return h;
}

bool operator==(const Position& a, const Position& b) {
  return std::memcmp(a.board_, b.board_, sizeof(a.board_)) == 0 && a.side_ == b.side_ &&
         a.castling_ == b.castling_ && a.ep_square_ == b.ep_square_ &&
         a.halfmove_clock_ == b.halfmove_clock_ && a.fullmove_number_ == b.fullmove_number_ &&
         a.hash_ == b.hash_;
}

}  // namespace az::chess
