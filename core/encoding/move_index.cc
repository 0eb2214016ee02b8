#include "core/encoding/move_index.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/chess/movegen.h"
#include "core/chess/uci.h"

namespace az::encoding {
namespace {

using chess::Color;
using chess::Move;
using chess::PieceType;
using chess::Square;

// (rank, file) steps, in the order the index formulas in the header give them.
constexpr int kQueenDirections[8][2] = {{1, 0},  {1, 1},   {0, 1},  {-1, 1},
                                        {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
constexpr int kKnightSteps[8][2] = {{2, 1},   {1, 2},   {-1, 2}, {-2, 1},
                                    {-2, -1}, {-1, -2}, {1, -2}, {2, -1}};

constexpr bool OnBoard(int rank, int file) {
  return rank >= 0 && rank < 8 && file >= 0 && file < 8;
}

// Queen-type and knight moves in White's frame: from * 64 + to -> index, -1 where no such move.
// Under-promotions are computed, not tabled: they share from/to with queen-type pawn moves.
struct FromToTable {
  std::array<std::int16_t, 64 * 64> index;
};

constexpr FromToTable MakeFromToTable() {
  FromToTable t{};
  for (auto& v : t.index) v = -1;
  for (int from = 0; from < 64; ++from) {
    const int r = from / 8, f = from % 8;
    for (int dir = 0; dir < 8; ++dir) {
      for (int dist = 1; dist <= 7; ++dist) {
        const int tr = r + kQueenDirections[dir][0] * dist,
                  tf = f + kQueenDirections[dir][1] * dist;
        if (!OnBoard(tr, tf)) break;
        t.index[from * 64 + tr * 8 + tf] =
            static_cast<std::int16_t>(kQueenMovesBase + from * 56 + dir * 7 + (dist - 1));
      }
    }
    for (int k = 0; k < 8; ++k) {
      const int tr = r + kKnightSteps[k][0], tf = f + kKnightSteps[k][1];
      if (!OnBoard(tr, tf)) continue;
      t.index[from * 64 + tr * 8 + tf] = static_cast<std::int16_t>(kKnightMovesBase + from * 8 + k);
    }
  }
  return t;
}
constexpr FromToTable kFromTo = MakeFromToTable();

// The inverse, in White's frame: index -> (from, to, under-promotion piece or kNoPieceType); from
// is -1 where the index steps off the board.
struct Decoded {
  std::int8_t from;
  std::int8_t to;
  std::uint8_t promotion;
};

constexpr std::array<Decoded, kPolicySize> MakeDecodeTable() {
  std::array<Decoded, kPolicySize> t{};
  for (auto& d : t) d = {-1, -1, chess::kNoPieceType};
  for (int from = 0; from < 64; ++from) {
    for (int to = 0; to < 64; ++to) {
      const int index = kFromTo.index[from * 64 + to];
      if (index >= 0) {
        t[index] = {static_cast<std::int8_t>(from), static_cast<std::int8_t>(to),
                    chess::kNoPieceType};
      }
    }
    const int r = from / 8, f = from % 8;
    for (int dir = 0; dir < 3; ++dir) {
      const int tf = f + dir - 1;
      if (!OnBoard(r + 1, tf)) continue;
      for (int piece = 0; piece < 3; ++piece) {
        t[kUnderPromotionsBase + from * 9 + dir * 3 + piece] = {
            static_cast<std::int8_t>(from), static_cast<std::int8_t>((r + 1) * 8 + tf),
            static_cast<std::uint8_t>(chess::kKnight + piece)};
      }
    }
  }
  return t;
}
constexpr std::array<Decoded, kPolicySize> kDecode = MakeDecodeTable();

constexpr int FrameFlip(Color side) { return side == chess::kWhite ? 0 : 56; }

}  // namespace

int MoveToIndex(Color side_to_move, Move move) {
  const int flip = FrameFlip(side_to_move);
  const Square from = move.from() ^ flip;
  const Square to = move.to() ^ flip;
  const PieceType promotion = move.promotion();
  if (promotion == chess::kKnight || promotion == chess::kBishop || promotion == chess::kRook) {
    const int df = chess::FileOf(to) - chess::FileOf(from);
    AZ_CHECK(chess::RankOf(from) == 6 && chess::RankOf(to) == 7 && df >= -1 && df <= 1,
             "MoveToIndex: an under-promotion that is not one step forward");
    return kUnderPromotionsBase + from * 9 + (df + 1) * 3 + (promotion - chess::kKnight);
  }
  const int index = kFromTo.index[from * 64 + to];
  AZ_CHECK(index >= 0, "MoveToIndex: not a queen-type or knight move");
  return index;
}

Result<Move> IndexToMove(const chess::Position& position, int index) {
  if (index < 0 || index >= kPolicySize) {
    return InvalidArgument("policy index " + std::to_string(index) + " is outside [0, " +
                           std::to_string(kPolicySize) + ")");
  }
  const Decoded d = kDecode[index];
  if (d.from < 0) {
    return InvalidArgument("policy index " + std::to_string(index) + " steps off the board");
  }
  const Color us = position.SideToMove();
  const int flip = FrameFlip(us);
  const Square from = d.from ^ flip;
  const Square to = d.to ^ flip;
  const chess::Piece piece = position.PieceOn(from);
  const bool ours = piece != chess::kNoPiece && chess::ColorOf(piece) == us;
  const PieceType type = ours ? chess::TypeOf(piece) : chess::kNoPieceType;

  Move move;
  if (d.promotion != chess::kNoPieceType) {
    move = Move::Promotion(from, to, static_cast<PieceType>(d.promotion));
  } else if (type == chess::kPawn && chess::RankOf(d.to) == 7) {
    move = Move::Promotion(from, to, chess::kQueen);  // queen-type pawn step to the last rank
  } else if (type == chess::kKing && chess::RankOf(from) == chess::RankOf(to) &&
             (chess::FileOf(to) - chess::FileOf(from) == 2 ||
              chess::FileOf(from) - chess::FileOf(to) == 2)) {
    move = Move::Castling(from, to);
  } else if (type == chess::kPawn && to == position.EnPassantSquare() &&
             chess::FileOf(from) != chess::FileOf(to)) {
    move = Move::EnPassant(from, to);
  } else {
    move = Move::Normal(from, to);
  }
  if (!ours || !chess::LegalMoves(position).contains(move)) {
    return InvalidArgument("policy index " + std::to_string(index) + " (" + chess::MoveToUci(move) +
                           ") is not a legal move in " + position.ToFen());
  }
  return move;
}

int MoveIndices(const chess::Position& position, const chess::MoveList& moves,
                std::span<std::uint16_t> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(moves.size()),
           "MoveIndices: the output holds fewer entries than there are moves");
  const Color us = position.SideToMove();
  for (int i = 0; i < moves.size(); ++i) {
    out[i] = static_cast<std::uint16_t>(MoveToIndex(us, moves[i]));
  }
  return moves.size();
}

int LegalMoveMask(const chess::Position& position, std::span<float> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(kPolicySize),
           "LegalMoveMask: the output holds fewer than kPolicySize floats");
  chess::MoveList moves;
  chess::GenerateLegalMoves(position, moves);
  std::fill_n(out.data(), kPolicySize, 0.0f);
  const Color us = position.SideToMove();
  for (const Move m : moves) out[MoveToIndex(us, m)] = 1.0f;
  return moves.size();
}

}  // namespace az::encoding
