#include "core/nn/loss_scaler.h"

#include <algorithm>
#include <string>

namespace az::nn {

Status LossScalerOptions::Validate() const {
  if (!(growth_factor > 1.0)) return InvalidArgument("loss scaler: growth_factor must be > 1");
  if (!(backoff_factor > 0.0 && backoff_factor < 1.0)) {
    return InvalidArgument("loss scaler: backoff_factor must be in (0, 1)");
  }
  if (growth_interval < 1) return InvalidArgument("loss scaler: growth_interval must be >= 1");
  if (!(min_scale > 0.0 && min_scale <= init_scale && init_scale <= max_scale)) {
    return InvalidArgument("loss scaler: need 0 < min_scale <= init_scale <= max_scale, got " +
                           std::to_string(min_scale) + ", " + std::to_string(init_scale) + ", " +
                           std::to_string(max_scale));
  }
  return Status::Ok();
}

DynamicLossScaler::DynamicLossScaler(const LossScalerOptions& options)
    : options_(options), scale_(options.init_scale) {
  AZ_CHECK(options.Validate().ok(), options.Validate().ToString());
}

bool DynamicLossScaler::Update(bool found_non_finite) {
  if (found_non_finite) {
    scale_ = std::max(options_.min_scale, scale_ * options_.backoff_factor);
    good_steps_ = 0;
    ++overflows_;
    return false;
  }
  if (++good_steps_ >= options_.growth_interval) {
    scale_ = std::min(options_.max_scale, scale_ * options_.growth_factor);
    good_steps_ = 0;
  }
  return true;
}

void DynamicLossScaler::Restore(double scale, std::int64_t good_steps, std::int64_t overflows) {
  AZ_CHECK(scale > 0.0, "loss scale must be positive");
  scale_ = std::clamp(scale, options_.min_scale, options_.max_scale);
  good_steps_ = good_steps;
  overflows_ = overflows;
}

}  // namespace az::nn
