#pragma once

// Internal to az_chess (movegen.cc, perft.cc): the legal move generator as a template over the side
// to move and a "sink" that either writes moves or only counts them, so the counting path used at
// perft leaves and by CountLegalMoves does popcounts instead of writes.
//
// A sink provides:
//   void Moves(Square from, Bitboard targets);           // normal moves from one square
//   template <int kDelta> void PawnMoves(Bitboard to);   // from = to - kDelta, no promotion
//   template <int kDelta> void Promotions(Bitboard to);  // four promotions per target
//   void PromotionsFrom(Square from, Bitboard targets);  // four promotions per target
//   void Add(Move m);                                    // one special move

#include "core/chess/bitboard.h"
#include "core/chess/position.h"
#include "core/chess/types.h"

namespace az::chess::internal {

class MoveWriter {
 public:
  explicit MoveWriter(Move* out) : begin_(out), cur_(out) {}
  int count() const { return static_cast<int>(cur_ - begin_); }

  void Moves(Square from, Bitboard targets) {
    while (targets) *cur_++ = Move::Normal(from, PopLsb(targets));
  }
  template <int kDelta>
  void PawnMoves(Bitboard targets) {
    while (targets) {
      const Square to = PopLsb(targets);
      *cur_++ = Move::Normal(to - kDelta, to);
    }
  }
  template <int kDelta>
  void Promotions(Bitboard targets) {
    while (targets) {
      const Square to = PopLsb(targets);
      AddPromotions(to - kDelta, to);
    }
  }
  void PromotionsFrom(Square from, Bitboard targets) {
    while (targets) AddPromotions(from, PopLsb(targets));
  }
  void Add(Move m) { *cur_++ = m; }

 private:
  void AddPromotions(Square from, Square to) {
    *cur_++ = Move::Promotion(from, to, kQueen);
    *cur_++ = Move::Promotion(from, to, kKnight);
    *cur_++ = Move::Promotion(from, to, kRook);
    *cur_++ = Move::Promotion(from, to, kBishop);
  }
  Move* begin_;
  Move* cur_;
};

class MoveCounter {
 public:
  int count() const { return count_; }

  void Moves(Square, Bitboard targets) { count_ += PopCount(targets); }
  template <int>
  void PawnMoves(Bitboard targets) {
    count_ += PopCount(targets);
  }
  template <int>
  void Promotions(Bitboard targets) {
    count_ += 4 * PopCount(targets);
  }
  void PromotionsFrom(Square, Bitboard targets) { count_ += 4 * PopCount(targets); }
  void Add(Move) { ++count_; }

 private:
  int count_ = 0;
};

template <Color Us, typename Sink>
inline void GenerateLegal(const Position& pos, Sink& sink) {
  constexpr Color Them = ~Us;
  constexpr int kUp = Us == kWhite ? 8 : -8;
  constexpr int kUpWest = Us == kWhite ? 7 : -9;
  constexpr int kUpEast = Us == kWhite ? 9 : -7;
  constexpr Bitboard kThirdRank = Us == kWhite ? kRank3 : kRank6;
  constexpr Bitboard kLastRank = Us == kWhite ? kRank8 : kRank1;

  const Bitboard us = pos.Pieces(Us);
  const Bitboard them = pos.Pieces(Them);
  const Bitboard occupied = us | them;
  const Square king = pos.KingSquare(Us);
  const Bitboard their_rooks = (pos.Pieces(kRook) | pos.Pieces(kQueen)) & them;
  const Bitboard their_bishops = (pos.Pieces(kBishop) | pos.Pieces(kQueen)) & them;
  const Bitboard their_knights = pos.Pieces(Them, kKnight);
  const Bitboard their_pawns = pos.Pieces(Them, kPawn);

  const Bitboard checkers =
      (PawnAttacks(Us, king) & their_pawns) | (KnightAttacks(king) & their_knights) |
      (RookAttacks(king, occupied) & their_rooks) | (BishopAttacks(king, occupied) & their_bishops);

  // King moves: each target tested with the king lifted off the board, so that it cannot hide
  // behind itself from a slider.
  {
    Bitboard targets = KingAttacks(king) & ~us;
    if (targets) {
      const Bitboard occupied_without_king = occupied ^ SquareBb(king);
      const Bitboard their_king = pos.Pieces(Them, kKing);
      Bitboard safe = 0;
      while (targets) {
        const Square to = PopLsb(targets);
        const bool attacked = (PawnAttacks(Us, to) & their_pawns) ||
                              (KnightAttacks(to) & their_knights) ||
                              (KingAttacks(to) & their_king) ||
                              (BishopAttacks(to, occupied_without_king) & their_bishops) ||
                              (RookAttacks(to, occupied_without_king) & their_rooks);
        if (!attacked) safe |= SquareBb(to);
      }
      sink.Moves(king, safe);
    }
  }
  if (MoreThanOne(checkers)) return;  // double check: only the king can move

  // Squares that resolve a single check (capture the checker or block), else everything.
  const Bitboard check_mask = checkers ? Between(king, Lsb(checkers)) | checkers : ~Bitboard{0};
  const Bitboard target = ~us & check_mask;

  // Pinned pieces: rays from the king through our pieces only, stopping at their first piece.
  Bitboard pinned = 0;
  {
    Bitboard snipers =
        (RookAttacks(king, them) & their_rooks) | (BishopAttacks(king, them) & their_bishops);
    while (snipers) {
      const Bitboard blockers = Between(king, PopLsb(snipers)) & occupied;
      if (blockers && !MoreThanOne(blockers)) pinned |= blockers;
    }
  }
  // A pinned piece can never resolve a check, so in check it has no moves at all.
  const Bitboard movable = checkers ? ~pinned : ~Bitboard{0};

  // Pawns that are not pinned, all at once.
  const Bitboard pawns = pos.Pieces(Us, kPawn);
  const Bitboard empty = ~occupied;
  {
    const Bitboard free_pawns = pawns & ~pinned;
    const Bitboard push1 = Forward<Us>(free_pawns) & empty;
    const Bitboard push2 = Forward<Us>(push1 & kThirdRank) & empty & check_mask;
    const Bitboard push = push1 & check_mask;
    const Bitboard west = ForwardWest<Us>(free_pawns) & them & check_mask;
    const Bitboard east = ForwardEast<Us>(free_pawns) & them & check_mask;
    sink.template PawnMoves<kUp>(push & ~kLastRank);
    sink.template PawnMoves<2 * kUp>(push2);
    sink.template PawnMoves<kUpWest>(west & ~kLastRank);
    sink.template PawnMoves<kUpEast>(east & ~kLastRank);
    if ((push | west | east) & kLastRank) {
      sink.template Promotions<kUp>(push & kLastRank);
      sink.template Promotions<kUpWest>(west & kLastRank);
      sink.template Promotions<kUpEast>(east & kLastRank);
    }
  }
  // Pinned pawns, one by one along their pin line (only when not in check).
  if (!checkers) {
    Bitboard pinned_pawns = pawns & pinned;
    while (pinned_pawns) {
      const Square from = PopLsb(pinned_pawns);
      const Bitboard line = Line(king, from);
      const Bitboard push1 = Forward<Us>(SquareBb(from)) & empty;
      const Bitboard push2 = Forward<Us>(push1 & kThirdRank) & empty;
      const Bitboard targets = ((push1 | push2) | (PawnAttacks(Us, from) & them)) & line;
      sink.Moves(from, targets & ~kLastRank);
      sink.PromotionsFrom(from, targets & kLastRank);
    }
  }
  // En passant: the stored square exists only when some capture is legal, but each capturer is
  // still tested, since removing two pawns from one rank can expose the king to a slider.
  if (const Square ep = pos.EnPassantSquare(); ep != kNoSquare) {
    const Square victim = ep - kUp;
    Bitboard capturers = PawnAttacks(Them, ep) & pawns;
    while (capturers) {
      const Square from = PopLsb(capturers);
      const Bitboard after = occupied ^ SquareBb(from) ^ SquareBb(victim) ^ SquareBb(ep);
      const bool exposed = (RookAttacks(king, after) & their_rooks) ||
                           (BishopAttacks(king, after) & their_bishops) ||
                           (KnightAttacks(king) & their_knights) ||
                           (PawnAttacks(Us, king) & their_pawns & ~SquareBb(victim));
      if (!exposed) sink.Add(Move::EnPassant(from, ep));
    }
  }

  // Knights: a pinned knight can never move.
  {
    Bitboard knights = pos.Pieces(Us, kKnight) & ~pinned;
    while (knights) {
      const Square from = PopLsb(knights);
      sink.Moves(from, KnightAttacks(from) & target);
    }
  }
  // Diagonal sliders (bishops and queens), then straight ones (rooks and queens).
  {
    Bitboard sliders = (pos.Pieces(kBishop) | pos.Pieces(kQueen)) & us & movable;
    while (sliders) {
      const Square from = PopLsb(sliders);
      Bitboard targets = BishopAttacks(from, occupied) & target;
      if (pinned & SquareBb(from)) targets &= Line(king, from);
      sink.Moves(from, targets);
    }
  }
  {
    Bitboard sliders = (pos.Pieces(kRook) | pos.Pieces(kQueen)) & us & movable;
    while (sliders) {
      const Square from = PopLsb(sliders);
      Bitboard targets = RookAttacks(from, occupied) & target;
      if (pinned & SquareBb(from)) targets &= Line(king, from);
      sink.Moves(from, targets);
    }
  }

  // Castling: rights imply king and rook on their home squares; the king must not be in check,
  // and the squares it crosses and lands on must be empty and not attacked.
  if (!checkers &&
      (pos.Castling() & (CastlingRight(Us, kKingSide) | CastlingRight(Us, kQueenSide)))) {
    constexpr Square kKingFrom = Us == kWhite ? kE1 : kE8;
    const auto attacked = [&](Square s) { return pos.AttackersTo(s, Them, occupied) != 0; };
    if (pos.CanCastle(Us, kKingSide) &&
        !(occupied & (SquareBb(kKingFrom + 1) | SquareBb(kKingFrom + 2))) &&
        !attacked(kKingFrom + 1) && !attacked(kKingFrom + 2)) {
      sink.Add(Move::Castling(kKingFrom, kKingFrom + 2));
    }
    if (pos.CanCastle(Us, kQueenSide) &&
        !(occupied &
          (SquareBb(kKingFrom - 1) | SquareBb(kKingFrom - 2) | SquareBb(kKingFrom - 3))) &&
        !attacked(kKingFrom - 1) && !attacked(kKingFrom - 2)) {
      sink.Add(Move::Castling(kKingFrom, kKingFrom - 2));
    }
  }
}

template <typename Sink>
inline void GenerateLegal(const Position& pos, Sink& sink) {
  if (pos.SideToMove() == kWhite) {
    GenerateLegal<kWhite>(pos, sink);
  } else {
    GenerateLegal<kBlack>(pos, sink);
  }
}

}  // namespace az::chess::internal
