#include "services/learner/learner_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>
#include <vector>

#include "services/common/metric_builders.h"

namespace az::learner {
namespace {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;
using service::MakeCounter;
using service::MakeGauge;
using service::MakeHistogram;

const std::vector<double> kSecondsBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                             0.25,  0.5,    1,     2.5,  5,     10,   30};
const std::vector<double> kStalenessBuckets = {0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89};

}  // namespace

struct LearnerMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : loss_family(prometheus::BuildGauge()
                        .Name("az_learner_loss")
                        .Help("Importance-weighted mean loss of the last step, by component "
                              "(policy and value cross-entropy, total = policy + w * value)")
                        .Register(r)),
        loss_policy(loss_family.Add({{"component", "policy"}})),
        loss_value(loss_family.Add({{"component", "value"}})),
        loss_total(loss_family.Add({{"component", "total"}})),
        policy_accuracy(MakeGauge(
            r, "az_learner_policy_accuracy",
            "Share of the last step's samples whose highest policy logit is the target's most "
            "likely move: how well the policy fits the search that trains it")),
        grad_norm(MakeGauge(r, "az_learner_grad_norm",
                            "Total L2 norm of the gradients of the last step, before clipping")),
        learning_rate(MakeGauge(r, "az_learner_learning_rate", "Learning rate of the last step")),
        beta(MakeGauge(r, "az_learner_beta", "Importance-sampling exponent beta in use")),
        step(MakeGauge(r, "az_learner_step",
                       "Optimizer steps taken in this run, restored ones included")),
        steps(MakeCounter(r, "az_learner_steps_total", "Optimizer steps taken by this process")),
        skipped_family(prometheus::BuildCounter()
                           .Name("az_learner_skipped_batches_total")
                           .Help("Sampled batches not trained on, by reason")
                           .Register(r)),
        skipped_loss(skipped_family.Add({{"reason", "nonfinite_loss"}})),
        skipped_gradient(skipped_family.Add({{"reason", "nonfinite_gradient"}})),
        skipped_empty(skipped_family.Add({{"reason", "no_valid_samples"}})),
        skipped_error(skipped_family.Add({{"reason", "train_error"}})),
        skipped_peer(skipped_family.Add({{"reason", "peer_failed"}})),
        malformed(MakeCounter(r, "az_learner_malformed_samples_total",
                              "Sampled records that failed validation (dropped, not trained on)")),
        samples(MakeCounter(r, "az_learner_samples_trained_total",
                            "Samples in the optimizer steps taken")),
        samples_per_second(MakeGauge(r, "az_learner_samples_per_second",
                                     "Samples trained per second over the last 5 seconds")),
        staleness(MakeHistogram(r, "az_learner_sample_staleness_model_versions",
                                "Model versions between the network that produced a trained "
                                "sample and the learner's newest published model",
                                kStalenessBuckets)),
        step_seconds(MakeHistogram(r, "az_learner_step_seconds",
                                   "Decoding and training one batch (forward, backward, update)",
                                   kSecondsBuckets)),
        sample_seconds(MakeHistogram(r, "az_learner_sample_seconds",
                                     "Waiting for and receiving one batch from the replay daemon",
                                     kSecondsBuckets)),
        waiting(MakeGauge(r, "az_learner_waiting_for_replay",
                          "1 while the replay daemon cannot serve a batch (below its minimum, "
                          "rate-limited or down)")),
        updates_family(prometheus::BuildCounter()
                           .Name("az_learner_priority_updates_total")
                           .Help("Priority updates sent to the replay daemon, by what it did "
                                 "with them (failed: the request got no answer)")
                           .Register(r)),
        updates_applied(updates_family.Add({{"result", "applied"}})),
        updates_stale(updates_family.Add({{"result", "stale"}})),
        updates_rejected(updates_family.Add({{"result", "rejected"}})),
        updates_failed(updates_family.Add({{"result", "failed"}})),
        checkpoint_seconds(MakeHistogram(r, "az_learner_checkpoint_seconds",
                                         "Writing one checkpoint (model + optimizer + step)",
                                         kSecondsBuckets)),
        model_version(MakeGauge(r, "az_learner_model_version", "Newest model version published")),
        models(MakeCounter(r, "az_learner_models_published_total",
                           "Models published by this process")),
        rollbacks(MakeCounter(r, "az_learner_rollbacks_total",
                              "Reloads of the newest checkpoint after non-finite batches in a "
                              "row")),
        benchmark_family(prometheus::BuildGauge()
                             .Name("az_learner_benchmark_share")
                             .Help("Share of the solver benchmark's positions where the newest "
                                   "scored model's raw policy keeps the game's value: over all "
                                   "of them, over the non-trivial ones, and the run's best")
                             .Register(r)),
        benchmark_all(benchmark_family.Add({{"positions", "all"}})),
        benchmark_nontrivial(benchmark_family.Add({{"positions", "nontrivial"}})),
        benchmark_best(benchmark_family.Add({{"positions", "best"}})),
        benchmark_value_family(
            prometheus::BuildGauge()
                .Name("az_learner_benchmark_value_share")
                .Help("The newest scored model's benchmark share over the positions of one solver "
                      "value for the side to move (win, draw, loss)")
                .Register(r)),
        benchmark_model(MakeGauge(r, "az_learner_benchmark_model_version",
                                  "Model version of the newest solver benchmark")),
        benchmark_failures(MakeCounter(r, "az_learner_benchmark_failures_total",
                                       "Published models the solver benchmark could not score")),
        collapse_family(prometheus::BuildGauge()
                            .Name("az_learner_collapse_suspected")
                            .Help("1 while a sign of collapse holds: the benchmark share far "
                                  "below the run's best, or the value loss near zero")
                            .Register(r)),
        collapse_benchmark(collapse_family.Add({{"reason", "benchmark_drop"}})),
        collapse_value(collapse_family.Add({{"reason", "value_loss"}})),
        warnings_family(prometheus::BuildCounter()
                            .Name("az_learner_collapse_warnings_total")
                            .Help("Collapse warnings raised, by sign")
                            .Register(r)),
        warnings_benchmark(warnings_family.Add({{"reason", "benchmark_drop"}})),
        warnings_value(warnings_family.Add({{"reason", "value_loss"}})),
        group_rank(MakeGauge(r, "az_learner_rank",
                             "This learner's rank in its data-parallel group (0 for a single "
                             "learner; rank 0 checkpoints and publishes)")),
        group_world_size(MakeGauge(r, "az_learner_world_size",
                                   "Learners in the data-parallel group (1: a single learner)")) {}

  prometheus::Family<Gauge>& loss_family;
  Gauge& loss_policy;
  Gauge& loss_value;
  Gauge& loss_total;
  Gauge& policy_accuracy;
  Gauge& grad_norm;
  Gauge& learning_rate;
  Gauge& beta;
  Gauge& step;
  Counter& steps;
  prometheus::Family<Counter>& skipped_family;
  Counter& skipped_loss;
  Counter& skipped_gradient;
  Counter& skipped_empty;
  Counter& skipped_error;
  Counter& skipped_peer;
  Counter& malformed;
  Counter& samples;
  Gauge& samples_per_second;
  Histogram& staleness;
  Histogram& step_seconds;
  Histogram& sample_seconds;
  Gauge& waiting;
  prometheus::Family<Counter>& updates_family;
  Counter& updates_applied;
  Counter& updates_stale;
  Counter& updates_rejected;
  Counter& updates_failed;
  Histogram& checkpoint_seconds;
  Gauge& model_version;
  Counter& models;
  Counter& rollbacks;
  prometheus::Family<Gauge>& benchmark_family;
  Gauge& benchmark_all;
  Gauge& benchmark_nontrivial;
  Gauge& benchmark_best;
  prometheus::Family<Gauge>& benchmark_value_family;
  Gauge& benchmark_model;
  Counter& benchmark_failures;
  prometheus::Family<Gauge>& collapse_family;
  Gauge& collapse_benchmark;
  Gauge& collapse_value;
  prometheus::Family<Counter>& warnings_family;
  Counter& warnings_benchmark;
  Counter& warnings_value;
  Gauge& group_rank;
  Gauge& group_world_size;
};

LearnerMetrics::LearnerMetrics(prometheus::Registry& registry)
    : m_(std::make_unique<Families>(registry)) {}
LearnerMetrics::~LearnerMetrics() = default;

void LearnerMetrics::ObserveStep(const StepReport& r) {
  m_->loss_policy.Set(r.policy_loss);
  m_->loss_value.Set(r.value_loss);
  m_->loss_total.Set(r.loss);
  m_->policy_accuracy.Set(r.policy_accuracy);
  m_->grad_norm.Set(r.grad_norm);
  m_->learning_rate.Set(r.learning_rate);
  m_->beta.Set(r.beta);
  m_->step.Set(static_cast<double>(r.step));
  m_->steps.Increment();
  m_->samples.Increment(static_cast<double>(r.samples));
  m_->step_seconds.Observe(r.train_seconds);
  m_->sample_seconds.Observe(r.sample_seconds);
  for (double s : r.staleness) m_->staleness.Observe(s);
}

void LearnerMetrics::CountSkipped(SkipKind kind) {
  switch (kind) {
    case SkipKind::kNonFiniteLoss: m_->skipped_loss.Increment(); break;
    case SkipKind::kNonFiniteGradient: m_->skipped_gradient.Increment(); break;
    case SkipKind::kNoValidSamples: m_->skipped_empty.Increment(); break;
    case SkipKind::kTrainError: m_->skipped_error.Increment(); break;
    case SkipKind::kPeerFailed: m_->skipped_peer.Increment(); break;
  }
}

void LearnerMetrics::SetGroup(int rank, int world_size) {
  m_->group_rank.Set(rank);
  m_->group_world_size.Set(world_size);
}

void LearnerMetrics::CountMalformed(std::uint64_t records) {
  if (records > 0) m_->malformed.Increment(static_cast<double>(records));
}

void LearnerMetrics::CountPriorityUpdates(std::uint64_t applied, std::uint64_t stale,
                                          std::uint64_t rejected) {
  m_->updates_applied.Increment(static_cast<double>(applied));
  m_->updates_stale.Increment(static_cast<double>(stale));
  m_->updates_rejected.Increment(static_cast<double>(rejected));
}

void LearnerMetrics::CountPriorityFailure() { m_->updates_failed.Increment(); }

void LearnerMetrics::ObserveCheckpoint(double seconds) { m_->checkpoint_seconds.Observe(seconds); }

void LearnerMetrics::ObservePublish(std::uint64_t model_version) {
  m_->model_version.Set(static_cast<double>(model_version));
  m_->models.Increment();
}

void LearnerMetrics::SetRestored(std::uint64_t step, std::uint64_t model_version) {
  m_->step.Set(static_cast<double>(step));
  m_->model_version.Set(static_cast<double>(model_version));
}

void LearnerMetrics::CountRollback() { m_->rollbacks.Increment(); }
void LearnerMetrics::SetBeta(double beta) { m_->beta.Set(beta); }
void LearnerMetrics::SetSamplesPerSecond(double rate) { m_->samples_per_second.Set(rate); }
void LearnerMetrics::SetWaiting(bool waiting) { m_->waiting.Set(waiting ? 1 : 0); }

void LearnerMetrics::ObserveBenchmark(std::uint64_t model_version, double share,
                                      double nontrivial_share, double best_share) {
  m_->benchmark_all.Set(share);
  m_->benchmark_nontrivial.Set(nontrivial_share);
  m_->benchmark_best.Set(best_share);
  m_->benchmark_model.Set(static_cast<double>(model_version));
}

void LearnerMetrics::ObserveBenchmarkValue(std::string_view value, double share) {
  m_->benchmark_value_family.Add({{"value", std::string(value)}}).Set(share);
}

void LearnerMetrics::CountBenchmarkFailure() { m_->benchmark_failures.Increment(); }

void LearnerMetrics::SetCollapse(bool benchmark_falling, bool value_loss_collapsed) {
  m_->collapse_benchmark.Set(benchmark_falling ? 1 : 0);
  m_->collapse_value.Set(value_loss_collapsed ? 1 : 0);
}

void LearnerMetrics::CountCollapseWarning(std::string_view reason) {
  (reason == "value_loss" ? m_->warnings_value : m_->warnings_benchmark).Increment();
}

}  // namespace az::learner
