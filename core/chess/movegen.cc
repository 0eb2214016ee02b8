#include "core/chess/movegen.h"

#include "core/chess/movegen_internal.h"

namespace az::chess {

void GenerateLegalMoves(const Position& position, MoveList& moves) {
  internal::MoveWriter writer(moves.data());
  internal::GenerateLegal(position, writer);
  moves.set_size(writer.count());
}

MoveList LegalMoves(const Position& position) {
  MoveList moves;
  GenerateLegalMoves(position, moves);
  return moves;
}

int CountLegalMoves(const Position& position) {
  internal::MoveCounter counter;
  internal::GenerateLegal(position, counter);
  return counter.count();
}

}  // namespace az::chess
