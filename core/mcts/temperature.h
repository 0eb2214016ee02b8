#pragma once

// Temperature move selection over the root's visit counts.

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/mcts/random.h"

namespace az::mcts {

// Picks index i with probability visits[i]^(1/tau) / sum_j visits[j]^(1/tau). tau <= 0 picks the
// most visited (the first on ties). Needs at least one visit (checked).
std::size_t SampleByTemperature(std::span<const std::uint32_t> visits, float tau, Rng& rng);

}  // namespace az::mcts
