#include "core/replay/sampling.h"

#include <algorithm>
#include <cmath>

#include "core/base/check.h"

namespace az::replay {

void StratifiedTargets(std::uint64_t total, Rng& rng, std::span<std::uint64_t> targets) {
  AZ_CHECK(total > 0, "stratified sampling over an empty total");
  const std::uint64_t n = targets.size();
  if (n == 0) return;
  // floor(k * total / n) = k * q + floor(k * r / n) with total = q * n + r, exactly; the second
  // term is counted as a running remainder (Bresenham), so there is no division per draw.
  const std::uint64_t q = total / n;
  const std::uint64_t r = total % n;
  std::uint64_t lo = 0;
  std::uint64_t carried = 0;    // floor((k + 1) * r / n)
  std::uint64_t remainder = 0;  // (k + 1) * r mod n
  for (std::uint64_t k = 0; k < n; ++k) {
    remainder += r;
    if (remainder >= n) {
      remainder -= n;
      ++carried;
    }
    const std::uint64_t hi = (k + 1) * q + carried;
    targets[k] = hi > lo ? lo + rng.Below(hi - lo) : rng.Below(total);
    lo = hi;
  }
}

void SetImportanceWeights(std::span<SampledSlot> batch, double beta) {
  if (batch.empty()) return;
  double min_probability = batch[0].probability;
  for (const SampledSlot& draw : batch)
    min_probability = std::min(min_probability, draw.probability);
  AZ_CHECK(min_probability > 0, "importance weight of a draw with probability 0");
  for (SampledSlot& draw : batch) {
    draw.weight = beta == 0 ? 1.0 : std::pow(min_probability / draw.probability, beta);
  }
}

}  // namespace az::replay
