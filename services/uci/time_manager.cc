#include "services/uci/time_manager.h"

#include <algorithm>

namespace az::uci {

std::int64_t ClockBudgetMs(std::int64_t remaining_ms, std::int64_t increment_ms, int moves_to_go,
                           const TimeManagerOptions& options) {
  const std::int64_t usable = std::max<std::int64_t>(remaining_ms - options.move_overhead_ms, 0);
  const int horizon = moves_to_go > 0 ? moves_to_go : std::max(options.default_moves_to_go, 1);
  const double budget =
      static_cast<double>(usable) / horizon +
      options.increment_share * static_cast<double>(std::max<std::int64_t>(increment_ms, 0));
  const double cap = options.max_fraction * static_cast<double>(usable);
  return static_cast<std::int64_t>(std::clamp(budget, 0.0, cap));
}

std::int64_t MoveTimeBudgetMs(std::int64_t move_time_ms, const TimeManagerOptions& options) {
  move_time_ms = std::max<std::int64_t>(move_time_ms, 0);
  const std::int64_t overhead = std::min(options.move_overhead_ms, move_time_ms / 2);
  return std::max<std::int64_t>(move_time_ms - overhead, 1);
}

SearchTimePlan PlanSearchTime(const GoLimits& limits, bool white_to_move,
                              const TimeManagerOptions& options) {
  SearchTimePlan plan;
  const std::optional<std::int64_t>& time =
      white_to_move ? limits.white_time_ms : limits.black_time_ms;
  const std::optional<std::int64_t>& increment =
      white_to_move ? limits.white_increment_ms : limits.black_increment_ms;
  if (time) {
    plan.budget_ms =
        ClockBudgetMs(*time, increment.value_or(0), limits.moves_to_go.value_or(0), options);
    plan.from_clock = true;
  }
  if (limits.move_time_ms) {
    const std::int64_t budget = MoveTimeBudgetMs(*limits.move_time_ms, options);
    if (!plan.budget_ms || budget < *plan.budget_ms) {
      plan.budget_ms = budget;
      plan.from_clock = false;
    }
  }
  return plan;
}

}  // namespace az::uci
