#include "core/encoding/position_record.h"

#include <algorithm>
#include <string>

#include "core/chess/bitboard.h"
#include "core/chess/uci.h"

namespace az::encoding {
namespace {

using chess::Bitboard;
using chess::Piece;

constexpr bool IsPieceCode(unsigned code) { return (code & 7) < chess::kNumPieceTypes; }

std::string BoardName(int i) {
  return i == 0 ? std::string("the current board") : "board " + std::to_string(i) + " plies ago";
}

Status ValidateBoard(const PackedBoard& board, int i) {
  const int count = chess::PopCount(board.occupied);
  if (count > kMaxRecordPieces) {
    return InvalidArgument(BoardName(i) + " has " + std::to_string(count) + " pieces, at most " +
                           std::to_string(kMaxRecordPieces) + " fit");
  }
  for (int n = 0; n < kMaxRecordPieces; ++n) {
    const unsigned code = (board.pieces[n / 2] >> (4 * (n % 2))) & 15;
    if (n < count && !IsPieceCode(code)) {
      return InvalidArgument(BoardName(i) + ": piece " + std::to_string(n) +
                             " has the invalid code " + std::to_string(code));
    }
    if (n >= count && code != 0) {
      return InvalidArgument(BoardName(i) + ": nibble " + std::to_string(n) +
                             " past its pieces is not zero");
    }
  }
  return Status::Ok();
}

}  // namespace

PackedBoard PackBoard(const chess::Position& position) {
  PackedBoard packed{};
  packed.occupied = position.Occupied();
  AZ_CHECK(chess::PopCount(packed.occupied) <= kMaxRecordPieces,
           "PackBoard: more than 32 pieces, which no chess::Position can hold");
  Bitboard b = packed.occupied;
  for (int n = 0; b != 0; ++n) {
    const unsigned code = position.PieceOn(chess::PopLsb(b));
    packed.pieces[n >> 1] |= static_cast<std::uint8_t>(code << (4 * (n & 1)));
  }
  return packed;
}

PositionRecord MakeRecord(const chess::Position& position) {
  PositionRecord record;
  record.side_to_move = position.SideToMove();
  record.castling = position.Castling();
  record.en_passant = static_cast<std::uint8_t>(position.EnPassantSquare());
  record.halfmove_clock = static_cast<std::uint16_t>(position.HalfmoveClock());
  record.fullmove_number = static_cast<std::uint16_t>(position.FullmoveNumber());
  record.boards[0] = PackBoard(position);
  return record;
}

PositionRecord MakeRecord(const chess::Game& game) {
  PositionRecord record = MakeRecord(game.position());
  const int history = std::min(game.ply(), kHistoryLength);
  record.history_count = static_cast<std::uint8_t>(history);
  for (int t = 0; t <= history; ++t) {
    if (t > 0) record.boards[t] = PackBoard(game.PositionAt(t));
    record.repetitions[t] = static_cast<std::uint8_t>(game.RepetitionCount(t) - 1);
  }
  return record;
}

Status ValidateRecord(const PositionRecord& r) {
  if (r.magic != kRecordMagic) {
    return DataLoss("position record: bad magic " + std::to_string(r.magic) +
                    " (not a position record)");
  }
  if (r.version != kRecordVersion) {
    return InvalidArgument("position record: version " + std::to_string(r.version) +
                           ", this build reads version " + std::to_string(kRecordVersion));
  }
  const auto error = [](const std::string& what) {
    return InvalidArgument("position record: " + what);
  };
  if (r.side_to_move > 1) return error("side to move " + std::to_string(r.side_to_move));
  if (r.castling > chess::kAllCastlingRights) {
    return error("castling rights " + std::to_string(r.castling) + " out of range");
  }
  if (r.en_passant != chess::kNoSquare) {
    const int ep_rank = r.side_to_move == chess::kWhite ? 5 : 2;
    if (r.en_passant > 63 || chess::RankOf(r.en_passant) != ep_rank) {
      return error("en-passant square " + std::to_string(r.en_passant) +
                   " is not on the side to move's sixth rank");
    }
  }
  if (r.history_count > kHistoryLength) {
    return error("history_count " + std::to_string(r.history_count) + " > " +
                 std::to_string(kHistoryLength));
  }
  if (r.fullmove_number == 0) return error("fullmove number 0");
  if (r.reserved != 0) return error("reserved byte is not zero");
  for (int i = 0; i < kRecordBoards; ++i) {
    if (i > r.history_count) {
      const PackedBoard& b = r.boards[i];
      const bool zero = b.occupied == 0 && std::all_of(std::begin(b.pieces), std::end(b.pieces),
                                                       [](std::uint8_t x) { return x == 0; });
      if (!zero || r.repetitions[i] != 0) {
        return error(BoardName(i) + " is past history_count " + std::to_string(r.history_count) +
                     " but not zero");
      }
      continue;
    }
    AZ_RETURN_IF_ERROR(ValidateBoard(r.boards[i], i).WithContext("position record"));
  }
  Piece squares[64];
  UnpackBoard(r.boards[0], squares);
  int kings[2] = {0, 0};
  for (const Piece p : squares) {
    if (p != chess::kNoPiece && chess::TypeOf(p) == chess::kKing) ++kings[chess::ColorOf(p)];
  }
  if (kings[0] != 1 || kings[1] != 1) {
    return error("the current board has " + std::to_string(kings[0]) + " white and " +
                 std::to_string(kings[1]) + " black kings");
  }
  return Status::Ok();
}

void UnpackBoard(const PackedBoard& board, Piece (&squares)[64]) {
  std::fill(std::begin(squares), std::end(squares), chess::kNoPiece);
  Bitboard b = board.occupied;
  for (int n = 0; b != 0 && n < kMaxRecordPieces; ++n) {
    const unsigned code = (board.pieces[n >> 1] >> (4 * (n & 1))) & 15;
    const chess::Square s = chess::PopLsb(b);
    squares[s] = IsPieceCode(code) ? static_cast<Piece>(code) : chess::kNoPiece;
  }
}

std::string RecordToFen(const PositionRecord& record) {
  static constexpr char kLetters[] = "PNBRQK";
  Piece squares[64];
  UnpackBoard(record.boards[0], squares);
  std::string fen;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const Piece p = squares[chess::MakeSquare(file, rank)];
      if (p == chess::kNoPiece) {
        ++empty;
        continue;
      }
      if (empty > 0) fen += static_cast<char>('0' + empty);
      empty = 0;
      const char c = kLetters[chess::TypeOf(p)];
      fen += chess::ColorOf(p) == chess::kWhite ? c : static_cast<char>(c - 'A' + 'a');
    }
    if (empty > 0) fen += static_cast<char>('0' + empty);
    if (rank > 0) fen += '/';
  }
  fen += record.side_to_move == chess::kWhite ? " w " : " b ";
  const std::size_t before = fen.size();
  if (record.castling & chess::kWhiteKingSide) fen += 'K';
  if (record.castling & chess::kWhiteQueenSide) fen += 'Q';
  if (record.castling & chess::kBlackKingSide) fen += 'k';
  if (record.castling & chess::kBlackQueenSide) fen += 'q';
  if (fen.size() == before) fen += '-';
  fen += ' ';
  fen += chess::IsValidSquare(record.en_passant) ? chess::SquareToString(record.en_passant) : "-";
  fen += ' ' + std::to_string(record.halfmove_clock) + ' ' + std::to_string(record.fullmove_number);
  return fen;
}

Result<chess::Position> RecordToPosition(const PositionRecord& record) {
  AZ_RETURN_IF_ERROR(ValidateRecord(record));
  return chess::Position::FromFen(RecordToFen(record));
}

}  // namespace az::encoding
