#pragma once

// The importance-sampling exponent beta, annealed linearly from `start` to `end` (usually 0.4
// -> 1.0) over `horizon` learner steps, or over `horizon` samples drawn.

#include <cstdint>

#include "core/base/status.h"

namespace az::replay {

struct BetaScheduleOptions {
  enum class Unit { kLearnerSteps, kSamplesDrawn };
  double start = 0.4;              // in [0, 1]
  double end = 1.0;                // in [0, 1]
  std::uint64_t horizon = 100000;  // > 0: progress at which beta reaches `end` and stays
  Unit unit = Unit::kLearnerSteps;
};

class BetaSchedule {
 public:
  // InvalidArgument when start or end is outside [0, 1] (or NaN) or horizon is 0.
  static Result<BetaSchedule> Create(const BetaScheduleOptions& options);

  // Beta after `progress` units: start + (end - start) * min(progress, horizon) / horizon; exactly
  // `end` from the horizon on.
  double At(std::uint64_t progress) const;
  // Picks the progress that matches the configured unit.
  double At(std::uint64_t learner_steps, std::uint64_t samples_drawn) const {
    return At(options_.unit == BetaScheduleOptions::Unit::kLearnerSteps ? learner_steps
                                                                        : samples_drawn);
  }

  const BetaScheduleOptions& options() const { return options_; }

 private:
  explicit BetaSchedule(const BetaScheduleOptions& options) : options_(options) {}
  BetaScheduleOptions options_;
};

}  // namespace az::replay
