#include "core/games/connect4/connect_four.h"

#include "core/games/connect4/connect_four_solver.h"
#include "core/games/text.h"

namespace az::games {

Result<ConnectFourPosition> ConnectFour::StateFromRecord(const ConnectFourRecord& record) {
  AZ_ASSIGN_OR_RETURN(ConnectFourPosition position, ConnectFourPosition::FromRecord(record));
  // The side to move cannot already have four: the game would have ended at its last move.
  if (ConnectFourPosition::HasFour(record.own)) {
    return InvalidArgument("connect four record: the side to move already has four in a row");
  }
  return position;
}

ConnectFourRecord ConnectFour::TransformRecord(const ConnectFourRecord& record, int symmetry) {
  if (symmetry == 0) return record;
  const auto mirror = [](std::uint64_t stones) {
    std::uint64_t out = 0;
    for (int column = 0; column < kConnectFourWidth; ++column) {
      const std::uint64_t bits = (stones >> (7 * column)) & 0x7F;
      out |= bits << (7 * (kConnectFourWidth - 1 - column));
    }
    return out;
  };
  return {mirror(record.own), mirror(record.opponent)};
}

Result<ConnectFourPosition> ConnectFour::ParsePosition(std::string_view text) {
  text = TrimText(text);
  if (text == "start") return ConnectFourPosition();
  return ConnectFourPosition::FromMoves(text);
}

Result<ConnectFourMove> ConnectFour::ParseMove(const ConnectFourPosition& state,
                                               std::string_view text) {
  text = TrimText(text);
  if (text.size() != 1 || text[0] < '1' || text[0] > '7') {
    return InvalidArgument("connect four move '" + std::string(text) +
                           "' is not a column digit 1-7");
  }
  const int column = text[0] - '1';
  if (!state.CanPlay(column)) {
    return InvalidArgument("connect four column " + std::string(text) + " is full");
  }
  return ConnectFourMove{static_cast<std::uint8_t>(column)};
}

int ConnectFour::Solve(const ConnectFourPosition& state) {
  thread_local ConnectFourSolver solver;
  return solver.Solve(state);
}

}  // namespace az::games
