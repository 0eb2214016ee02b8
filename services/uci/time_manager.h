#pragma once

// How long one `go` may search when the GUI gives clocks or a move time. The rule, chosen so that
// the engine never loses on time (docs/chess.md, "Playing the model: az-uci"):
//
//   usable = remaining - move_overhead                      (what the GUI, the pipes and our last
//                                                            batch may cost is set aside first)
//   budget = usable / moves_to_go + increment_share * inc  (movestogo, or 30 when not given)
//   budget = min(budget, max_fraction * usable)            (never more than half of what is left,
//                                                            whatever the increment)
//
// The increment only arrives after the move, so the cap is on the time left now. Moves get shorter
// as the clock runs down and the budget never reaches the flag. With `movetime` the budget is the
// move time less the overhead (at most half of it). The search itself stops one batch early when
// the next batch would overrun the budget, and earlier when the best move can no longer change
// (uci_engine.h).

#include <cstdint>
#include <optional>

#include "services/uci/uci_commands.h"

namespace az::uci {

struct TimeManagerOptions {
  std::int64_t move_overhead_ms = 100;  // UCI option "Move Overhead"
  int default_moves_to_go = 30;         // the horizon when `movestogo` is not given
  double increment_share = 0.75;        // of the increment, spent on this move
  double max_fraction = 0.5;            // of the usable time, at most, on one move
};

// The budget for a move from a clock: `remaining_ms` on our clock, `increment_ms` per move, and
// `moves_to_go` until the next time control (<= 0: unknown). In [0, max_fraction * usable];
// 0 means "answer at once" (the engine still does one playout).
std::int64_t ClockBudgetMs(std::int64_t remaining_ms, std::int64_t increment_ms, int moves_to_go,
                           const TimeManagerOptions& options);

// The budget for `go movetime`: the move time less the overhead, but at least half of it, and at
// least 1 ms.
std::int64_t MoveTimeBudgetMs(std::int64_t move_time_ms, const TimeManagerOptions& options);

struct SearchTimePlan {
  std::optional<std::int64_t> budget_ms;  // none: no time limit (nodes, depth or stop end it)
  bool from_clock = false;  // the budget came from our clock: stopping early saves time for later
};

// The plan for a `go`: the smaller of the clock budget (when our side's time is given) and the
// move-time budget (when `movetime` is).
SearchTimePlan PlanSearchTime(const GoLimits& limits, bool white_to_move,
                              const TimeManagerOptions& options);

}  // namespace az::uci
