#pragma once

// az-score's internals, shared by the scorer (solver_score.cc) and the position-set generator
// (position_set.cc): a position with the solver's value of each of its moves, and the one-ply
// checks the generator's careful play and the `onestep` baseline use. Generic over any game with
// a solver (core/games/game.h's Solvable).

#include <algorithm>
#include <vector>

#include "core/games/game.h"
#include "core/games/tactics.h"

namespace az::score::internal {

// A scored position: its state, its legal moves (LegalMoves order), the solver's value of each for
// the side to move (+1, 0, -1) and the best of them.
template <games::GameDefinition G>
struct SolvedPosition {
  typename G::State state;
  std::vector<typename G::Move> moves;
  std::vector<int> values;
  int best = -1;
  int band = 0;    // index into the set's bands
  int source = 0;  // index into kSourceNames (position_set.h); 0 for sets made at run time
  // Every legal move keeps the value: any player scores the position.
  bool trivial() const {
    return std::all_of(values.begin(), values.end(), [this](int v) { return v == best; });
  }
};

// The value of playing `move` in `state`, for the side to move, by the game's solver.
template <games::Solvable G>
int MoveValue(const typename G::State& state, typename G::Move move) {
  typename G::State child = state;
  G::Apply(child, move);
  typename G::Move moves[G::kMaxMoves];
  const games::GameOutcome outcome = G::Outcome(child, G::LegalMoves(child, moves));
  if (games::IsTerminal(outcome)) return -static_cast<int>(games::OutcomeValue(outcome));
  return -G::Solve(child);
}

// `state` (the game going on) with every move solved.
template <games::Solvable G>
SolvedPosition<G> Solve(const typename G::State& state) {
  SolvedPosition<G> position{state, {}, {}, -1};
  typename G::Move moves[G::kMaxMoves];
  const int count = G::LegalMoves(state, moves);
  for (int i = 0; i < count; ++i) {
    position.moves.push_back(moves[i]);
    position.values.push_back(MoveValue<G>(state, moves[i]));
    position.best = std::max(position.best, position.values.back());
  }
  return position;
}

// True when the game is over in `state`.
template <games::GameDefinition G>
bool GameOver(const typename G::State& state) {
  typename G::Move moves[G::kMaxMoves];
  return games::IsTerminal(G::Outcome(state, G::LegalMoves(state, moves)));
}

// The one-ply checks of the generator's careful play and the onestep baseline.
using games::Careful;
using games::WinsAtOnce;

}  // namespace az::score::internal
