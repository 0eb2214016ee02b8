#pragma once

// Priorities as Schaul et al. define them, p = (loss + epsilon)^alpha, and their fixed-point form
// in the sum-tree. The tree holds integers so that its sums are exact (docs/replay.md, "Why
// integers").

#include <cstdint>
#include <optional>

namespace az::replay {

// p = (loss + epsilon)^alpha, or nullopt when `loss` is NaN, infinite or negative (such values are
// rejected and counted by the store, never stored). epsilon >= 0 and alpha >= 0 are the caller's
// validated configuration.
std::optional<double> PriorityFromLoss(double loss, double epsilon, double alpha);

// Converts priorities to and from the sum-tree's integer units. One unit is 2^-fraction_bits; the
// number of fraction bits is chosen from the capacity so that `capacity` leaves at the largest
// priority still sum below 2^62 (headroom for signed SIMD compares). At 10^6 slots one unit is
// 2^-26 (1.5e-8); at 10^7 slots 2^-22 (2.4e-7).
class PriorityScale {
 public:
  // Priorities above this are stored as this value (and counted as clamped by the store).
  static constexpr double kMaxPriority = 65536.0;
  static constexpr int kTotalBits = 62;

  // capacity must be in [1, 2^32].
  explicit PriorityScale(std::uint64_t capacity);

  int fraction_bits() const { return fraction_bits_; }
  // The largest value one leaf may hold: kMaxPriority in units.
  std::uint64_t max_units() const { return max_units_; }

  // `priority` must be finite and >= 0. Zero maps to 0 units (never sampled). A positive value
  // rounds to the nearest unit but to at least 1, so that it stays sampleable, and to at most
  // max_units(); *clamped (when given) is set when the value was raised or lowered to fit.
  std::uint64_t ToUnits(double priority, bool* clamped = nullptr) const;
  double ToPriority(std::uint64_t units) const { return static_cast<double>(units) * unit_; }

 private:
  int fraction_bits_;
  std::uint64_t max_units_;
  double scale_;  // units per priority 1.0
  double unit_;   // priority per unit
};

// ceil(log2(n)) for n >= 1.
int CeilLog2(std::uint64_t n);

}  // namespace az::replay
