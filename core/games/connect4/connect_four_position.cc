#include "core/games/connect4/connect_four_position.h"

#include <bit>
#include <string>

namespace az::games {

std::uint64_t ConnectFourWinningCells(std::uint64_t stones, std::uint64_t mask) {
  constexpr int kH = kConnectFourHeight;
  // Vertical: three stacked below.
  std::uint64_t r = (stones << 1) & (stones << 2) & (stones << 3);
  // The other three directions, each with its shift: horizontal (kH + 1), the diagonals kH and
  // kH + 2. For each, the cell may be at either end of three, or between them.
  for (int d : {kH + 1, kH, kH + 2}) {
    std::uint64_t p = (stones << d) & (stones << 2 * d);
    r |= p & (stones << 3 * d);
    r |= p & (stones >> d);
    p = (stones >> d) & (stones >> 2 * d);
    r |= p & (stones << d);
    r |= p & (stones >> 3 * d);
  }
  return r & (ConnectFourPosition::kBoardMask ^ mask);
}

std::uint64_t ConnectFourPlayableCells(std::uint64_t mask) {
  constexpr std::uint64_t kBottomMask = 0x0040810204081ull;  // the bottom cell of every column
  return (mask + kBottomMask) & ConnectFourPosition::kBoardMask;
}

bool ConnectFourPosition::HasFour(std::uint64_t stones) {
  // Shift by the step of each direction (1 vertical, 7 horizontal, 6 and 8 the diagonals): two
  // in-a-row pairs two steps apart make four. The sentinel row keeps columns from wrapping.
  std::uint64_t pairs = stones & (stones >> 7);
  if (pairs & (pairs >> 14)) return true;
  pairs = stones & (stones >> 6);
  if (pairs & (pairs >> 12)) return true;
  pairs = stones & (stones >> 8);
  if (pairs & (pairs >> 16)) return true;
  pairs = stones & (stones >> 1);
  return (pairs & (pairs >> 2)) != 0;
}

void ConnectFourPosition::Play(int column) {
  AZ_CHECK(column >= 0 && column < kConnectFourWidth && CanPlay(column), "column not playable");
  // The mover's stones become the opponent's view; adding the bottom bit of the column to the mask
  // carries into the lowest empty cell of that column.
  current_ ^= mask_;
  mask_ |= mask_ + BottomBit(column);
  ++moves_;
}

void ConnectFourPosition::Undo(int column) {
  AZ_CHECK(column >= 0 && column < kConnectFourWidth && moves_ > 0, "nothing to take back");
  const std::uint64_t stones = mask_ & ColumnMask(column);
  AZ_CHECK(stones != 0, "take back from an empty column");
  // The stones of a column are contiguous from its bottom: adding the bottom bit carries to the
  // first empty cell, and the cell below that is the top stone.
  const std::uint64_t top = (stones + BottomBit(column)) >> 1;
  mask_ ^= top;
  current_ ^= mask_;
  --moves_;
}

bool ConnectFourPosition::IsWinningMove(int column) const {
  const std::uint64_t stone = (mask_ + BottomBit(column)) & ColumnMask(column);
  return HasFour(current_ | stone);
}

int ConnectFourPosition::StoneAt(int row, int column) const {
  const std::uint64_t bit = 1ull << (7 * column + row);
  if ((mask_ & bit) == 0) return -1;
  const bool is_current = (current_ & bit) != 0;
  // current_ belongs to the side to move; side_to_move() says which player that is.
  return is_current ? side_to_move() : 1 - side_to_move();
}

std::string ConnectFourPosition::ToString() const {
  std::string text;
  for (int row = kConnectFourHeight - 1; row >= 0; --row) {
    for (int column = 0; column < kConnectFourWidth; ++column) {
      const int owner = StoneAt(row, column);
      text += owner < 0 ? '.' : (owner == 0 ? 'X' : 'O');
    }
    text += '\n';
  }
  return text;
}

Result<ConnectFourPosition> ConnectFourPosition::FromMoves(std::string_view moves) {
  ConnectFourPosition position;
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const char c = moves[i];
    const std::string where = "move " + std::to_string(i + 1) + " ('" + std::string(1, c) + "')";
    if (c < '1' || c > '7') return InvalidArgument(where + ": columns are 1..7");
    if (position.LastMoverWon()) return InvalidArgument(where + ": the game is already won");
    const int column = c - '1';
    if (!position.CanPlay(column)) return InvalidArgument(where + ": the column is full");
    position.Play(column);
  }
  return position;
}

Result<ConnectFourPosition> ConnectFourPosition::FromRecord(const ConnectFourRecord& record) {
  if ((record.own | record.opponent) & ~kBoardMask) {
    return InvalidArgument("connect four record has stones outside the board");
  }
  if (record.own & record.opponent) {
    return InvalidArgument("connect four record has two stones on one cell");
  }
  const std::uint64_t mask = record.own | record.opponent;
  for (int column = 0; column < kConnectFourWidth; ++column) {
    const std::uint64_t stones = (mask & ColumnMask(column)) >> (7 * column);
    if ((stones & (stones + 1)) != 0) {
      return InvalidArgument("connect four record has a floating stone in column " +
                             std::to_string(column + 1));
    }
  }
  const int own = std::popcount(record.own);
  const int opponent = std::popcount(record.opponent);
  // The side to move has as many stones as the opponent (first player to move) or one fewer.
  if (opponent != own && opponent != own + 1) {
    return InvalidArgument("connect four record has " + std::to_string(own) +
                           " stones to move and " + std::to_string(opponent) + " for the opponent");
  }
  ConnectFourPosition position;
  position.current_ = record.own;
  position.mask_ = mask;
  position.moves_ = own + opponent;
  return position;
}

}  // namespace az::games
