#pragma once

// One search-tree node: exactly one 64-byte cache line. Statistics are relaxed atomics in fixed
// point (values x10000), the prior is 16-bit fixed point, and the children of a node are one
// contiguous run of nodes in the arena (first child + count: the next sibling of child i is i + 1,
// so iterating the children is a linear scan of adjacent cache lines).
//
// Values are stored from the point of view of the side to move AT THIS NODE; the parent's view of a
// child is the negation (core/mcts/puct.h). A node's visits count its own evaluation (or terminal
// visit) plus every playout that passed through it, so an expanded node has visits == 1 + the sum
// of its children's visits.

#include <atomic>
#include <cmath>
#include <cstdint>

#include "core/games/game.h"

namespace az::mcts {

inline constexpr std::uint32_t kNullNode = 0xFFFFFFFFu;
inline constexpr std::int64_t kValueScale = 10000;  // fixed point of values, v^2 and draw mass
inline constexpr float kPriorScale = 65535.0f;      // fixed point of priors

inline std::int64_t ToFixed(double value) { return std::llround(value * kValueScale); }
inline std::uint16_t QuantizePrior(float prior) {
  const float clamped = prior > 0.0f ? (prior < 1.0f ? prior : 1.0f) : 0.0f;  // NaN -> 0
  return static_cast<std::uint16_t>(clamped * kPriorScale + 0.5f);
}

enum class NodeState : std::uint8_t {
  kUnexpanded = 0,  // a leaf nobody has evaluated yet
  kPending = 1,     // handed out for evaluation; selection reaching it is a collision
  kExpanded = 2,    // has children (first_child, num_children)
  kTerminal = 3,    // the game is over here; `outcome` holds the exact result
};

struct alignas(64) Node {
  std::uint32_t first_child;   // kNullNode unless expanded
  std::uint16_t num_children;  // the children are first_child .. first_child + num_children - 1
  std::uint16_t move;          // the packed move (Game::PackMove) that leads here from the parent
  std::uint16_t prior;         // P(parent, move) x 65535
  NodeState state;
  games::GameOutcome outcome;  // for kTerminal: the result for the side to move here
  std::atomic<std::uint32_t> visits;
  std::atomic<std::uint32_t> virtual_loss;  // playouts in flight through this node
  // Children [num_started, num_children) have never been selected and are in decreasing prior
  // order, so selection need only score the first of them (core/mcts/puct.h: SelectChild).
  std::uint16_t num_started;
  std::uint16_t reserved0;
  std::atomic<std::int64_t> value_sum;     // sum of v x10000, v in [-1, 1]
  std::atomic<std::int64_t> value_sq_sum;  // sum of v^2 x10000; kept only when risk_beta != 0
  std::atomic<std::int64_t> draw_sum;      // sum of the draw probability x10000 (root WDL)
  std::uint8_t reserved1[16];

  // Makes this a fresh, unexpanded node reached by `packed_move` with `prior16`.
  void Init(std::uint16_t packed_move, std::uint16_t prior16) {
    first_child = kNullNode;
    num_children = 0;
    num_started = 0;
    move = packed_move;
    prior = prior16;
    state = NodeState::kUnexpanded;
    outcome = games::GameOutcome::kOngoing;
    visits.store(0, std::memory_order_relaxed);
    virtual_loss.store(0, std::memory_order_relaxed);
    value_sum.store(0, std::memory_order_relaxed);
    value_sq_sum.store(0, std::memory_order_relaxed);
    draw_sum.store(0, std::memory_order_relaxed);
  }

  // Copies every field but the children link (the caller relinks it).
  void CopyStatsFrom(const Node& other) {
    first_child = kNullNode;
    num_children = other.num_children;
    num_started = other.num_started;
    move = other.move;
    prior = other.prior;
    state = other.state;
    outcome = other.outcome;
    visits.store(other.N(), std::memory_order_relaxed);
    virtual_loss.store(other.VL(), std::memory_order_relaxed);
    value_sum.store(other.ValueSum(), std::memory_order_relaxed);
    value_sq_sum.store(other.ValueSqSum(), std::memory_order_relaxed);
    draw_sum.store(other.DrawSum(), std::memory_order_relaxed);
  }

  std::uint32_t N() const { return visits.load(std::memory_order_relaxed); }
  std::uint32_t VL() const { return virtual_loss.load(std::memory_order_relaxed); }
  std::int64_t ValueSum() const { return value_sum.load(std::memory_order_relaxed); }
  std::int64_t ValueSqSum() const { return value_sq_sum.load(std::memory_order_relaxed); }
  std::int64_t DrawSum() const { return draw_sum.load(std::memory_order_relaxed); }
  float Prior() const { return static_cast<float>(prior) / kPriorScale; }
  bool IsTerminal() const { return state == NodeState::kTerminal; }
  // The mean value for the side to move here; 0 when unvisited.
  double Mean() const {
    const std::uint32_t n = N();
    return n == 0 ? 0.0 : static_cast<double>(ValueSum()) / (static_cast<double>(n) * kValueScale);
  }
};

static_assert(sizeof(Node) == 64, "a node is one cache line");
static_assert(alignof(Node) == 64, "a node starts a cache line");
static_assert(std::atomic<std::int64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

}  // namespace az::mcts
