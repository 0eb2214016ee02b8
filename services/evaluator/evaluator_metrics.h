#pragma once

// The evaluator's Prometheus metrics (docs/evaluator.md, "Metrics"). This file alone turns the
// batcher's reports and the channel's stats into metrics.

#include <cstdint>
#include <memory>

#include "services/evaluator/eval_batcher.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace az::evaluator {

// Totals since start, read by the periodic update.
struct EvaluatorTotals {
  std::uint64_t requests_waiting = 0;  // request ring occupancy, all workers
  std::uint64_t request_capacity = 0;
  std::uint64_t stale_requests = 0;    // dropped: their worker had moved on
  std::uint64_t invalid_requests = 0;  // refused by validation or a bad worker id
  std::uint64_t stale_responses = 0;   // not sent: the worker had moved on
  std::uint64_t model_version = 0;
  std::uint64_t model_loads = 0;
  std::uint64_t model_load_failures = 0;
  std::uint64_t cache_capacity = 0;  // entries; 0: the cache is off
  std::uint64_t cache_entries = 0;   // filled for the current model
  std::uint64_t cache_invalidations = 0;
};

class EvaluatorMetrics {
 public:
  explicit EvaluatorMetrics(prometheus::Registry& registry);
  ~EvaluatorMetrics();

  // One batch that fired (report.taken > 0).
  void ObserveBatch(const BatchReport& report);
  // Sets the gauges and advances the counters to `totals`.
  void Update(const EvaluatorTotals& totals);

 private:
  struct Families;
  std::unique_ptr<Families> m_;
};

}  // namespace az::evaluator
