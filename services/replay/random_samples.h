#pragma once

// Well-formed random records for trying a fresh daemon and for load tests (`azctl replay
// insert-random`, the benchmarks, the tests): chess samples from random legal games, which pass
// sample::ValidateSample and sample::CheckPolicyIsLegal, or random bytes for other layouts.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/sample/chess_sample.h"

namespace az::replayd {

struct RandomSampleOptions {
  std::uint64_t seed = 1;
  std::uint32_t model_version = 0;  // provenance written into every sample
  int max_plies = 60;               // a game is cut off (a draw) after this many plies
};

// `count` samples of random legal games: each position's legal moves with random visit shares, a
// random root WDL and soft value, z from the game's result, game ids derived from the seed (so
// (game_id, ply) is unique within one call and across seeds). Deterministic for a seed.
std::vector<sample::ChessSample> RandomChessSamples(std::size_t count,
                                                    const RandomSampleOptions& options);

// `count` records of `record_bytes` random bytes each, back to back. Deterministic for a seed.
std::vector<std::byte> RandomRecords(std::size_t count, std::size_t record_bytes,
                                     std::uint64_t seed);

}  // namespace az::replayd
