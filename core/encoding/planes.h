#pragma once

// The network input: 122 planes of 8x8 floats, channels-last (NHWC), from the side to move's
// perspective. Element (row, column, channel) is at out[(row * 8 + column) * 122 + channel], where
// row/column are the rank/file of the square in the side to move's frame: the board as it is for
// White, flipped rank-wise (square ^ 56) for Black, so row 0 is always the mover's back rank.
//
//   channel  content
//   0-5      side to move's P N B R Q K (1.0 where such a piece stands)
//   6-11     opponent's P N B R Q K
//   12       1.0 everywhere when the current position occurred at least once before in the game
//   13       1.0 everywhere when it occurred at least twice before
//   14       colour to move: 0.0 everywhere for White, 1.0 for Black
//   15       move count: min(1, fullmove number / 100) everywhere
//   16       castling: 1.0 on the home square of each rook (a1, h1, a8, h8 before the flip) whose
//            castling right remains, for both sides, else 0.0
//   17       no-progress count: min(1, halfmove clock / 50) everywhere
//   18-121   8 earlier positions, most recent first: position t plies ago (t = 1..8) occupies
//            channels 18 + 13 * (t - 1) + [0, 13): the current side to move's P N B R Q K, the
//            opponent's P N B R Q K (current perspective and flip, not that position's mover's),
//            then 1.0 everywhere when that position had occurred before it in the game. Positions
//            before the start of the game are all zeros.
//
// Everything is computed from a PositionRecord (core/encoding/position_record.h), so the evaluator
// and the learner, which hold only records, produce exactly the planes the live game gives. No
// function here allocates.

#include <cstddef>
#include <span>

#include "core/chess/game.h"
#include "core/encoding/position_record.h"

namespace az::encoding {

inline constexpr int kNumPlanes = 122;
inline constexpr int kBoardSquares = 64;
inline constexpr int kInputFloats = kBoardSquares * kNumPlanes;  // 7808 floats per position
inline constexpr std::size_t kInputBytes = kInputFloats * sizeof(float);

// Channel numbers.
inline constexpr int kOurPiecesPlane = 0;
inline constexpr int kTheirPiecesPlane = 6;
inline constexpr int kRepeatedOncePlane = 12;
inline constexpr int kRepeatedTwicePlane = 13;
inline constexpr int kColorPlane = 14;
inline constexpr int kMoveCountPlane = 15;
inline constexpr int kCastlingPlane = 16;
inline constexpr int kNoProgressPlane = 17;
inline constexpr int kHistoryPlane = 18;
inline constexpr int kPlanesPerHistoryPosition = 13;
static_assert(kHistoryPlane + kHistoryLength * kPlanesPerHistoryPosition == kNumPlanes);

// The index of (square in the side to move's frame, channel) in one position's floats.
constexpr int PlaneIndex(int frame_square, int channel) {
  return frame_square * kNumPlanes + channel;
}

// Writes the record's kInputFloats floats to `out` (checked to hold that many). Reads only the
// record, whatever it holds (invalid piece codes are skipped): validate records from elsewhere with
// ValidateRecord first. About 0.7 us of CPU, most of it clearing 31 KB (docs/PERFORMANCE.md).
void EncodePlanes(const PositionRecord& record, std::span<float> out);

// Encodes records[i] into out[i * kInputFloats, (i + 1) * kInputFloats): an N x 8 x 8 x 122 NHWC
// tensor's memory. `out` must hold records.size() * kInputFloats floats (checked).
void EncodeBatch(std::span<const PositionRecord> records, std::span<float> out);

// The live encoder: the planes of the game's current position, EncodePlanes(MakeRecord(game)).
void EncodeGame(const chess::Game& game, std::span<float> out);

}  // namespace az::encoding
