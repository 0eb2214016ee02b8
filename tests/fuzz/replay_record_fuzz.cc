// libFuzzer target: the replay daemon's record check (services/replay/record_layout.h CheckRecord:
// every game's sample validation), which every record arriving from the sample ring or an
// `insert` passes before it is stored. Arbitrary bytes of each game's sample size are refused with
// an error or accepted; nothing reads out of bounds or crashes. The first byte picks the game.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/games/registry.h"
#include "services/replay/record_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const az::games::GameInfo> games = az::games::AllGames();
  const az::games::GameInfo& game = games[data[0] % games.size()];
  std::vector<std::byte> record(game.sample_bytes);
  std::memcpy(record.data(), data + 1, std::min(size - 1, record.size()));
  const az::replayd::RecordLayout layout = az::replayd::RecordLayout::Of(game);
  if (az::replayd::CheckRecord(layout, record).ok()) {
    (void)az::replayd::ModelVersionOf(layout, record);
  }
  // A record of the wrong size is refused, never read past its end.
  (void)az::replayd::CheckRecord(layout, std::span(record).first(record.size() / 2));
  return 0;
}
