#pragma once

// Monte Carlo tree search with PUCT over any game modelling az::games::Game (core/games/game.h).
//
// The search is driven in two steps, so that one process can run many games and batch their leaves
// for one evaluator (in another process, maybe asynchronously):
//
//   search.Gather(k);                          // select up to k leaves, virtual loss on their
//   paths
//   ... evaluate search.leaves() into search.evals() somewhere, some time ...
//   search.Backup();                           // expand the leaves and back their values up
//
// Run(evaluator, visits) is that loop with an in-process evaluator. Terminal states (the game's
// Outcome at the root, games::TreeOutcome below it) are valued exactly and never handed out: a
// playout that reaches one is backed up inside Gather. Formulas: core/mcts/puct.h. Design and
// numbers: docs/mcts.md.
//
// Threading: a Search is used by one thread at a time (it may move between threads between calls).
// Node statistics are relaxed atomics, so a monitoring thread may read them while the owner writes,
// and seeing a value a step old is all that can happen; two threads must not call into one Search
// concurrently. A self-play process runs many Searches, one per game, on as many threads as it
// likes.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/base/status.h"
#include "core/games/game.h"
#include "core/mcts/evaluator.h"
#include "core/mcts/gumbel.h"
#include "core/mcts/node.h"
#include "core/mcts/node_arena.h"
#include "core/mcts/options.h"
#include "core/mcts/puct.h"
#include "core/mcts/random.h"
#include "core/mcts/temperature.h"

namespace az::mcts {

// Win, draw and loss probabilities, for the side to move at the root.
struct Wdl {
  double win = 0.0;
  double draw = 0.0;
  double loss = 0.0;
};

template <typename Move>
struct ChildStats {
  Move move;
  std::uint32_t visits = 0;
  float prior = 0.0f;   // after root noise, when it is on
  double q = 0.0;       // Q for the root's side to move (risk-adjusted); 0 when unvisited
  // The policy training target: visits / all the root's child visits (PUCT), or Gumbel's
  // softmax(logit + sigma(completed Q)) (RootSelection::kGumbel).
  double policy = 0.0;
};

// Counters since the Search was created (except inherited_visits).
struct SearchStats {
  std::uint64_t playouts = 0;           // backed-up playouts: evaluated leaves + terminal visits
  std::uint64_t evaluated_leaves = 0;   // leaves handed out and backed up
  std::uint64_t terminal_playouts = 0;  // playouts that ended on a terminal state
  std::uint64_t collisions = 0;         // selections that reached a leaf already in flight
  std::uint64_t cancelled_leaves = 0;   // leaves dropped by Cancel()
  std::uint64_t bad_evaluations = 0;    // evaluations with NaN / all-zero WDL or priors
  std::uint64_t unexpanded_full = 0;    // evaluated leaves left unexpanded: arena at max_nodes
  std::uint64_t proven_nodes = 0;       // nodes the solver closed (propagate_proofs)
  std::uint32_t inherited_visits = 0;   // the root's visits kept by the last Advance
};

template <games::Game G>
class Search {
 public:
  using State = typename G::State;
  using Move = typename G::Move;

  struct GatherResult {
    int leaves = 0;             // handed out: leaves() / evals()
    int terminal_playouts = 0;  // completed inside Gather
    int collisions = 0;         // selections abandoned on a leaf already in flight
  };

  // A search over a fresh tree rooted at `root`. InvalidArgument when the options are out of range.
  static Result<Search> Create(const SearchOptions& options, const State& root) {
    AZ_RETURN_IF_ERROR(options.Validate().WithContext("search options"));
    return Search(options, root);
  }

  Search(Search&&) noexcept = default;
  Search& operator=(Search&&) noexcept = default;

  // Starts a fresh tree at `state` (O(1): the arena is reset, not freed). No batch may be pending.
  void SetRoot(const State& state) {
    AZ_CHECK(pending_.empty(), "SetRoot with leaves in flight: Backup() or Cancel() first");
    NewTree();
    root_state_ = state;
    scratch_ = state;
    root_outcome_ = ComputeOutcome(root_state_);
  }

  // Plays `move` (legal at the root) and makes the resulting state the root. With reuse_tree, the
  // subtree below `move` is kept (copied compactly into the second arena, O(its size)) with its
  // statistics; otherwise, or when that child was never expanded, the tree starts fresh. Root
  // noise, when on, is drawn afresh for the new root. No batch may be pending.
  void Advance(Move move) {
    AZ_CHECK(pending_.empty(), "Advance with leaves in flight: Backup() or Cancel() first");
    State next = root_state_;
    G::Apply(next, move);
    const std::uint16_t packed = G::PackMove(move);
    std::uint32_t child = kNullNode;
    const Node& root = arena_[root_];
    if (root.state == NodeState::kExpanded) {
      for (std::uint32_t i = 0; i < root.num_children; ++i) {
        if (arena_[root.first_child + i].move == packed) child = root.first_child + i;
      }
    }
    stats_.inherited_visits = 0;
    if (options_.reuse_tree && !gumbel() && child != kNullNode &&
        arena_[child].state == NodeState::kExpanded && CopySubtreeToSpare(child)) {
      std::swap(arena_, spare_);
      root_ = 0;
      stats_.inherited_visits = arena_[root_].N();
    } else {
      NewTree();
    }
    root_state_ = std::move(next);
    scratch_ = root_state_;
    root_outcome_ = ComputeOutcome(root_state_);
    if (options_.root_noise && arena_[root_].state == NodeState::kExpanded) ApplyRootNoise();
  }

  // Searches until the root's children hold `visits` visits in total (>= 0; visits inherited by
  // Advance count, so a fresh tree gets exactly `visits` playouts below the root, plus the root's
  // own evaluation). Calls evaluator.Evaluate on batches of up to max_batch leaves; blocks as long
  // as that does. FailedPrecondition when the root is terminal; an evaluator's error is returned
  // with the in-flight leaves cancelled (the tree stays consistent and usable).
  template <typename E>
  requires BatchEvaluator<E, G> Status Run(E& evaluator, int visits) {
    AZ_CHECK(visits >= 0);
    AZ_CHECK(pending_.empty(), "Run with leaves in flight: Backup() or Cancel() first");
    SetVisitBudget(visits);
    if (games::IsTerminal(root_outcome_)) {
      return FailedPrecondition("the root state is terminal: there is no move to search");
    }
    for (;;) {
      const bool expanded = arena_[root_].state == NodeState::kExpanded;
      const std::uint32_t done = RootChildVisits();
      if (expanded && done >= static_cast<std::uint32_t>(visits)) return Status::Ok();
      const int want =
          expanded ? static_cast<int>(std::min<std::uint32_t>(options_.max_batch, visits - done))
                   : 1;
      const GatherResult gathered = Gather(want);
      AZ_CHECK(gathered.leaves + gathered.terminal_playouts > 0, "a batch made no progress");
      if (gathered.leaves == 0) continue;
      Status status = evaluator.Evaluate(leaves(), evals());
      if (!status.ok()) {
        Cancel();
        return status.WithContext("evaluating a batch of leaves");
      }
      Backup();
    }
  }

  // Step 1: selects up to `max_playouts` (1..max_batch, checked) playouts from the root. A playout
  // that reaches an unevaluated leaf hands it out (leaves(), evals(), with virtual loss left on its
  // path); one that reaches a terminal state is backed up at once; one that reaches a leaf already
  // handed out in this batch is a collision: its virtual loss is removed and it does not count.
  // Stops after max_playouts playouts or max_playouts collisions. Never blocks. No batch may be
  // pending.
  GatherResult Gather(int max_playouts) {
    AZ_CHECK(pending_.empty(), "Gather with leaves in flight: Backup() or Cancel() first");
    AZ_CHECK(max_playouts >= 1 && max_playouts <= options_.max_batch, "max_playouts out of range");
    GatherResult result;
    paths_.clear();
    std::size_t moves_used = 0;
    while (result.leaves + result.terminal_playouts < max_playouts &&
           result.collisions < max_playouts) {
      // scratch_ is the root state; the playout applies its moves and takes them back at the end.
      path_moves_.clear();
      const auto path_begin = static_cast<std::uint32_t>(paths_.size());
      std::uint32_t index = root_;
      for (;;) {
        Node& node = arena_[index];
        paths_.push_back(index);
        node.virtual_loss.fetch_add(1, std::memory_order_relaxed);
        if (node.state == NodeState::kExpanded) {
          index = index == root_ && gumbel() ? GumbelRootChild() : SelectChild(arena_, node, params_);
          const Move move = G::UnpackMove(scratch_, arena_[index].move);
          G::Apply(scratch_, move);
          path_moves_.push_back(move);
          continue;
        }
        if (node.state == NodeState::kUnexpanded) {
          Move* moves = leaf_moves_.data() + moves_used;
          const int count = G::LegalMoves(scratch_, moves);
          AZ_CHECK(count >= 0 && count <= G::kMaxMoves, "LegalMoves beyond kMaxMoves");
          // Below the root, the game's tree rules (chess: a repetition is a draw).
          const games::GameOutcome outcome =
              index == root_ ? G::Outcome(scratch_, count) : games::TreeOutcome<G>(scratch_, count);
          if (games::IsTerminal(outcome)) {
            node.state = NodeState::kTerminal;
            node.outcome = outcome;
          } else {
            AZ_CHECK(count > 0, "a state with no legal moves must be terminal");
            node.state = NodeState::kPending;
            std::uint16_t* indices = leaf_policy_.data() + moves_used;
            for (int i = 0; i < count; ++i) {
              indices[i] = static_cast<std::uint16_t>(G::PolicyIndex(scratch_, moves[i]));
            }
            if (options_.detect_terminal_children) {
              games::GameOutcome* outcomes = leaf_child_outcomes_.data() + moves_used;
              for (int i = 0; i < count; ++i) {
                G::Apply(scratch_, moves[i]);
                outcomes[i] = games::TreeOutcome<G>(scratch_, G::LegalMoves(scratch_, lookahead_.data()));
                G::Undo(scratch_, moves[i]);
              }
            }
            leaf_records_[result.leaves] = G::ToRecord(scratch_);
            pending_.push_back({index, path_begin, static_cast<std::uint32_t>(paths_.size()),
                                static_cast<std::uint32_t>(moves_used)});
            leaves_.push_back({&leaf_records_[result.leaves], std::span<const Move>(moves, count),
                               std::span<const std::uint16_t>(indices, count)});
            std::array<float, 3>& wdl = leaf_wdl_[result.leaves];
            wdl = {0.0f, 1.0f, 0.0f};
            evals_.push_back({std::span<float>(leaf_priors_.data() + moves_used, count),
                              std::span<float, 3>(wdl)});
            moves_used += count;
            ++result.leaves;
            break;
          }
        }
        if (node.state == NodeState::kTerminal) {
          const bool draw = node.outcome == games::GameOutcome::kDraw;
          const auto path_end = static_cast<std::uint32_t>(paths_.size());
          BackupPath(path_begin, path_end,
                     games::OutcomeValue(node.outcome) + (draw ? options_.draw_score : 0.0f),
                     draw ? 1.0 : 0.0);
          // A state found terminal just now may close its parent (and so on up).
          if (path_end - path_begin >= 2) ProvePath(path_begin, path_end - 1);
          ++result.terminal_playouts;
        } else {  // kPending: another playout of this batch is waiting on this leaf
          RemoveVirtualLoss(path_begin, static_cast<std::uint32_t>(paths_.size()));
          ++result.collisions;
        }
        paths_.resize(path_begin);
        break;
      }
      for (std::size_t i = path_moves_.size(); i-- > 0;) G::Undo(scratch_, path_moves_[i]);
    }
    stats_.terminal_playouts += result.terminal_playouts;
    stats_.collisions += result.collisions;
    return result;
  }

  // The batch handed out by the last Gather, valid until Backup() or Cancel().
  std::span<const Leaf<G>> leaves() const { return leaves_; }
  std::span<LeafEval> evals() { return evals_; }
  bool has_pending() const { return !pending_.empty(); }

  // Step 2: takes evals() for the pending leaves: expands each (children by decreasing prior) and
  // backs its value up the path, negating it at every ply and removing the virtual loss.
  void Backup() {
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      const PendingLeaf& leaf = pending_[i];
      Node& node = arena_[leaf.node];
      double win, draw, loss;
      SanitizeWdl(evals_[i].wdl, win, draw, loss);
      SanitizePriors(evals_[i].priors);
      Expand(node, leaves_[i].moves, evals_[i].priors, leaf.node == root_, leaf.moves_offset);
      BackupPath(leaf.path_begin, leaf.path_end, win - loss, draw);
      // Its children, found terminal by the lookahead, may already decide it (and so on up).
      ProvePath(leaf.path_begin, leaf.path_end);
      if (leaf.node == root_ && node.state == NodeState::kExpanded) {
        if (gumbel()) {
          InitGumbelRoot(win - loss);
        } else if (options_.root_noise) {
          ApplyRootNoise();
        }
      }
    }
    stats_.evaluated_leaves += pending_.size();
    ClearBatch();
  }

  // Drops the pending batch (e.g. its evaluation failed or timed out): removes its virtual loss and
  // makes its leaves unevaluated again.
  void Cancel() {
    for (const PendingLeaf& leaf : pending_) {
      RemoveVirtualLoss(leaf.path_begin, leaf.path_end);
      arena_[leaf.node].state = NodeState::kUnexpanded;
    }
    stats_.cancelled_leaves += pending_.size();
    ClearBatch();
  }

  // The playouts this root's search will get (Gumbel plans its sequential halving over them; PUCT
  // ignores it). Run sets it; a caller driving Gather itself sets it before gathering at a new
  // root. Simulations beyond it keep deepening the actions that survived the halving.
  void SetVisitBudget(int visits) {
    AZ_CHECK(visits >= 0);
    visit_budget_ = visits;
  }
  // Root noise (Dirichlet for PUCT, Gumbel noise for Gumbel) for roots expanded from now on: a
  // self-play engine turns it off for the cheap searches of playout-cap randomisation.
  void SetRootNoise(bool on) { options_.root_noise = on; }
  bool gumbel() const { return options_.root_selection == RootSelection::kGumbel; }

  // --- The root, after a search. ---

  const State& root_state() const { return root_state_; }
  games::GameOutcome root_outcome() const { return root_outcome_; }
  const Node& root() const { return arena_[root_]; }
  std::uint32_t root_index() const { return root_; }
  const NodeArena& arena() const { return arena_; }
  const SearchStats& stats() const { return stats_; }

  // The sum of the visits of the root's children.
  std::uint32_t RootChildVisits() const {
    const Node& root = arena_[root_];
    if (root.state != NodeState::kExpanded) return 0;
    std::uint32_t total = 0;
    for (std::uint32_t i = 0; i < root.num_children; ++i) total += arena_[root.first_child + i].N();
    return total;
  }

  // Every legal move at the root (empty before the root is evaluated), by decreasing prior.
  std::vector<ChildStats<Move>> RootChildren() const {
    std::vector<ChildStats<Move>> children;
    const Node& root = arena_[root_];
    if (root.state != NodeState::kExpanded) return children;
    const double q_parent = root.Mean();
    const double total = RootChildVisits();
    if (gumbel()) {
      FillGumbelChildren();
      ImprovedPolicy(root_raw_value_, gumbel_children_, gumbel_params_, gumbel_sigma_);
    }
    for (std::uint32_t i = 0; i < root.num_children; ++i) {
      const Node& child = arena_[root.first_child + i];
      ChildStats<Move> stats{G::UnpackMove(root_state_, child.move)};
      stats.visits = child.N();
      stats.prior = child.Prior();
      stats.q = stats.visits > 0 ? ChildQ(child, q_parent, params_) : 0.0;
      stats.policy = gumbel() ? gumbel_sigma_[i] : (total > 0 ? stats.visits / total : 0.0);
      children.push_back(stats);
    }
    return children;
  }

  // The root's value and its win/draw/loss, over every playout backed up through it.
  double RootValue() const { return arena_[root_].Mean(); }
  Wdl RootWdl() const { return NodeWdl(arena_[root_]); }
  // The root's win/draw/loss under the move the search prefers: its visited children's WDL (from
  // the root's side to move's view; a terminal child's exact result) weighted by Gumbel's
  // improved policy renormalised over them, or by their visits under PUCT. RootWdl also counts
  // the playouts spent on moves the search found worse; with Gumbel's sequential halving at a few
  // playouts those are most of them, so a won position with one winning move reads as nearly
  // lost there. The root's own evaluation (RootWdl) while no child is visited.
  Wdl ImprovedRootWdl() const {
    const Node& root = arena_[root_];
    if (root.state != NodeState::kExpanded) return RootWdl();
    if (gumbel()) {
      FillGumbelChildren();
      ImprovedPolicy(root_raw_value_, gumbel_children_, gumbel_params_, gumbel_sigma_);
    }
    Wdl mixed;
    double total = 0.0;
    for (std::uint32_t i = 0; i < root.num_children; ++i) {
      const Node& child = arena_[root.first_child + i];
      const bool terminal = child.state == NodeState::kTerminal;
      if (child.N() == 0 && !terminal) continue;
      const double weight = gumbel() ? gumbel_sigma_[i] : static_cast<double>(child.N());
      if (!(weight > 0.0)) continue;
      const Wdl w = terminal ? TerminalWdl(child.outcome) : NodeWdl(child);
      // The child's side to move is the root's opponent: its win is the root's loss.
      mixed.win += weight * w.loss;
      mixed.draw += weight * w.draw;
      mixed.loss += weight * w.win;
      total += weight;
    }
    if (!(total > 0.0)) return RootWdl();
    mixed.win /= total;
    mixed.draw /= total;
    mixed.loss /= total;
    return mixed;
  }
  // The root's LogSumExp risk value (core/mcts/puct.h: RootSoftValue).
  double SoftValue() const { return RootSoftValue(arena_, arena_[root_], params_); }

  // The most visited move (the higher prior on ties); with Gumbel, the best of the most visited
  // by logit + sigma(completed Q). The root must have a visited child (checked).
  Move BestMove() { return SelectMove(0.0f); }
  // A move drawn with probability proportional to N^(1/tau) from the search's PRNG; tau <= 0 is
  // BestMove(). With Gumbel and tau > 0: the Gumbel-max choice among the most visited actions
  // (which samples from the improved policy), or, for a root without Gumbel noise, a draw from
  // the improved policy^(1/tau). The root must have a visited child (checked).
  Move SelectMove(float tau) {
    const Node& root = arena_[root_];
    AZ_CHECK(root.state == NodeState::kExpanded, "no move before the root is searched");
    if (gumbel()) return G::UnpackMove(root_state_, arena_[root.first_child + GumbelMove(tau)].move);
    visit_scratch_.clear();
    for (std::uint32_t i = 0; i < root.num_children; ++i) {
      visit_scratch_.push_back(arena_[root.first_child + i].N());
    }
    const std::size_t pick = SampleByTemperature(visit_scratch_, tau, rng_);
    return G::UnpackMove(root_state_, arena_[root.first_child + pick].move);
  }

 private:
  struct PendingLeaf {
    std::uint32_t node;
    std::uint32_t path_begin;  // the leaf's path (root first) is paths_[path_begin, path_end)
    std::uint32_t path_end;
    std::uint32_t moves_offset;  // its moves' place in leaf_moves_ and leaf_child_outcomes_
  };

  Search(const SearchOptions& options, const State& root)
      : options_(options),
        params_(PuctParams::From(options)),
        gumbel_params_{options.gumbel_considered, options.gumbel_c_visit, options.gumbel_c_scale},
        track_squares_(options.risk_beta != 0.0f),
        arena_(options.max_nodes),
        spare_(options.max_nodes),
        root_state_(root),
        scratch_(root),
        rng_(options.seed),
        leaf_records_(options.max_batch),
        leaf_wdl_(options.max_batch),
        leaf_moves_(static_cast<std::size_t>(options.max_batch) * G::kMaxMoves),
        leaf_policy_(static_cast<std::size_t>(options.max_batch) * G::kMaxMoves),
        leaf_priors_(static_cast<std::size_t>(options.max_batch) * G::kMaxMoves),
        leaf_child_outcomes_(static_cast<std::size_t>(options.max_batch) * G::kMaxMoves),
        lookahead_(G::kMaxMoves) {
    pending_.reserve(options.max_batch);
    leaves_.reserve(options.max_batch);
    evals_.reserve(options.max_batch);
    paths_.reserve(static_cast<std::size_t>(options.max_batch) * 64);
    path_moves_.reserve(256);
    noise_.resize(G::kMaxMoves);
    order_.resize(G::kMaxMoves);
    visit_scratch_.reserve(G::kMaxMoves);
    NewTree();
    root_outcome_ = ComputeOutcome(root_state_);
  }

  void NewTree() {
    arena_.Reset();
    root_ = arena_.Allocate(1);
    arena_[root_].Init(0, 0);
    root_noised_ = false;
  }

  // --- Gumbel at the root (core/mcts/gumbel.h). ---

  // The root was just expanded with the network's value `raw_value`: draws its Gumbel noise.
  void InitGumbelRoot(double raw_value) {
    Node& root = arena_[root_];
    root_raw_value_ = raw_value;
    root.num_started = root.num_children;  // children are picked out of prior order
    root_gumbel_.assign(root.num_children, 0.0);
    root_noised_ = options_.root_noise;
    if (root_noised_) {
      for (double& g : root_gumbel_) {
        const double u = std::min(rng_.UniformOpenZero(), 1.0 - 0x1.0p-53);
        g = -std::log(-std::log(u));
      }
    }
  }

  // A node's win/draw/loss over every playout backed up through it, for its own side to move.
  static Wdl NodeWdl(const Node& node) {
    const double n = static_cast<double>(node.N()) * kValueScale;
    if (n == 0) return {};
    const double d = static_cast<double>(node.DrawSum());
    // A draw valued with contempt (draw_score) carries value without win or loss: the value is
    // clamped to what the decisive playouts can hold, so the three still sum to 1.
    const double v = std::clamp(static_cast<double>(node.ValueSum()), -(n - d), n - d);
    return {(n - d + v) / 2 / n, d / n, (n - d - v) / 2 / n};
  }
  // The exact result of a game that ended at a node, for the side to move there.
  static Wdl TerminalWdl(games::GameOutcome outcome) {
    switch (outcome) {
      case games::GameOutcome::kWin: return {1.0, 0.0, 0.0};
      case games::GameOutcome::kLoss: return {0.0, 0.0, 1.0};
      default: return {0.0, 1.0, 0.0};
    }
  }

  void FillGumbelChildren() const {
    const Node& root = arena_[root_];
    gumbel_children_.resize(root.num_children);
    gumbel_sigma_.resize(root.num_children);
    for (std::uint32_t i = 0; i < root.num_children; ++i) {
      const Node& child = arena_[root.first_child + i];
      GumbelChild& c = gumbel_children_[i];
      c.logit = root_logits_[i];
      c.gumbel = root_gumbel_[i];
      c.visits = child.N();
      c.in_flight = child.VL();
      c.exact = child.state == NodeState::kTerminal;
      c.q = c.exact ? TerminalChildQ(child, params_) : (c.visits > 0 ? -child.Mean() : 0.0);
    }
  }

  std::uint32_t GumbelRootChild() {
    const Node& root = arena_[root_];
    FillGumbelChildren();
    CompletedSigma(root_raw_value_, gumbel_children_, gumbel_params_, gumbel_sigma_);
    const int considered = std::min<int>(gumbel_params_.max_considered, root.num_children);
    if (considered != table_considered_ || visit_budget_ != table_budget_) {
      considered_visits_ = ConsideredVisits(considered, visit_budget_);
      table_considered_ = considered;
      table_budget_ = visit_budget_;
    }
    std::uint32_t simulation = 0;
    for (const GumbelChild& c : gumbel_children_) simulation += c.visits + c.in_flight;
    const std::uint32_t wanted = simulation < considered_visits_.size()
                                     ? considered_visits_[simulation]
                                     : std::numeric_limits<std::uint32_t>::max();
    return root.first_child +
           static_cast<std::uint32_t>(GumbelSelect(gumbel_children_, gumbel_sigma_, wanted));
  }

  std::size_t GumbelMove(float tau) {
    FillGumbelChildren();
    CompletedSigma(root_raw_value_, gumbel_children_, gumbel_params_, gumbel_sigma_);
    if (tau <= 0.0f || root_noised_) {
      return GumbelFinalMove(gumbel_children_, gumbel_sigma_, tau > 0.0f);
    }
    ImprovedPolicy(root_raw_value_, gumbel_children_, gumbel_params_, gumbel_sigma_);
    double total = 0.0;
    for (double& p : gumbel_sigma_) total += (p = std::pow(p, 1.0 / tau));
    double target = rng_.Uniform() * total;
    for (std::size_t i = 0; i < gumbel_sigma_.size(); ++i) {
      target -= gumbel_sigma_[i];
      if (target < 0.0) return i;
    }
    return gumbel_sigma_.size() - 1;
  }

  games::GameOutcome ComputeOutcome(const State& state) {
    return G::Outcome(state, G::LegalMoves(state, leaf_moves_.data()));
  }

  void ClearBatch() {
    pending_.clear();
    leaves_.clear();
    evals_.clear();
  }

  void BackupPath(std::uint32_t begin, std::uint32_t end, double value, double draw) {
    std::int64_t value_fixed = ToFixed(value);
    const std::int64_t square_fixed = ToFixed(value * value);
    const std::int64_t draw_fixed = ToFixed(draw);
    for (std::uint32_t i = end; i-- > begin;) {
      Node& node = arena_[paths_[i]];
      node.virtual_loss.fetch_sub(1, std::memory_order_relaxed);
      node.visits.fetch_add(1, std::memory_order_relaxed);
      node.value_sum.fetch_add(value_fixed, std::memory_order_relaxed);
      if (track_squares_) node.value_sq_sum.fetch_add(square_fixed, std::memory_order_relaxed);
      node.draw_sum.fetch_add(draw_fixed, std::memory_order_relaxed);
      value_fixed = -value_fixed;  // the parent's side to move is the other player
    }
    ++stats_.playouts;
  }

  // The outcome that `node`'s children prove for its side to move: a win when a child is lost for
  // the side to move there, a draw or a loss when every child is decided (the best of them), else
  // kOngoing.
  games::GameOutcome ProvenOutcome(const Node& node) const {
    bool all_decided = true;
    bool any_draw = false;
    for (std::uint32_t i = 0; i < node.num_children; ++i) {
      const Node& child = arena_[node.first_child + i];
      if (child.state != NodeState::kTerminal) {
        all_decided = false;
        continue;
      }
      if (child.outcome == games::GameOutcome::kLoss) return games::GameOutcome::kWin;
      any_draw = any_draw || child.outcome == games::GameOutcome::kDraw;
    }
    if (!all_decided) return games::GameOutcome::kOngoing;
    return any_draw ? games::GameOutcome::kDraw : games::GameOutcome::kLoss;
  }

  // MCTS-solver: closes the expanded nodes of paths_[begin, end) from the deepest up, while their
  // children prove them; never the root (paths_[begin]).
  void ProvePath(std::uint32_t begin, std::uint32_t end) {
    if (!options_.propagate_proofs) return;
    for (std::uint32_t i = end; i-- > begin + 1;) {
      Node& node = arena_[paths_[i]];
      if (node.state != NodeState::kExpanded) return;
      const games::GameOutcome outcome = ProvenOutcome(node);
      if (!games::IsTerminal(outcome)) return;
      node.outcome = outcome;
      node.state = NodeState::kTerminal;
      ++stats_.proven_nodes;
    }
  }

  void RemoveVirtualLoss(std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t i = begin; i < end; ++i) {
      arena_[paths_[i]].virtual_loss.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  void SanitizeWdl(std::span<const float, 3> wdl, double& win, double& draw, double& loss) {
    const auto clean = [](float x) { return std::isfinite(x) && x > 0.0f ? double{x} : 0.0; };
    win = clean(wdl[0]);
    draw = clean(wdl[1]);
    loss = clean(wdl[2]);
    const double sum = win + draw + loss;
    if (!(sum > 0.0) || !std::isfinite(wdl[0] + wdl[1] + wdl[2])) {
      ++stats_.bad_evaluations;
      win = loss = 0.0;
      draw = 1.0;
      return;
    }
    win /= sum;
    draw /= sum;
    loss /= sum;
  }

  void SanitizePriors(std::span<float> priors) {
    double sum = 0.0;
    for (float& p : priors) {
      if (!(std::isfinite(p) && p > 0.0f)) p = 0.0f;
      sum += p;
    }
    if (!(sum > 0.0) || !std::isfinite(sum)) {
      ++stats_.bad_evaluations;
      for (float& p : priors) p = 1.0f / static_cast<float>(priors.size());
      return;
    }
    for (float& p : priors) p = static_cast<float>(p / sum);
  }

  // Gives `node` one child per move, by decreasing prior (ties in move order), or leaves it
  // unexpanded when the arena is full. For the root, also keeps the priors' logits (Gumbel).
  void Expand(Node& node, std::span<const Move> moves, std::span<const float> priors,
              bool is_root, std::uint32_t moves_offset) {
    const auto count = static_cast<std::uint32_t>(moves.size());
    const std::uint32_t first = arena_.Allocate(count);
    if (first == kNullNode) {
      node.state = NodeState::kUnexpanded;
      ++stats_.unexpanded_full;
      return;
    }
    // One integer key per child, prior high and the complement of the move's index low: sorting
    // the keys in decreasing order sorts by decreasing prior, ties in move order.
    for (std::uint32_t i = 0; i < count; ++i) {
      order_[i] = (std::uint32_t{QuantizePrior(priors[i])} << 16) | (0xFFFFu - i);
    }
    std::sort(order_.begin(), order_.begin() + count, std::greater<std::uint32_t>());
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t index = 0xFFFFu - (order_[i] & 0xFFFFu);
      arena_[first + i].Init(G::PackMove(moves[index]),
                             static_cast<std::uint16_t>(order_[i] >> 16));
    }
    if (options_.detect_terminal_children) {
      // Children that end the game are terminal from the start; their exact value breaks the
      // prior order that lets selection skip unstarted children, so all are scored here.
      const games::GameOutcome* outcomes = leaf_child_outcomes_.data() + moves_offset;
      bool any = false;
      for (std::uint32_t i = 0; i < count; ++i) {
        const games::GameOutcome outcome = outcomes[0xFFFFu - (order_[i] & 0xFFFFu)];
        if (!games::IsTerminal(outcome)) continue;
        arena_[first + i].state = NodeState::kTerminal;
        arena_[first + i].outcome = outcome;
        any = true;
      }
      if (any) node.num_started = static_cast<std::uint16_t>(count);
    }
    if (is_root) {
      root_logits_.resize(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t index = 0xFFFFu - (order_[i] & 0xFFFFu);
        root_logits_[i] = std::log(std::max(static_cast<double>(priors[index]), 1e-30));
      }
    }
    node.first_child = first;
    node.num_children = static_cast<std::uint16_t>(count);
    node.state = NodeState::kExpanded;
  }

  // P' = (1 - epsilon) P + epsilon * Dir(alpha) on the root's children.
  void ApplyRootNoise() {
    const Node& root = arena_[root_];
    const std::span<float> noise(noise_.data(), root.num_children);
    rng_.Dirichlet(options_.dirichlet_alpha, noise);
    const float epsilon = options_.dirichlet_epsilon;
    // The priors are no longer in decreasing order: selection must score every root child.
    arena_[root_].num_started = root.num_children;
    for (std::uint32_t i = 0; i < root.num_children; ++i) {
      Node& child = arena_[root.first_child + i];
      child.prior = QuantizePrior((1.0f - epsilon) * child.Prior() + epsilon * noise[i]);
    }
  }

  // Copies the subtree under `from` into spare_ (reset first), breadth first so that every run of
  // siblings stays contiguous; its root lands at index 0. False when spare_ runs out of room.
  bool CopySubtreeToSpare(std::uint32_t from) {
    spare_.Reset();
    const std::uint32_t new_root = spare_.Allocate(1);
    spare_[new_root].CopyStatsFrom(arena_[from]);
    copy_queue_.clear();
    copy_queue_.emplace_back(from, new_root);
    for (std::size_t head = 0; head < copy_queue_.size(); ++head) {
      const auto [source_index, target_index] = copy_queue_[head];
      const Node& source = arena_[source_index];
      if (source.state != NodeState::kExpanded) continue;
      const std::uint32_t first = spare_.Allocate(source.num_children);
      if (first == kNullNode) return false;
      spare_[target_index].first_child = first;
      for (std::uint32_t i = 0; i < source.num_children; ++i) {
        const Node& child = arena_[source.first_child + i];
        spare_[first + i].CopyStatsFrom(child);
        if (child.state == NodeState::kExpanded) {
          copy_queue_.emplace_back(source.first_child + i, first + i);
        }
      }
    }
    return true;
  }

  SearchOptions options_;
  PuctParams params_;
  GumbelParams gumbel_params_;
  // Gumbel's root: the priors' logits, the noise and the network's value, per root child.
  std::vector<double> root_logits_;
  std::vector<double> root_gumbel_;
  double root_raw_value_ = 0.0;
  bool root_noised_ = false;
  int visit_budget_ = 0;
  std::vector<std::uint32_t> considered_visits_;  // for (table_considered_, table_budget_)
  int table_considered_ = -1;
  int table_budget_ = -1;
  mutable std::vector<GumbelChild> gumbel_children_;  // scratch
  mutable std::vector<double> gumbel_sigma_;
  bool track_squares_;
  NodeArena arena_;
  NodeArena spare_;  // the target of subtree reuse; swapped with arena_ by Advance
  std::uint32_t root_ = kNullNode;
  State root_state_;
  State scratch_;  // equal to root_state_ between playouts
  games::GameOutcome root_outcome_ = games::GameOutcome::kOngoing;
  Rng rng_;
  SearchStats stats_;

  // The batch in flight; sized once, so gathering allocates nothing.
  std::vector<typename G::Record> leaf_records_;
  std::vector<std::array<float, 3>> leaf_wdl_;
  std::vector<Move> leaf_moves_;
  std::vector<std::uint16_t> leaf_policy_;
  std::vector<float> leaf_priors_;
  std::vector<games::GameOutcome> leaf_child_outcomes_;  // detect_terminal_children's lookahead
  std::vector<Move> lookahead_;                          // its scratch for the children's moves
  std::vector<PendingLeaf> pending_;
  std::vector<Leaf<G>> leaves_;
  std::vector<LeafEval> evals_;
  std::vector<std::uint32_t> paths_;
  std::vector<Move> path_moves_;

  std::vector<float> noise_;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> visit_scratch_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> copy_queue_;
};

}  // namespace az::mcts
