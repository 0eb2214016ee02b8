#pragma once

// Players for az-arena, for any registered game (core/games/registry.h): the two baselines a
// learning network is measured against, and a network player (a weights file, with or without
// MCTS).
//
//   random    a uniformly random legal move
//   onestep   one ply of lookahead each way: plays a move that wins at once, else a move after
//             which the opponent cannot win at once (Connect Four: blocks a threat, never plays
//             under the opponent's winning cell; chess: mates in one, avoids allowing a mate in
//             one), else a random move
//   MODEL     a weights file of the game's network: MCTS with `simulations` playouts (no root
//             noise, most visited move), or the raw policy's most probable move with 0
//
// Not thread-safe: one player per game loop.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/games/game.h"
#include "core/games/tactics.h"
#include "core/mcts/random.h"
#include "core/mcts/search.h"
#include "core/nn/network_evaluator.h"

namespace az::arena {

template <games::GameDefinition G>
class Player {
 public:
  using State = typename G::State;
  using Move = typename G::Move;
  virtual ~Player() = default;
  // A legal move of `state` (a state where the game goes on). Errors only from a network
  // (LibTorch).
  virtual Result<Move> Choose(const State& state, mcts::Rng& rng) = 0;
  virtual const std::string& name() const = 0;
};

struct PlayerOptions {
  int simulations = 32;  // for a network: playouts per move; 0: raw policy
  int threads = 1;       // LibTorch intra-op threads
};

// The one-ply checks of the onestep player (core/games/tactics.h).
using games::WinningMoves;
using games::WinsAtOnce;

namespace internal {

template <games::GameDefinition G>
typename G::Move Pick(const std::vector<typename G::Move>& moves, mcts::Rng& rng) {
  AZ_CHECK(!moves.empty(), "no move to pick from");
  return moves[rng.Next() % moves.size()];
}

template <games::GameDefinition G>
std::vector<typename G::Move> AllMoves(const typename G::State& state) {
  typename G::Move moves[G::kMaxMoves];
  const int count = G::LegalMoves(state, moves);
  return std::vector<typename G::Move>(moves, moves + count);
}

template <games::GameDefinition G>
class RandomPlayer final : public Player<G> {
 public:
  Result<typename G::Move> Choose(const typename G::State& state, mcts::Rng& rng) override {
    return Pick<G>(AllMoves<G>(state), rng);
  }
  const std::string& name() const override { return name_; }

 private:
  std::string name_ = "random";
};

template <games::GameDefinition G>
class OneStepPlayer final : public Player<G> {
 public:
  Result<typename G::Move> Choose(const typename G::State& state, mcts::Rng& rng) override {
    if (std::vector<typename G::Move> wins = WinningMoves<G>(state); !wins.empty()) {
      return Pick<G>(wins, rng);
    }
    const std::vector<typename G::Move> moves = AllMoves<G>(state);
    std::vector<typename G::Move> safe;
    for (const typename G::Move& move : moves) {
      typename G::State next = state;
      G::Apply(next, move);
      if (WinningMoves<G>(next).empty()) safe.push_back(move);
    }
    return Pick<G>(safe.empty() ? moves : safe, rng);
  }
  const std::string& name() const override { return name_; }

 private:
  std::string name_ = "onestep";
};

template <games::GameDefinition G>
class NetworkPlayer final : public Player<G> {
 public:
  NetworkPlayer(std::string name, std::unique_ptr<nn::NetworkEvaluator<G>> evaluator,
                int simulations, mcts::Search<G> search)
      : name_(std::move(name)),
        evaluator_(std::move(evaluator)),
        simulations_(simulations),
        search_(std::move(search)) {}

  Result<typename G::Move> Choose(const typename G::State& state, mcts::Rng&) override {
    if (simulations_ == 0) {
      AZ_ASSIGN_OR_RETURN(auto choice, evaluator_->BestRawMove(state));
      return choice.move;
    }
    search_.SetRoot(state);
    AZ_RETURN_IF_ERROR(search_.Run(*evaluator_, simulations_));
    return search_.BestMove();
  }
  const std::string& name() const override { return name_; }

 private:
  std::string name_;
  std::unique_ptr<nn::NetworkEvaluator<G>> evaluator_;
  int simulations_;
  mcts::Search<G> search_;
};

}  // namespace internal

// "random", "onestep", or the path of a weights file of a G network. NOT_FOUND / DATA_LOSS /
// FAILED_PRECONDITION for a file that is missing, damaged, or not a G network.
template <games::GameDefinition G>
Result<std::unique_ptr<Player<G>>> MakePlayer(const std::string& spec,
                                              const PlayerOptions& options) {
  if (spec == "random") return std::unique_ptr<Player<G>>(new internal::RandomPlayer<G>());
  if (spec == "onestep") return std::unique_ptr<Player<G>>(new internal::OneStepPlayer<G>());
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kCpu;
  runtime.intra_op_threads = options.threads;
  AZ_ASSIGN_OR_RETURN(auto evaluator, nn::NetworkEvaluator<G>::Load(spec, runtime));
  mcts::SearchOptions search;
  search.max_batch = 8;
  search.virtual_loss = mcts::VirtualLoss::kLoss;
  search.reuse_tree = false;
  search.max_nodes = 1u << 16;
  AZ_ASSIGN_OR_RETURN(mcts::Search<G> made, mcts::Search<G>::Create(search, G::NewGame(0)));
  return std::unique_ptr<Player<G>>(new internal::NetworkPlayer<G>(
      spec, std::move(evaluator), options.simulations, std::move(made)));
}

}  // namespace az::arena
