#include "core/replay/beta_schedule.h"

#include <string>

namespace az::replay {

Result<BetaSchedule> BetaSchedule::Create(const BetaScheduleOptions& options) {
  // Written as !(in range) so that NaN is rejected too.
  if (!(options.start >= 0 && options.start <= 1)) {
    return InvalidArgument("beta start must be in [0, 1], got " + std::to_string(options.start));
  }
  if (!(options.end >= 0 && options.end <= 1)) {
    return InvalidArgument("beta end must be in [0, 1], got " + std::to_string(options.end));
  }
  if (options.horizon == 0) return InvalidArgument("beta horizon must be > 0");
  return BetaSchedule(options);
}

double BetaSchedule::At(std::uint64_t progress) const {
  if (progress >= options_.horizon) return options_.end;
  const double fraction = static_cast<double>(progress) / static_cast<double>(options_.horizon);
  return options_.start + (options_.end - options_.start) * fraction;
}

}  // namespace az::replay
