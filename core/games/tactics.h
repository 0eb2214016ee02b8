#pragma once

// One-ply tactics over any game's rules (game.h's GameDefinition): whether a move wins at once,
// and whether it hands the opponent a win at once. Shared by self-play's careful random openings
// (services/selfplay/driver/openings.h), az-score's careful play and `onestep` baseline, and
// az-arena's `onestep` player. Each costs one move generation per reply: cheap for Connect Four
// and tic-tac-toe, about a thousand move generations a call in chess.

#include <vector>

#include "core/games/game.h"

namespace az::games {

// True when playing `move` in `state` ends the game at once with a win for the side playing it.
template <GameDefinition G>
bool WinsAtOnce(typename G::State state, typename G::Move move) {
  typename G::Move replies[G::kMaxMoves];
  G::Apply(state, move);
  return G::Outcome(state, G::LegalMoves(state, replies)) == GameOutcome::kLoss;
}

// The legal moves of `state` that win at once, in LegalMoves order.
template <GameDefinition G>
std::vector<typename G::Move> WinningMoves(const typename G::State& state) {
  typename G::Move moves[G::kMaxMoves];
  const int count = G::LegalMoves(state, moves);
  std::vector<typename G::Move> wins;
  for (int i = 0; i < count; ++i) {
    if (WinsAtOnce<G>(state, moves[i])) wins.push_back(moves[i]);
  }
  return wins;
}

// True when, after `move`, the game goes on and the opponent has no move that wins at once: the
// move neither ends the game nor hands the opponent a win (it blocks every threat it must, and
// in Connect Four never plays under the opponent's winning cell).
template <GameDefinition G>
bool Careful(const typename G::State& state, typename G::Move move) {
  typename G::State child = state;
  G::Apply(child, move);
  typename G::Move replies[G::kMaxMoves];
  const int count = G::LegalMoves(child, replies);
  if (IsTerminal(G::Outcome(child, count))) return false;
  for (int i = 0; i < count; ++i) {
    if (WinsAtOnce<G>(child, replies[i])) return false;
  }
  return true;
}

}  // namespace az::games
