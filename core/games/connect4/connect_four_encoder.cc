#include "core/games/connect4/connect_four_encoder.h"

#include <bit>

namespace az::games {

void EncodeConnectFour(const ConnectFourRecord& record, std::span<float> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(kConnectFourInputSize), "output too small");
  const std::uint64_t mask = record.own | record.opponent;
  const std::uint64_t playable = ConnectFourPlayableCells(mask);
  const std::uint64_t own_wins = ConnectFourWinningCells(record.own, mask);
  const std::uint64_t opponent_wins = ConnectFourWinningCells(record.opponent, mask);
  // Equal stone counts: the side to move moved first (the parity of Connect Four's threats
  // depends on it: the first player wants them on odd rows, counted from 1 at the bottom).
  const bool first_player = std::popcount(record.own) == std::popcount(record.opponent);
  static_assert(kConnectFourLandingPlane == 3);  // the order below
  const std::uint64_t planes[kConnectFourPlanes] = {record.own,
                                                    record.opponent,
                                                    ~0ull,
                                                    playable,
                                                    own_wins,
                                                    opponent_wins,
                                                    first_player ? ~0ull : 0ull};
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
