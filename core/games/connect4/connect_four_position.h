#pragma once

// Connect Four's rules on the standard 6x7 board, as a bitboard. The game's whole definition for
// the pipeline is `ConnectFour` in connect_four.h.
//
// Bit layout (the classic one of Pascal Pons' solver): column c owns bits 7c..7c+5, row 0 at the
// bottom; bit 7c+6 is an always-empty sentinel so that shifts never carry from one column to the
// next. 49 bits in all.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::games {

inline constexpr int kConnectFourWidth = 7;
inline constexpr int kConnectFourHeight = 6;
inline constexpr int kConnectFourCells = kConnectFourWidth * kConnectFourHeight;

struct ConnectFourMove {
  std::uint8_t column = 0;  // 0..6, left to right
  friend bool operator==(ConnectFourMove, ConnectFourMove) = default;
};

// The compact record of a position: the side to move's stones and the opponent's, in the bit layout
// above. 16 bytes; whose turn it is follows from the stone counts.
struct ConnectFourRecord {
  std::uint64_t own = 0;
  std::uint64_t opponent = 0;
  friend bool operator==(const ConnectFourRecord&, const ConnectFourRecord&) = default;
};
static_assert(sizeof(ConnectFourRecord) == 16);
static_assert(std::is_trivially_copyable_v<ConnectFourRecord>);

// The empty cells where `stones` would complete four, reachable now or not (`mask`: every stone).
std::uint64_t ConnectFourWinningCells(std::uint64_t stones, std::uint64_t mask);
// The cells a stone would land in now: the lowest empty cell of every column that is not full.
std::uint64_t ConnectFourPlayableCells(std::uint64_t mask);

class ConnectFourPosition {
 public:
  ConnectFourPosition() = default;  // the empty board, first player to move

  // Parses a move sequence as 1-based column digits ("4453"), the convention of the public
  // Connect Four test sets. InvalidArgument on a non-digit, a column out of 1..7, a full column, or
  // a move after the game has ended.
  static Result<ConnectFourPosition> FromMoves(std::string_view moves);
  // Rebuilds a position from its record. InvalidArgument when the record is not a position that
  // play can reach: stones off the board, overlapping, floating, or counts that do not alternate.
  static Result<ConnectFourPosition> FromRecord(const ConnectFourRecord& record);

  bool CanPlay(int column) const { return (mask_ & TopBit(column)) == 0; }
  // Drops a stone of the side to move into `column`, which must be playable (checked).
  void Play(int column);
  // Takes back the last move, which was played in `column` (checked: the column has a stone).
  void Undo(int column);

  // True when the player who made the last move has four in a row.
  bool LastMoverWon() const { return HasFour(mask_ ^ current_); }
  // True when playing `column` (playable) connects four for the side to move.
  bool IsWinningMove(int column) const;
  bool BoardFull() const { return moves_ == kConnectFourCells; }
  int moves_played() const { return moves_; }
  // 0 when the first player is to move, 1 for the second.
  int side_to_move() const { return moves_ & 1; }

  // Stone owner at (row, column), row 0 at the bottom: 0 first player, 1 second, -1 empty.
  int StoneAt(int row, int column) const;
  ConnectFourRecord ToRecord() const { return {current_, mask_ ^ current_}; }
  // Six lines, top row first: 'X' first player, 'O' second, '.' empty.
  std::string ToString() const;

  friend bool operator==(const ConnectFourPosition&, const ConnectFourPosition&) = default;

  static constexpr std::uint64_t BottomBit(int column) { return 1ull << (7 * column); }
  static constexpr std::uint64_t TopBit(int column) { return 1ull << (7 * column + 5); }
  static constexpr std::uint64_t ColumnMask(int column) { return 0x3Full << (7 * column); }
  static constexpr std::uint64_t kBoardMask = 0xFDFBF7EFDFBFull;  // every playable cell
  static bool HasFour(std::uint64_t stones);

 private:
  std::uint64_t current_ = 0;  // stones of the side to move
  std::uint64_t mask_ = 0;     // all stones
  int moves_ = 0;
};

}  // namespace az::games
