#include "core/games/connect4/connect_four_solver.h"

#include <bit>

#include "core/base/check.h"

namespace az::games {
namespace {

constexpr std::uint64_t kBoardMask = ConnectFourPosition::kBoardMask;
constexpr int kColumnOrder[kConnectFourWidth] = {3, 2, 4, 1, 5, 0, 6};

enum Bound : std::uint8_t { kLower = 1, kUpper = 2 };

// Moves of the side to move that do not let the opponent win at once: 0 when every move loses
// (two opponent threats to block, or only moves under an opponent threat).
std::uint64_t NonLosingMoves(std::uint64_t current, std::uint64_t mask) {
  std::uint64_t playable = ConnectFourPlayableCells(mask);
  const std::uint64_t opponent_wins = ConnectFourWinningCells(current ^ mask, mask);
  const std::uint64_t forced = playable & opponent_wins;
  if (forced != 0) {
    if (forced & (forced - 1)) return 0;
    playable = forced;
  }
  return playable & ~(opponent_wins >> 1);
}

}  // namespace

ConnectFourSolver::ConnectFourSolver(int table_log2)
    : table_(std::size_t{1} << table_log2), table_mask_((std::uint64_t{1} << table_log2) - 1) {
  AZ_CHECK(table_log2 >= 10 && table_log2 <= 30, "ConnectFourSolver: table size out of range");
}

int ConnectFourSolver::Solve(const ConnectFourPosition& position) {
  if (position.LastMoverWon()) return -1;
  if (position.BoardFull()) return 0;
  const ConnectFourRecord record = position.ToRecord();
  const std::uint64_t current = record.own;
  const std::uint64_t mask = record.own | record.opponent;
  if (ConnectFourWinningCells(current, mask) & ConnectFourPlayableCells(mask)) return 1;
  const int moves = position.moves_played();
  // Two null-window searches: is it a win? If not, is it a loss?
  if (Negamax(current, mask, moves, 0, 1) >= 1) return 1;
  return Negamax(current, mask, moves, -1, 0) <= -1 ? -1 : 0;
}

std::array<int, kConnectFourWidth> ConnectFourSolver::MoveValues(
    const ConnectFourPosition& position) {
  std::array<int, kConnectFourWidth> values;
  values.fill(kIllegal);
  if (position.LastMoverWon() || position.BoardFull()) return values;
  for (int column = 0; column < kConnectFourWidth; ++column) {
    if (!position.CanPlay(column)) continue;
    if (position.IsWinningMove(column)) {
      values[column] = 1;
      continue;
    }
    ConnectFourPosition child = position;
    child.Play(column);
    values[column] = -Solve(child);
  }
  return values;
}

// Negamax over {-1, 0, 1}, fail-soft within [alpha, beta]. The side to move cannot win at once and
// the game is not over (the caller checked, or the move filter guarantees it).
int ConnectFourSolver::Negamax(std::uint64_t current, std::uint64_t mask, int moves, int alpha,
                               int beta) {
  ++nodes_;
  const std::uint64_t next = NonLosingMoves(current, mask);
  if (next == 0) return -1;
  // With two cells left the opponent takes the last one: nobody can connect with a non-losing move.
  if (moves >= kConnectFourCells - 2) return 0;
  // A win needs at least our next move and one more of ours, so the opponent cannot lose at once:
  // -1 is the floor and +1 the ceiling, both reachable; the table narrows them.
  const std::uint64_t key = current + mask + 1;
  Entry& entry = table_[(key * 0x9E3779B97F4A7C15ull) >> 40 & table_mask_];
  if (entry.key == key) {
    if (entry.bound & kLower) alpha = std::max(alpha, static_cast<int>(entry.value));
    if (entry.bound & kUpper) beta = std::min(beta, static_cast<int>(entry.value));
    if (alpha >= beta) return entry.bound & kLower ? alpha : beta;
  }

  // Order: by the number of threats the move creates, then centre first (a stable insertion sort).
  std::uint64_t ordered[kConnectFourWidth];
  int scores[kConnectFourWidth];
  int count = 0;
  for (int column : kColumnOrder) {
    const std::uint64_t move = next & ConnectFourPosition::ColumnMask(column);
    if (move == 0) continue;
    const int score = std::popcount(ConnectFourWinningCells(current | move, mask | move));
    int i = count++;
    for (; i > 0 && scores[i - 1] < score; --i) {
      ordered[i] = ordered[i - 1];
      scores[i] = scores[i - 1];
    }
    ordered[i] = move;
    scores[i] = score;
  }

  const int original_alpha = alpha;
  int best = -1;
  for (int i = 0; i < count; ++i) {
    const std::uint64_t child_mask = mask | ordered[i];
    const std::uint64_t child_current = current ^ mask;  // the opponent's stones
    const int score = -Negamax(child_current, child_mask, moves + 1, -beta, -alpha);
    if (score > best) best = score;
    if (score > alpha) alpha = score;
    if (alpha >= beta) break;
  }
  entry.key = key;
  entry.value = static_cast<std::int8_t>(best);
  if (best <= original_alpha) {
    entry.bound = kUpper;
  } else if (best >= beta) {
    entry.bound = kLower;
  } else {
    entry.bound = kLower | kUpper;
  }
  return best;
}

}  // namespace az::games
