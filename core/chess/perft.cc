#include "core/chess/perft.h"

#include "core/base/check.h"
#include "core/chess/movegen_internal.h"

namespace az::chess {
namespace {

// Copy-make, templated on the side to move so that the generator needs no colour dispatch; the
// last ply only counts (bulk counting), which is where most of the tree is.
template <Color Us>
std::uint64_t PerftRecursive(const Position& pos, int depth) {
  if (depth == 1) {
    internal::MoveCounter counter;
    internal::GenerateLegal<Us>(pos, counter);
    return static_cast<std::uint64_t>(counter.count());
  }
  MoveList moves;
  internal::MoveWriter writer(moves.data());
  internal::GenerateLegal<Us>(pos, writer);
  const int n = writer.count();
  std::uint64_t nodes = 0;
  for (int i = 0; i < n; ++i) {
    Position child = pos;
    child.MakeMove(moves.data()[i]);
    nodes += PerftRecursive<~Us>(child, depth - 1);
  }
  return nodes;
}

}  // namespace

std::uint64_t Perft(const Position& position, int depth) {
  AZ_CHECK(depth >= 0, "perft depth must be >= 0");
  if (depth == 0) return 1;
  return position.SideToMove() == kWhite ? PerftRecursive<kWhite>(position, depth)
                                         : PerftRecursive<kBlack>(position, depth);
}

std::vector<PerftDivideEntry> PerftDivide(const Position& position, int depth) {
  AZ_CHECK(depth >= 1, "perft divide depth must be >= 1");
  MoveList moves;
  internal::MoveWriter writer(moves.data());
  internal::GenerateLegal(position, writer);
  moves.set_size(writer.count());
  std::vector<PerftDivideEntry> entries;
  entries.reserve(static_cast<std::size_t>(moves.size()));
  for (Move m : moves) {
    Position child = position;
    child.MakeMove(m);
    entries.push_back({m, Perft(child, depth - 1)});
  }
  return entries;
}

}  // namespace az::chess
