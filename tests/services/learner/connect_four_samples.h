#pragma once

// Well-formed Connect Four training samples from random games: what self-play would produce, minus
// the search. For the learner's tests.

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "core/base/check.h"
#include "core/games/connect4/connect_four.h"
#include "core/games/connect4/connect_four_sample.h"

namespace az::learner::testing {

// `count` samples of random Connect Four games: each position's playable columns with random visit
// shares, a random root WDL, z from the game's end. Deterministic for a seed.
inline std::vector<sample::ConnectFourSample> RandomConnectFourSamples(
    std::size_t count, std::uint64_t seed, std::uint32_t model_version) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<sample::ConnectFourSample> out;
  std::uint64_t game_id = seed << 20;
  while (out.size() < count) {
    games::ConnectFourPosition position;
    std::vector<sample::ConnectFourSample> game;
    int final_value = 0;
    while (true) {
      if (position.BoardFull()) break;
      sample::ConnectFourSearchSummary search;
      for (int c = 0; c < games::kConnectFourWidth; ++c) {
        search.column_weights[c] = position.CanPlay(c) ? 0.05f + unit(rng) : 0.0f;
      }
      const float w = unit(rng), d = unit(rng) * (1 - w);
      search.root_wdl = {w, d, 1 - w - d};
      Result<sample::ConnectFourSample> s =
          sample::MakeConnectFourSample(position, search, game_id, model_version);
      AZ_CHECK(s.ok(), s.status().ToString());
      game.push_back(*s);
      std::vector<int> playable;
      for (int c = 0; c < games::kConnectFourWidth; ++c) {
        if (position.CanPlay(c)) playable.push_back(c);
      }
      position.Play(playable[rng() % playable.size()]);
      if (position.LastMoverWon()) {
        final_value = -1;
        break;
      }
    }
    sample::SetConnectFourOutcome(game, final_value,
                                  static_cast<std::uint32_t>(position.moves_played()));
    for (const auto& s : game) {
      if (out.size() < count) out.push_back(s);
    }
    ++game_id;
  }
  return out;
}

inline std::span<const std::byte> Bytes(const std::vector<sample::ConnectFourSample>& samples) {
  return std::as_bytes(std::span(samples));
}

}  // namespace az::learner::testing
