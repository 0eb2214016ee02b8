#include "core/games/connect4/connect_four_encoder.h"

namespace az::games {

void EncodeConnectFour(const ConnectFourRecord& record, std::span<float> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(kConnectFourInputSize), "output too small");
  for (int row = 0; row < kConnectFourHeight; ++row) {
    for (int column = 0; column < kConnectFourWidth; ++column) {
      const std::uint64_t bit = 1ull << (7 * column + row);
      const int cell = row * kConnectFourWidth + column;
      out[cell] = (record.own & bit) ? 1.0f : 0.0f;
      out[kConnectFourCells + cell] = (record.opponent & bit) ? 1.0f : 0.0f;
      out[2 * kConnectFourCells + cell] = 1.0f;
    }
  }
}

}  // namespace az::games
