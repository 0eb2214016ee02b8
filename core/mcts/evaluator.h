#pragma once

// What the search hands out for evaluation and what comes back. The search gathers a batch of
// leaves (Search::Gather), someone evaluates them (in process, a fake in tests, or another process
// through shared memory, maybe asynchronously), and the search takes the results back
// (Search::Backup). Run() chains the two with any type modelling BatchEvaluator, a template
// parameter: no virtual call. `Evaluator<G>` is an abstract base for when the evaluator is chosen
// at run time (one virtual call per batch, not per node).

#include <array>
#include <concepts>
#include <cstdint>
#include <span>

#include "core/base/status.h"
#include "core/games/game.h"

namespace az::mcts {

// One leaf to evaluate: the compact record of its state (what a network encodes, or what goes to
// another process), its legal moves, and the policy index of each move (Game::PolicyIndex: where
// its prior sits in the network's policy head). All three point into the search and stay valid
// until the search's next Backup() or Cancel(); copy the record to keep it longer.
template <games::Game G>
struct Leaf {
  const typename G::Record* record = nullptr;
  std::span<const typename G::Move> moves;
  std::span<const std::uint16_t> policy_indices;  // same size and order as moves
};

// Where the evaluator writes a leaf's result; both spans point into the search, so a copy of a
// LeafEval (e.g. in a batch gathered from several searches) writes into the right search.
//   priors: one per move of the leaf, in the same order; any non-negative scale (the search
//     normalises; negative or NaN entries count as 0, and all-zero becomes uniform).
//   wdl: win, draw and loss probabilities for the leaf's side to move, non-negative (normalised by
//     the search; NaN or all-zero counts as a draw and as a bad evaluation in the search's stats).
struct LeafEval {
  std::span<float> priors;
  std::span<float, 3> wdl;

  void SetWdl(float win, float draw, float loss) {
    wdl[0] = win;
    wdl[1] = draw;
    wdl[2] = loss;
  }
};

// Evaluates `leaves` into `evals` (same size, same order). An error aborts the search step that
// asked for it (the leaves are cancelled, the tree stays consistent).
template <typename E, typename G>
concept BatchEvaluator = games::Game<G> &&
    requires(E& evaluator, std::span<const Leaf<G>> leaves, std::span<LeafEval> evals) {
  { evaluator.Evaluate(leaves, evals) } -> std::same_as<Status>;
};

template <games::Game G>
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual Status Evaluate(std::span<const Leaf<G>> leaves, std::span<LeafEval> evals) = 0;
};

}  // namespace az::mcts
