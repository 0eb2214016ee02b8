#include "core/games/connect4/connect_four_encoder.h"

#include <bit>

namespace az::games {
namespace {

// The empty cells where one more of `stones` would make at least one (`one`) or at least two
// (`two`) winning cells that `wins` (the winning cells now) does not hold.
struct ThreatMakers {
  std::uint64_t one = 0;
  std::uint64_t two = 0;
};

ThreatMakers FindThreatMakers(std::uint64_t stones, std::uint64_t mask, std::uint64_t wins) {
  ThreatMakers makers;
  for (std::uint64_t empty = ConnectFourPosition::kBoardMask & ~mask; empty != 0;
       empty &= empty - 1) {
    const std::uint64_t cell = empty & (~empty + 1);  // the lowest remaining empty cell
    const int made = std::popcount(ConnectFourWinningCells(stones | cell, mask | cell) & ~wins);
    if (made >= 1) makers.one |= cell;
    if (made >= 2) makers.two |= cell;
  }
  return makers;
}

}  // namespace

void EncodeConnectFour(const ConnectFourRecord& record, std::span<float> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(kConnectFourInputSize), "output too small");
  const std::uint64_t mask = record.own | record.opponent;
  const std::uint64_t playable = ConnectFourPlayableCells(mask);
  const std::uint64_t own_wins = ConnectFourWinningCells(record.own, mask);
  const std::uint64_t opponent_wins = ConnectFourWinningCells(record.opponent, mask);
  // Equal stone counts: the side to move moved first (the parity of Connect Four's threats
  // depends on it: the first player wants them on odd rows, counted from 1 at the bottom).
  const ThreatMakers own_makers = FindThreatMakers(record.own, mask, own_wins);
  const ThreatMakers opponent_makers = FindThreatMakers(record.opponent, mask, opponent_wins);
  const bool first_player = std::popcount(record.own) == std::popcount(record.opponent);
  static_assert(kConnectFourLandingPlane == 3);  // the order below
  const std::uint64_t planes[kConnectFourPlanes] = {record.own,
                                                    record.opponent,
                                                    ~0ull,
                                                    playable,
                                                    own_wins,
                                                    opponent_wins,
                                                    first_player ? ~0ull : 0ull,
                                                    own_makers.one,
                                                    opponent_makers.one,
                                                    own_makers.two,
                                                    opponent_makers.two};
  for (int plane = 0; plane < kConnectFourPlanes; ++plane) {
    for (int row = 0; row < kConnectFourHeight; ++row) {
      for (int column = 0; column < kConnectFourWidth; ++column) {
        const std::uint64_t bit = 1ull << (7 * column + row);
        out[plane * kConnectFourCells + row * kConnectFourWidth + column] =
            (planes[plane] & bit) ? 1.0f : 0.0f;
      }
    }
  }
}

}  // namespace az::games
