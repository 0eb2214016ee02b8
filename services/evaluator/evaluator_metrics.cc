#include "services/evaluator/evaluator_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>
#include <vector>

#include "services/common/metric_builders.h"

namespace az::evaluator {
namespace {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;
using service::AdvanceTo;
using service::MakeCounter;
using service::MakeGauge;
using service::MakeHistogram;

const std::vector<double> kBatchSizeBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096};
const std::vector<double> kSecondsBuckets = {1e-4,  2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01,
                                             0.025, 0.05,   0.1,  0.25, 0.5,    1,    2.5};

}  // namespace

struct EvaluatorMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : batch_size(MakeHistogram(r, "az_evaluator_batch_size",
                                 "Positions per network call (requests per batch)",
                                 kBatchSizeBuckets)),
        batch_seconds(MakeHistogram(r, "az_evaluator_batch_seconds",
                                    "Time from firing a batch to its last answer written: "
                                    "encoding, the network, the answers",
                                    kSecondsBuckets)),
        collect_seconds(MakeHistogram(r, "az_evaluator_batch_collect_seconds",
                                      "Time from a batch's first request to firing it",
                                      kSecondsBuckets)),
        batches(MakeCounter(r, "az_evaluator_batches_total", "Batches fired")),
        positions(MakeCounter(r, "az_evaluator_positions_evaluated_total",
                              "Positions evaluated by the network")),
        forward_failures(MakeCounter(r, "az_evaluator_forward_failures_total",
                                     "Network calls that failed (answered as failed)")),
        response_timeouts(MakeCounter(r, "az_evaluator_response_timeouts_total",
                                      "Answers dropped because a worker's response ring stayed "
                                      "full")),
        requests_waiting(MakeGauge(r, "az_evaluator_requests_waiting",
                                   "Requests in the eval request ring, all workers")),
        request_capacity(
            MakeGauge(r, "az_evaluator_request_ring_capacity", "Slots of the eval request ring")),
        stale_requests(MakeCounter(r, "az_evaluator_stale_requests_total",
                                   "Requests dropped unevaluated: their worker had reset")),
        invalid_requests(MakeCounter(r, "az_evaluator_invalid_requests_total",
                                     "Requests refused by validation")),
        stale_responses(MakeCounter(r, "az_evaluator_stale_responses_total",
                                    "Answers not sent: their worker had reset meanwhile")),
        model_version(MakeGauge(r, "az_evaluator_model_version", "Version of the weights in use")),
        model_loads(MakeCounter(r, "az_evaluator_model_loads_total", "Weights files loaded")),
        model_load_failures(MakeCounter(r, "az_evaluator_model_load_failures_total",
                                        "Weights files refused (the old weights stayed)")),
        cache_lookups(MakeCounter(r, "az_evaluator_cache_lookups_total",
                                  "Valid requests looked up in the cache of answers")),
        cache_hits(MakeCounter(r, "az_evaluator_cache_hits_total",
                               "Requests answered from the cache, without the network")),
        cache_invalidations(MakeCounter(r, "az_evaluator_cache_invalidations_total",
                                        "Times the cache was cleared (the weights changed)")),
        cache_entries(MakeGauge(r, "az_evaluator_cache_entries",
                                "Cache entries filled by the current model")),
        cache_capacity(
            MakeGauge(r, "az_evaluator_cache_capacity", "Entries of the cache; 0: off")) {}

  Histogram& batch_size;
  Histogram& batch_seconds;
  Histogram& collect_seconds;
  Counter& batches;
  Counter& positions;
  Counter& forward_failures;
  Counter& response_timeouts;
  Gauge& requests_waiting;
  Gauge& request_capacity;
  Counter& stale_requests;
  Counter& invalid_requests;
  Counter& stale_responses;
  Gauge& model_version;
  Counter& model_loads;
  Counter& model_load_failures;
  Counter& cache_lookups;
  Counter& cache_hits;
  Counter& cache_invalidations;
  Gauge& cache_entries;
  Gauge& cache_capacity;
};

EvaluatorMetrics::EvaluatorMetrics(prometheus::Registry& registry)
    : m_(std::make_unique<Families>(registry)) {}
EvaluatorMetrics::~EvaluatorMetrics() = default;

void EvaluatorMetrics::ObserveBatch(const BatchReport& report) {
  if (report.cache_lookups > 0) m_->cache_lookups.Increment(report.cache_lookups);
  if (report.cache_hits > 0) m_->cache_hits.Increment(report.cache_hits);
  if (report.response_timeouts > 0) m_->response_timeouts.Increment(report.response_timeouts);
  // A step whose requests were all answered from the cache fired no batch.
  const int batched = report.taken - report.cache_hits;
  if (batched <= 0) return;
  m_->batch_size.Observe(batched);
  m_->batch_seconds.Observe(report.forward_seconds + report.respond_seconds);
  m_->collect_seconds.Observe(report.collect_seconds);
  m_->batches.Increment();
  m_->positions.Increment(report.evaluated);
  if (!report.forward_status.ok()) m_->forward_failures.Increment();
}

void EvaluatorMetrics::Update(const EvaluatorTotals& t) {
  m_->requests_waiting.Set(static_cast<double>(t.requests_waiting));
  m_->request_capacity.Set(static_cast<double>(t.request_capacity));
  AdvanceTo(m_->stale_requests, static_cast<double>(t.stale_requests));
  AdvanceTo(m_->invalid_requests, static_cast<double>(t.invalid_requests));
  AdvanceTo(m_->stale_responses, static_cast<double>(t.stale_responses));
  m_->model_version.Set(static_cast<double>(t.model_version));
  AdvanceTo(m_->model_loads, static_cast<double>(t.model_loads));
  AdvanceTo(m_->model_load_failures, static_cast<double>(t.model_load_failures));
  AdvanceTo(m_->cache_invalidations, static_cast<double>(t.cache_invalidations));
  m_->cache_entries.Set(static_cast<double>(t.cache_entries));
  m_->cache_capacity.Set(static_cast<double>(t.cache_capacity));
}

}  // namespace az::evaluator
