#include "core/games/connect4/connect_four_sample.h"

#include <vector>

#include "core/games/connect4/connect_four.h"

namespace az::sample {

Result<ConnectFourSample> MakeConnectFourSample(const games::ConnectFourPosition& position,
                                                const ConnectFourSearchSummary& search,
                                                std::uint64_t game_id,
                                                std::uint32_t model_version) {
  std::vector<games::MoveWeight<games::ConnectFourMove>> moves;
  for (int column = 0; column < games::kConnectFourWidth; ++column) {
    if (search.column_weights[column] != 0.0f) {
      moves.push_back({{static_cast<std::uint8_t>(column)}, search.column_weights[column]});
    }
  }
  const games::SearchSummary<games::ConnectFourMove> summary{moves, search.root_wdl,
                                                             search.soft_value};
  return games::MakeDenseSample<games::ConnectFour>(position, summary, {game_id, model_version});
}

void SetConnectFourOutcome(ConnectFourSample& sample, int final_value, std::uint32_t final_ply) {
  games::SetDenseOutcome(std::span<ConnectFourSample>(&sample, 1), final_value, final_ply);
}

void SetConnectFourOutcome(std::span<ConnectFourSample> samples, int final_value,
                           std::uint32_t final_ply) {
  games::SetDenseOutcome(samples, final_value, final_ply);
}

Status ValidateConnectFourSample(const ConnectFourSample& sample) {
  return games::ValidateDenseSample<games::ConnectFour>(sample);
}

std::array<float, games::kConnectFourWidth> ConnectFourPolicy(const ConnectFourSample& sample) {
  std::array<float, games::kConnectFourWidth> out;
  for (int column = 0; column < games::kConnectFourWidth; ++column) {
    out[column] = sample.policy[column] / 65535.0f;
  }
  return out;
}

}  // namespace az::sample
