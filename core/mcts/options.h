#pragma once

// The search's configuration, with the defaults of the issue, and its validation (options come from
// config files and flags: a bad value is an InvalidArgument, not a crash).

#include <cstdint>

#include "core/base/status.h"

namespace az::mcts {

// How a playout in flight (virtual loss, VL) counts in its child's Q while it waits for evaluation.
enum class VirtualLoss : std::uint8_t {
  // The formula: each in-flight playout is a virtual visit worth Q_parent; an unvisited
  // child
  // in flight is valued Q_parent. Least distortion of Q, but it makes a pending leaf MORE
  // attractive
  // than its unvisited siblings (their FPU is below Q_parent), so batches from one tree collide
  // often (docs/mcts.md has the numbers).
  kParentQ = 0,
  // Each in-flight playout counts as a loss (-1) for the player choosing the child (lc0, KataGo):
  // steers concurrent playouts apart, at the cost of a pessimistic Q while they are in flight.
  kLoss = 1,
};

// How the root picks the child each playout descends into.
enum class RootSelection : std::uint8_t {
  // PUCT, as below the root (with Dirichlet root noise in self-play); the training target is the
  // visit distribution.
  kPuct = 0,
  // Gumbel AlphaZero (core/mcts/gumbel.h): Gumbel-top-k sampling without replacement and
  // sequential halving over the visit budget; the training target is softmax(logits +
  // sigma(completed Q)), an improvement over the prior even with a handful of playouts. Below the
  // root, PUCT. Root noise is the Gumbel noise (no Dirichlet). Every move starts a fresh tree
  // (reuse_tree is ignored: inherited visits would break the halving schedule).
  kGumbel = 1,
};

struct SearchOptions {
  // PUCT: Q(s,a) + c_puct * P(s,a) * sqrt(N(s)) / (1 + N(s,a) + VL(s,a)).
  float c_puct = 1.5f;
  // Dynamic first-play urgency: an unvisited child without virtual loss is valued
  // Q_parent - fpu_base * (1 - P(s,a)).
  float fpu_base = 1.0f;
  // Entropic risk: visited children are valued mean + risk_beta / 2 * variance (clamped to [-1,
  // 1]). 0 is the plain, risk-neutral search at no extra cost; < 0 is risk-averse, > 0
  // risk-seeking.
  float risk_beta = 0.0f;
  // Contempt for draws: a terminal draw below the root (stalemate, a repetition, the fifty-move
  // rule) is valued draw_score for the side to move there, so -draw_score for the side that played
  // into it. Both sides of a self-play game then take a draw only when nothing else is better; a
  // network that values every position near 0 no longer makes an exact 0 (a repetition) the best
  // move on offer. 0: draws are exactly 0. [0, 1]
  float draw_score = 0.0f;
  // See VirtualLoss. Only matters when more than one playout per tree is in flight (max_batch > 1).
  VirtualLoss virtual_loss = VirtualLoss::kParentQ;

  // Dirichlet noise on the root priors: P' = (1 - epsilon) P + epsilon * Dir(alpha). Self-play on,
  // analysis off.
  bool root_noise = false;
  float dirichlet_alpha = 0.3f;
  float dirichlet_epsilon = 0.25f;

  // The root's selection rule and Gumbel's constants (core/mcts/gumbel.h: m, c_visit, c_scale).
  RootSelection root_selection = RootSelection::kPuct;
  int gumbel_considered = 16;
  float gumbel_c_visit = 50.0f;
  float gumbel_c_scale = 0.1f;

  // At expansion, look one move ahead for the game's end: each child's state is checked (one Apply,
  // LegalMoves and the game's tree outcome per move) and a move that ends the game is a terminal
  // child before it is ever visited, valued exactly (a win +1, a draw 0 or the draw score) instead
  // of at first-play urgency. The first visit to a node with a winning move then plays it, so a
  // win in one is never missed and a move that allows one is refuted at once, whatever the
  // priors. Costs a move generation per child at each expansion (a few microseconds in chess,
  // next to a network evaluation's milliseconds).
  bool detect_terminal_children = true;
  // MCTS-solver: a node whose children prove its value (one of them a win for the side to move
  // here, or all of them decided) becomes terminal with that outcome, so every later playout
  // through it backs up the exact value and its parent's selection sees it exactly; proofs climb
  // toward the root as far as they go (the root itself is never closed: its moves are what the
  // search is for). Forced wins a few plies deep are then searched once, not sampled.
  bool propagate_proofs = true;

  // Most playouts gathered per batch (Gather's limit, and Run's batch for its evaluator).
  int max_batch = 16;
  // After Advance(move), keep the subtree below `move` instead of starting a fresh tree.
  bool reuse_tree = true;
  // Bound on the arena (64 bytes a node): a search that reaches it keeps going, but evaluates the
  // leaves it cannot expand without growing the tree.
  std::uint32_t max_nodes = 1u << 22;
  // Seeds the search's PRNG (Dirichlet noise and temperature sampling).
  std::uint64_t seed = 0x5EED;

  // InvalidArgument naming the first field out of range.
  Status Validate() const;
};

// Temperature move selection: sample in proportion to N^(1/tau) for the first `moves` plies of a
// game, then play the most visited move.
struct TemperatureOptions {
  int moves = 30;
  float tau = 1.0f;

  Status Validate() const;
  // The temperature for the move at `ply` (0-based): tau before `moves`, else 0 (most visited).
  float AtPly(int ply) const { return ply < moves ? tau : 0.0f; }
};

}  // namespace az::mcts
