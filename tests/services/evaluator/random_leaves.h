#pragma once

// Leaves to send to an evaluator, as a search would: positions of random games (fixed seed) with
// their legal moves and the moves' policy indices. Shared by the evaluator's service test and its
// benchmark.

#include <cstdint>
#include <random>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/encoding/move_index.h"
#include "core/encoding/position_record.h"
#include "core/games/chess/chess.h"
#include "core/games/connect4/connect_four.h"
#include "core/mcts/evaluator.h"

namespace az::service::testing {

template <typename G>
struct RandomLeaf {
  typename G::Record record;
  std::vector<typename G::Move> moves;
  std::vector<std::uint16_t> indices;
  mcts::Leaf<G> Leaf() const { return {&record, moves, indices}; }
};

// `n` positions of random chess games; a game restarts when it ends or passes `max_ply`.
inline std::vector<RandomLeaf<games::Chess>> RandomChessLeaves(int n, std::uint32_t seed,
                                                               int max_ply = 1 << 30) {
  std::vector<RandomLeaf<games::Chess>> leaves;
  std::mt19937 rng(seed);
  chess::Game game;
  while (static_cast<int>(leaves.size()) < n) {
    const chess::MoveList moves = chess::LegalMoves(game.position());
    if (moves.empty() || game.Outcome().is_terminal() || game.ply() > max_ply) {
      game = chess::Game();
      continue;
    }
    RandomLeaf<games::Chess> leaf;
    leaf.record = encoding::MakeRecord(game);
    for (chess::Move m : moves) {
      leaf.moves.push_back(m);
      leaf.indices.push_back(static_cast<std::uint16_t>(encoding::MoveToIndex(game.position(), m)));
    }
    leaves.push_back(std::move(leaf));
    game.Play(moves[rng() % moves.size()]);
  }
  return leaves;
}

// `n` positions of random Connect Four games; a game restarts when it ends.
inline std::vector<RandomLeaf<games::ConnectFour>> RandomConnectFourLeaves(int n,
                                                                           std::uint32_t seed) {
  using games::ConnectFour;
  std::vector<RandomLeaf<ConnectFour>> leaves;
  std::mt19937 rng(seed);
  games::ConnectFourPosition position;
  while (static_cast<int>(leaves.size()) < n) {
    games::ConnectFourMove moves[7];
    const int count = ConnectFour::LegalMoves(position, moves);
    if (games::IsTerminal(ConnectFour::Outcome(position, count))) {
      position = {};
      continue;
    }
    RandomLeaf<ConnectFour> leaf;
    leaf.record = position.ToRecord();
    for (int i = 0; i < count; ++i) {
      leaf.moves.push_back(moves[i]);
      leaf.indices.push_back(moves[i].column);
    }
    leaves.push_back(std::move(leaf));
    position.Play(moves[rng() % count].column);
  }
  return leaves;
}

}  // namespace az::service::testing
