#include "core/replay/priority.h"

#include <bit>
#include <cmath>

#include "core/base/check.h"

namespace az::replay {

std::optional<double> PriorityFromLoss(double loss, double epsilon, double alpha) {
  if (!std::isfinite(loss) || loss < 0) return std::nullopt;
  return std::pow(loss + epsilon, alpha);
}

int CeilLog2(std::uint64_t n) {
  AZ_CHECK(n >= 1);
  return n == 1 ? 0 : 64 - std::countl_zero(n - 1);
}

PriorityScale::PriorityScale(std::uint64_t capacity) {
  AZ_CHECK(capacity >= 1 && capacity <= (std::uint64_t{1} << 32), "capacity out of range");
  constexpr int kMaxPriorityBits = 16;  // log2(kMaxPriority)
  static_assert(kMaxPriority == static_cast<double>(1 << kMaxPriorityBits));
  const int leaf_bits = kTotalBits - CeilLog2(capacity);
  fraction_bits_ = leaf_bits - kMaxPriorityBits;
  max_units_ = std::uint64_t{1} << leaf_bits;
  scale_ = std::ldexp(1.0, fraction_bits_);
  unit_ = std::ldexp(1.0, -fraction_bits_);
}

std::uint64_t PriorityScale::ToUnits(double priority, bool* clamped) const {
  AZ_CHECK(std::isfinite(priority) && priority >= 0, "priority must be finite and >= 0");
  if (clamped != nullptr) *clamped = false;
  if (priority == 0) return 0;
  const double scaled = std::nearbyint(priority * scale_);
  if (scaled < 1) {
    if (clamped != nullptr) *clamped = true;
    return 1;
  }
  if (scaled >= static_cast<double>(max_units_)) {
    if (clamped != nullptr) *clamped = scaled > static_cast<double>(max_units_);
    return max_units_;
  }
  return static_cast<std::uint64_t>(scaled);
}

}  // namespace az::replay
