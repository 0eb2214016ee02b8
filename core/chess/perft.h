#pragma once

// Perft: the number of leaf nodes of the legal move tree to a fixed depth, the standard check of a
// move generator. Single-threaded, leaves counted in bulk at the last ply.

#include <cstdint>
#include <vector>

#include "core/chess/position.h"
#include "core/chess/types.h"

namespace az::chess {

// Leaf count at `depth` plies (depth 0 is 1). depth must be >= 0.
std::uint64_t Perft(const Position& position, int depth);

struct PerftDivideEntry {
  Move move;
  std::uint64_t nodes;  // Perft(position after move, depth - 1)
};

// One entry per legal root move, in generation order; the entries sum to Perft(position, depth).
// depth must be >= 1.
std::vector<PerftDivideEntry> PerftDivide(const Position& position, int depth);

}  // namespace az::chess
