#include "core/encoding/planes.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "core/chess/bitboard.h"

namespace az::encoding {
namespace {

// kChannelOf[side to move][piece code]: the piece plane (0-11) of that piece from that side's
// perspective, or -1 for the unused codes 6, 7, 14, 15.
constexpr std::array<std::array<std::int8_t, 16>, 2> MakeChannelTable() {
  std::array<std::array<std::int8_t, 16>, 2> t{};
  for (int us = 0; us < 2; ++us) {
    for (int code = 0; code < 16; ++code) {
      const int type = code & 7;
      const int color = code >> 3;
      t[us][code] = type >= chess::kNumPieceTypes
                        ? std::int8_t{-1}
                        : static_cast<std::int8_t>(
                              (color == us ? kOurPiecesPlane : kTheirPiecesPlane) + type);
    }
  }
  return t;
}
constexpr auto kChannelOf = MakeChannelTable();

void FillPlane(float* out, int channel, float value) {
  for (int s = 0; s < kBoardSquares; ++s) out[PlaneIndex(s, channel)] = value;
}

// Sets the 12 piece planes starting at `base` for one packed board.
void EncodeBoard(const PackedBoard& board, const std::array<std::int8_t, 16>& channel_of, int flip,
                 int base, float* out) {
  chess::Bitboard b = board.occupied;
  // At most 32 nibbles exist; a corrupt occupancy with more bits is cut off there.
  for (int n = 0; b != 0 && n < kMaxRecordPieces; ++n) {
    const chess::Square s = chess::PopLsb(b);
    const int code = (board.pieces[n >> 1] >> (4 * (n & 1))) & 15;
    const int channel = channel_of[code];
    if (channel >= 0) out[PlaneIndex(s ^ flip, base + channel)] = 1.0f;
  }
}

}  // namespace

void EncodePlanes(const PositionRecord& record, std::span<float> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(kInputFloats),
           "EncodePlanes: the output holds fewer than kInputFloats floats");
  float* o = out.data();
  std::memset(o, 0, kInputBytes);

  const int us = record.side_to_move & 1;
  const int flip = us == chess::kWhite ? 0 : 56;
  const auto& channel_of = kChannelOf[us];

  // The current position.
  EncodeBoard(record.boards[0], channel_of, flip, 0, o);
  if (record.repetitions[0] >= 1) FillPlane(o, kRepeatedOncePlane, 1.0f);
  if (record.repetitions[0] >= 2) FillPlane(o, kRepeatedTwicePlane, 1.0f);

  // Scalars.
  if (us == chess::kBlack) FillPlane(o, kColorPlane, 1.0f);
  if (record.fullmove_number > 0) {
    FillPlane(o, kMoveCountPlane, std::min(1.0f, record.fullmove_number / 100.0f));
  }
  if (record.halfmove_clock > 0) {
    FillPlane(o, kNoProgressPlane, std::min(1.0f, record.halfmove_clock / 50.0f));
  }
  // Castling: each remaining right marks its rook's home square, in the side to move's frame.
  constexpr struct {
    chess::CastlingRights right;
    chess::Square rook;
  } kRooks[] = {{chess::kWhiteKingSide, chess::kH1},
                {chess::kWhiteQueenSide, chess::kA1},
                {chess::kBlackKingSide, chess::kH8},
                {chess::kBlackQueenSide, chess::kA8}};
  for (const auto& r : kRooks) {
    if (record.castling & r.right) o[PlaneIndex(r.rook ^ flip, kCastlingPlane)] = 1.0f;
  }

  // History, most recent first; absent positions stay zero.
  const int history = std::min<int>(record.history_count, kHistoryLength);
  for (int t = 1; t <= history; ++t) {
    const int base = kHistoryPlane + (t - 1) * kPlanesPerHistoryPosition;
    EncodeBoard(record.boards[t], channel_of, flip, base, o);
    if (record.repetitions[t] >= 1) FillPlane(o, base + 12, 1.0f);
  }
}

void EncodeBatch(std::span<const PositionRecord> records, std::span<float> out) {
  AZ_CHECK(out.size() / kInputFloats >= records.size(),
           "EncodeBatch: the output holds fewer than records.size() * kInputFloats floats");
  for (std::size_t i = 0; i < records.size(); ++i) {
    EncodePlanes(records[i], out.subspan(i * kInputFloats, kInputFloats));
  }
}

void EncodeGame(const chess::Game& game, std::span<float> out) {
  EncodePlanes(MakeRecord(game), out);
}

}  // namespace az::encoding
