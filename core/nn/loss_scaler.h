#pragma once

// Dynamic loss scaling for fp16 training (LibTorch 1.13's C++ API has no GradScaler). The trainer
// multiplies the loss by scale() before backward, divides the gradients by it afterwards, and
// reports whether any gradient was inf or NaN:
//   - overflow: the step is skipped and the scale shrinks by backoff_factor (not below min_scale);
//   - otherwise: the step is taken, and after growth_interval consecutive good steps the scale
//   grows
//     by growth_factor (not above max_scale).
// This is the state machine only; it has no torch dependency so that it is tested exactly on CPU.
// Not thread-safe.

#include <cstdint>

#include "core/base/status.h"

namespace az::nn {

struct LossScalerOptions {
  double init_scale = 65536.0;  // 2^16, as torch.cuda.amp.GradScaler
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
  double min_scale = 1.0;
  double max_scale = 16777216.0;  // 2^24

  // INVALID_ARGUMENT unless growth_factor > 1, 0 < backoff_factor < 1, growth_interval >= 1,
  // 0 < min_scale <= init_scale <= max_scale.
  Status Validate() const;
};

class DynamicLossScaler {
 public:
  // `options` must be valid (checked).
  explicit DynamicLossScaler(const LossScalerOptions& options);

  double scale() const { return scale_; }
  // Good steps since the last growth or overflow.
  std::int64_t good_steps() const { return good_steps_; }
  std::int64_t overflows() const { return overflows_; }

  // Records the outcome of one backward pass: `found_non_finite` is true when any unscaled gradient
  // held an inf or NaN. Returns true when the optimizer step must be taken, false when skipped.
  bool Update(bool found_non_finite);

  // Restores state from a checkpoint; `scale` must be positive (checked).
  void Restore(double scale, std::int64_t good_steps, std::int64_t overflows);

 private:
  LossScalerOptions options_;
  double scale_;
  std::int64_t good_steps_ = 0;
  std::int64_t overflows_ = 0;
};

}  // namespace az::nn
