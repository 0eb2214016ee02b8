#pragma once

// The compact position record: what crosses process boundaries (the eval ring, the sample ring, the
// replay store) instead of 122 float planes. 240 bytes hold the current position, the 8 earlier
// positions of the game, side to move, castling rights, en-passant square, clocks and repetition
// counts: everything the planes (core/encoding/planes.h) are computed from, and nothing they are
// not.
//
// Each position is packed as a 64-bit occupancy plus one 4-bit piece code per occupied square in
// ascending square order (chess::Piece values: 0-5 White P N B R Q K, 8-13 Black), low nibble
// first: 24 bytes for up to 32 pieces. Every chess::Position fits: FromFen refuses more than 16
// men a side, and moves never add any.
//
// Layout (little-endian, pinned by tests/encoding/position_record_test.cc; bump kRecordVersion on
// any change): see the field comments; offsets in brackets.

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/base/status.h"
#include "core/chess/game.h"
#include "core/chess/position.h"

namespace az::encoding {

// How many earlier positions the record and the planes carry.
inline constexpr int kHistoryLength = 8;
inline constexpr int kRecordBoards = kHistoryLength + 1;
inline constexpr int kMaxRecordPieces = 32;

inline constexpr std::uint32_t kRecordMagic = 0x52505A41;  // "AZPR" in little-endian bytes
inline constexpr std::uint16_t kRecordVersion = 1;

// One position's placement: 24 bytes.
struct PackedBoard {
  std::uint64_t occupied;  // [0] bit s set when a piece stands on square s
  // [8] nibble i (byte i / 2, low nibble for even i) = the chess::Piece on the i-th set bit of
  // `occupied`, counting from square 0; nibbles past the piece count are 0.
  std::uint8_t pieces[kMaxRecordPieces / 2];
};
static_assert(sizeof(PackedBoard) == 24 && alignof(PackedBoard) == 8);
static_assert(std::is_trivially_copyable_v<PackedBoard> && std::is_standard_layout_v<PackedBoard>);

struct PositionRecord {
  std::uint32_t magic = kRecordMagic;          // [0]
  std::uint16_t version = kRecordVersion;      // [4]
  std::uint8_t side_to_move = 0;               // [6] chess::Color of boards[0]
  std::uint8_t castling = 0;                   // [7] chess::CastlingRights of boards[0]
  std::uint8_t en_passant = chess::kNoSquare;  // [8] as Position::EnPassantSquare(), 64 = none
  std::uint8_t history_count = 0;              // [9] earlier positions present: boards[1..count]
  std::uint16_t halfmove_clock = 0;            // [10]
  std::uint16_t fullmove_number = 1;           // [12]
  // [14] repetitions[i]: how many times boards[i] had occurred earlier in the game (0 the first
  // time; saturates at 254). 0 for absent boards.
  std::uint8_t repetitions[kRecordBoards] = {};
  std::uint8_t reserved = 0;  // [23] always 0
  // [24] boards[0] is the current position, boards[t] the one t plies ago; boards past
  // history_count (before the start of the game) are all zero.
  PackedBoard boards[kRecordBoards] = {};
};
static_assert(sizeof(PositionRecord) == 240 && alignof(PositionRecord) == 8);
static_assert(std::is_trivially_copyable_v<PositionRecord> &&
              std::is_standard_layout_v<PositionRecord>);
static_assert(offsetof(PositionRecord, boards) == 24);

// Packs one placement (at most 32 pieces, which every chess::Position satisfies; checked).
PackedBoard PackBoard(const chess::Position& position);

// The record of the game's current position with its history: min(ply, 8) earlier positions and
// every position's repetition count from the game. No allocation; a few hundred nanoseconds.
PositionRecord MakeRecord(const chess::Game& game);

// The record of a lone position: no history, no repetitions.
PositionRecord MakeRecord(const chess::Position& position);

// Checks a record that arrived from elsewhere (another process, a file): magic and version, side to
// move, castling and en-passant values in range, history_count <= 8, at most 32 pieces per board,
// only valid piece codes on occupied squares and zero nibbles past them, zero boards and
// repetition counts past history_count, zero reserved byte, exactly one king per side on the
// current board. InvalidArgument (DataLoss for a wrong magic) saying which field is wrong. It does
// not check that the history is reachable by legal moves. The encoder never reads out of bounds
// whatever the record holds, so this is about meaning, not memory safety.
Status ValidateRecord(const PositionRecord& record);

// The chess::Piece on each square of `board` (kNoPiece where empty), by unpacking the nibbles.
void UnpackBoard(const PackedBoard& board, chess::Piece (&squares)[64]);

// FEN of the record's current position (boards[0] with its side, castling, en passant, clocks).
std::string RecordToFen(const PositionRecord& record);

// The record's current position as a chess::Position (through its FEN), for code that holds only a
// record and needs moves (decoding a policy, checking a sample). Errors are those of
// ValidateRecord and Position::FromFen.
Result<chess::Position> RecordToPosition(const PositionRecord& record);

}  // namespace az::encoding
