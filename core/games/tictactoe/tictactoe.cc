#include "core/games/tictactoe/tictactoe.h"

#include <algorithm>
#include <bit>

#include "core/base/check.h"
#include "core/games/text.h"

namespace az::games {
namespace {

constexpr std::uint16_t kBoard = 0x1FF;
constexpr std::uint16_t kLines[8] = {
    0007, 0070, 0700,  // rows
    0111, 0222, 0444,  // columns
    0421, 0124,        // diagonals
};

}  // namespace

bool TicTacToePosition::HasLine(std::uint16_t marks) {
  return std::any_of(std::begin(kLines), std::end(kLines),
                     [marks](std::uint16_t line) { return (marks & line) == line; });
}

void TicTacToePosition::Play(int cell) {
  AZ_CHECK(cell >= 0 && cell < kTicTacToeCells && CanPlay(cell), "tic-tac-toe: cell taken");
  const std::uint16_t mover = static_cast<std::uint16_t>(own_ | (1u << cell));
  own_ = opponent_;
  opponent_ = mover;
  ++moves_;
}

void TicTacToePosition::Undo(int cell) {
  AZ_CHECK(cell >= 0 && cell < kTicTacToeCells && (opponent_ >> cell & 1),
           "tic-tac-toe: take back a mark that is not the last mover's");
  const std::uint16_t mover = static_cast<std::uint16_t>(opponent_ & ~(1u << cell));
  opponent_ = own_;
  own_ = mover;
  --moves_;
}

std::string TicTacToePosition::ToString() const {
  // X has the odd marks count after its move: whose marks are X's follows from the side to move.
  const std::uint16_t x = side_to_move() == 0 ? own_ : opponent_;
  const std::uint16_t o = side_to_move() == 0 ? opponent_ : own_;
  std::string text;
  for (int cell = 0; cell < kTicTacToeCells; ++cell) {
    text += (x >> cell & 1) ? 'X' : (o >> cell & 1) ? 'O' : '.';
    if (cell % 3 == 2) text += '\n';
  }
  return text;
}

Result<TicTacToePosition> TicTacToePosition::FromMoves(std::string_view moves) {
  TicTacToePosition position;
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const char c = moves[i];
    if (c < '1' || c > '9') {
      return InvalidArgument("tic-tac-toe moves: '" + std::string(1, c) + "' at " +
                             std::to_string(i + 1) + " is not a cell digit 1-9");
    }
    if (position.LastMoverWon()) {
      return InvalidArgument("tic-tac-toe moves: move " + std::to_string(i + 1) +
                             " comes after the game was won");
    }
    if (!position.CanPlay(c - '1')) {
      return InvalidArgument("tic-tac-toe moves: cell " + std::string(1, c) + " at move " +
                             std::to_string(i + 1) + " is taken");
    }
    position.Play(c - '1');
  }
  return position;
}

Result<TicTacToePosition> TicTacToePosition::FromRecord(const TicTacToeRecord& record) {
  if ((record.own | record.opponent) & ~kBoard) {
    return InvalidArgument("tic-tac-toe record has marks outside the board");
  }
  if (record.own & record.opponent) {
    return InvalidArgument("tic-tac-toe record has two marks on one cell");
  }
  const int own = std::popcount(record.own);
  const int opponent = std::popcount(record.opponent);
  if (opponent != own && opponent != own + 1) {
    return InvalidArgument("tic-tac-toe record has " + std::to_string(own) + " marks to move and " +
                           std::to_string(opponent) + " for the opponent");
  }
  if (HasLine(record.own)) {
    return InvalidArgument("tic-tac-toe record: the side to move already has a line");
  }
  TicTacToePosition position;
  position.own_ = record.own;
  position.opponent_ = record.opponent;
  position.moves_ = own + opponent;
  return position;
}

void TicTacToe::Encode(const TicTacToeRecord& record, std::span<float> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(kInput.floats()), "tic-tac-toe: input too small");
  for (int cell = 0; cell < kTicTacToeCells; ++cell) {
    out[cell] = (record.own >> cell & 1) ? 1.0f : 0.0f;
    out[9 + cell] = (record.opponent >> cell & 1) ? 1.0f : 0.0f;
    out[18 + cell] = 1.0f;
  }
}

int TicTacToe::TransformAction(int cell, int symmetry) {
  AZ_CHECK(symmetry >= 0 && symmetry < kSymmetries && cell >= 0 && cell < kTicTacToeCells,
           "tic-tac-toe: bad symmetry or cell");
  int row = cell / 3;
  int column = cell % 3;
  for (int turn = 0; turn < symmetry % 4; ++turn) {  // clockwise: (r, c) -> (c, 2 - r)
    const int r = row;
    row = column;
    column = 2 - r;
  }
  if (symmetry >= 4) column = 2 - column;
  return row * 3 + column;
}

TicTacToeRecord TicTacToe::TransformRecord(const TicTacToeRecord& record, int symmetry) {
  const auto map = [symmetry](std::uint16_t marks) {
    std::uint16_t out = 0;
    for (int cell = 0; cell < kTicTacToeCells; ++cell) {
      if (marks >> cell & 1) out |= static_cast<std::uint16_t>(1u << TransformAction(cell, symmetry));
    }
    return out;
  };
  return {map(record.own), map(record.opponent)};
}

Result<TicTacToePosition> TicTacToe::ParsePosition(std::string_view text) {
  text = TrimText(text);
  if (text == "start") return TicTacToePosition();
  return TicTacToePosition::FromMoves(text);
}

Result<TicTacToeMove> TicTacToe::ParseMove(const TicTacToePosition& state, std::string_view text) {
  text = TrimText(text);
  if (text.size() != 1 || text[0] < '1' || text[0] > '9') {
    return InvalidArgument("tic-tac-toe move '" + std::string(text) + "' is not a cell digit 1-9");
  }
  if (!state.CanPlay(text[0] - '1')) {
    return InvalidArgument("tic-tac-toe cell " + std::string(text) + " is taken");
  }
  return TicTacToeMove{static_cast<std::uint8_t>(text[0] - '1')};
}

namespace {

// Negamax values of every position, indexed by own | opponent << 9; 2 = not yet computed.
std::int8_t SolveInto(std::vector<std::int8_t>& memo, const TicTacToePosition& position) {
  const TicTacToeRecord record = position.ToRecord();
  std::int8_t& value = memo[record.own | (std::size_t{record.opponent} << 9)];
  if (value != 2) return value;
  if (position.LastMoverWon()) return value = -1;
  if (position.BoardFull()) return value = 0;
  std::int8_t best = -1;
  // No cut-off: every reachable position gets its value.
  for (int cell = 0; cell < kTicTacToeCells; ++cell) {
    if (!position.CanPlay(cell)) continue;
    TicTacToePosition child = position;
    child.Play(cell);
    best = std::max<std::int8_t>(best, static_cast<std::int8_t>(-SolveInto(memo, child)));
  }
  return value = best;
}

}  // namespace

int TicTacToe::Solve(const TicTacToePosition& state) {
  static const std::vector<std::int8_t> memo = [] {
    std::vector<std::int8_t> table(std::size_t{1} << 18, 2);
    SolveInto(table, TicTacToePosition());
    return table;
  }();
  const TicTacToeRecord record = state.ToRecord();
  const std::int8_t value = memo[record.own | (std::size_t{record.opponent} << 9)];
  if (value != 2) return value;
  // Not reachable from the empty board (e.g. play went on after a line): solve it on its own.
  std::vector<std::int8_t> local(std::size_t{1} << 18, 2);
  return SolveInto(local, state);
}

}  // namespace az::games
