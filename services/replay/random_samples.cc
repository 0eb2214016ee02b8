#include "services/replay/random_samples.h"

#include <array>
#include <cstring>

#include "core/chess/game.h"
#include "core/replay/random.h"
#include "core/sample/sample_builder.h"

namespace az::replayd {

std::vector<sample::ChessSample> RandomChessSamples(std::size_t count,
                                                    const RandomSampleOptions& options) {
  replay::Rng rng(options.seed);
  std::vector<sample::ChessSample> out;
  out.reserve(count);
  std::vector<sample::ChessSample> game_samples;
  std::vector<sample::MoveWeight> weights;
  for (std::uint64_t game_index = 0; out.size() < count; ++game_index) {
    chess::Game game(chess::GameOptions{.max_plies = options.max_plies});
    const sample::Provenance provenance{(options.seed << 24) ^ game_index, options.model_version};
    game_samples.clear();
    chess::GameOutcome outcome = game.Outcome();
    while (!outcome.is_terminal()) {
      const chess::MoveList moves = game.LegalMoves();
      weights.clear();
      for (chess::Move move : moves) {
        weights.push_back({move, static_cast<float>(1 + rng.Below(100))});
      }
      const double win = rng.NextDouble();
      const double draw = rng.NextDouble() * (1 - win);
      const std::array<float, 3> wdl = {static_cast<float>(win), static_cast<float>(draw),
                                        static_cast<float>(1 - win - draw)};
      const float soft_value = static_cast<float>(win - (1 - win - draw));
      Result<sample::ChessSample> made =
          sample::MakeSample(game, {weights, wdl, soft_value}, provenance);
      AZ_CHECK(made.ok(), made.status().ToString());
      game_samples.push_back(*made);
      game.Play(moves[static_cast<int>(rng.Below(static_cast<std::uint64_t>(moves.size())))]);
      outcome = game.Outcome();
    }
    sample::SetOutcome(game_samples, outcome.result);
    for (const sample::ChessSample& s : game_samples) {
      if (out.size() == count) break;
      out.push_back(s);
    }
  }
  return out;
}

std::vector<std::byte> RandomRecords(std::size_t count, std::size_t record_bytes,
                                     std::uint64_t seed) {
  replay::Rng rng(seed);
  std::vector<std::byte> out(count * record_bytes);
  for (std::size_t i = 0; i < out.size(); i += 8) {
    const std::uint64_t word = rng.Next();
    std::memcpy(out.data() + i, &word, std::min<std::size_t>(8, out.size() - i));
  }
  return out;
}

}  // namespace az::replayd
