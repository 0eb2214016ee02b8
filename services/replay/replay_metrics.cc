#include "services/replay/replay_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <mutex>
#include <vector>

#include "services/common/metric_builders.h"
#include "services/common/metrics_exporter.h"

namespace az::replayd {
namespace {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;
using service::AdvanceTo;
using service::MakeGauge;

const std::vector<double> kStalenessBuckets = {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64};

}  // namespace

struct ReplayMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : records(MakeGauge(r, "az_replay_records", "Records in the replay buffer")),
        capacity(MakeGauge(r, "az_replay_capacity_records", "Slots of the replay buffer")),
        alpha(MakeGauge(r, "az_replay_alpha", "Priority exponent alpha")),
        beta(MakeGauge(r, "az_replay_beta",
                       "Importance-sampling exponent beta of the latest sample request")),
        priority_sum(MakeGauge(r, "az_replay_priority_sum", "Sum of p_i over stored records")),
        priority_min(MakeGauge(r, "az_replay_priority_min", "Smallest p_i above zero")),
        priority_max(MakeGauge(r, "az_replay_priority_max", "Largest p_i")),
        withdrawn(MakeGauge(r, "az_replay_withdrawn_records",
                            "Records held but never drawn: withdrawn as malformed by the learner, "
                            "until overwritten")),
        new_record_priority(
            MakeGauge(r, "az_replay_new_record_priority", "Priority a record inserted now gets")),
        model_version(
            MakeGauge(r, "az_replay_model_version", "Newest model version known to the daemon")),
        inserted(prometheus::BuildCounter()
                     .Name("az_replay_inserted_records_total")
                     .Help("Records committed to the buffer, by where they came from")
                     .Register(r)),
        inserted_ring(inserted.Add({{"source", "ring"}})),
        inserted_control(inserted.Add({{"source", "control"}})),
        inserted_remote(inserted.Add({{"source", "remote"}})),
        rejected(prometheus::BuildCounter()
                     .Name("az_replay_rejected_records_total")
                     .Help("Malformed records dropped instead of stored")
                     .Register(r)),
        rejected_ring(rejected.Add({{"source", "ring"}})),
        rejected_control(rejected.Add({{"source", "control"}})),
        rejected_remote(rejected.Add({{"source", "remote"}})),
        remote(prometheus::BuildCounter()
                   .Name("az_replay_remote_records_total")
                   .Help("Samples pushed by each self-play host (az-relay), by result: stored, "
                         "duplicate (pushed again after a lost reply or a restart) or rejected")
                   .Register(r)),
        remote_seq(prometheus::BuildGauge()
                       .Name("az_replay_remote_committed_seq")
                       .Help("The last sequence number of each self-play host handled")
                       .Register(r)),
        duplicates(prometheus::BuildCounter()
                       .Name("az_replay_duplicate_records_total")
                       .Help("Ring records delivered again after a restart and not stored twice")
                       .Register(r)
                       .Add({})),
        sample_requests(prometheus::BuildCounter()
                            .Name("az_replay_sample_requests_total")
                            .Help("Sample requests answered with a batch")
                            .Register(r)
                            .Add({})),
        sampled(prometheus::BuildCounter()
                    .Name("az_replay_sampled_records_total")
                    .Help("Records served to learners")
                    .Register(r)
                    .Add({})),
        prefetch_hits(prometheus::BuildCounter()
                          .Name("az_replay_prefetch_hits_total")
                          .Help("Sample requests answered from the batch drawn ahead")
                          .Register(r)
                          .Add({})),
        updates(prometheus::BuildCounter()
                    .Name("az_replay_priority_updates_total")
                    .Help("Priority updates, by result: applied, stale (slot overwritten since "
                          "it was sampled) or rejected (NaN, infinite, negative, bad slot)")
                    .Register(r)),
        updates_applied(updates.Add({{"result", "applied"}})),
        updates_stale(updates.Add({{"result", "stale"}})),
        updates_rejected(updates.Add({{"result", "rejected"}})),
        clamped(prometheus::BuildCounter()
                    .Name("az_replay_priority_clamped_total")
                    .Help("Priorities raised or lowered into the representable range")
                    .Register(r)
                    .Add({})),
        staleness(prometheus::BuildHistogram()
                      .Name("az_replay_sample_staleness_model_versions")
                      .Help("Model versions between the newest model and the one that produced "
                            "each served record")
                      .Register(r)
                      .Add({}, kStalenessBuckets)),
        ring_occupancy(
            MakeGauge(r, "az_replay_ring_occupancy_records", "Records waiting in the sample ring")),
        ring_capacity(MakeGauge(r, "az_replay_ring_capacity_records", "Slots of the sample ring")),
        ring_sleeping_producers(MakeGauge(r, "az_replay_ring_sleeping_producers",
                                          "Producers blocked on a full sample ring now")),
        ring_waits(prometheus::BuildCounter()
                       .Name("az_replay_ring_waits_total")
                       .Help("Times the daemon found the sample ring empty and waited")
                       .Register(r)
                       .Add({})),
        ring_wait_seconds(prometheus::BuildCounter()
                              .Name("az_replay_ring_wait_seconds_total")
                              .Help("Time the daemon spent waiting for samples")
                              .Register(r)
                              .Add({})),
        ring_reclaimed(prometheus::BuildCounter()
                           .Name("az_replay_ring_reclaimed_total")
                           .Help("Ring slots of dead processes reclaimed: writes (holes) and "
                                 "reads (records redelivered)")
                           .Register(r)),
        ring_reclaimed_writes(ring_reclaimed.Add({{"kind", "writes"}})),
        ring_reclaimed_reads(ring_reclaimed.Add({{"kind", "reads"}})),
        samples_per_insert(MakeGauge(r, "az_replay_rate_limiter_samples_per_insert",
                                     "Rate limiter ratio (0: off)")),
        draws_available(MakeGauge(r, "az_replay_rate_limiter_draws_available",
                                  "Draws the rate limiter would serve now")),
        limiter_waits(prometheus::BuildCounter()
                          .Name("az_replay_rate_limiter_waits_total")
                          .Help("Times a side had to wait for the rate limiter")
                          .Register(r)),
        limiter_sample_waits(limiter_waits.Add({{"side", "sample"}})),
        limiter_insert_waits(limiter_waits.Add({{"side", "insert"}})),
        limiter_timeouts(prometheus::BuildCounter()
                             .Name("az_replay_rate_limiter_timeouts_total")
                             .Help("Sample requests answered DEADLINE_EXCEEDED by the limiter")
                             .Register(r)
                             .Add({})),
        snapshot_duration(prometheus::BuildHistogram()
                              .Name("az_replay_snapshot_duration_seconds")
                              .Help("Time to write a snapshot")
                              .Register(r)
                              .Add({}, Histogram::BucketBoundaries{0.01, 0.05, 0.1, 0.5, 1, 2, 5,
                                                                   10, 30, 60, 120, 300})),
        snapshots(prometheus::BuildCounter()
                      .Name("az_replay_snapshots_total")
                      .Help("Snapshots written, by result")
                      .Register(r)),
        snapshots_ok(snapshots.Add({{"result", "ok"}})),
        snapshots_failed(snapshots.Add({{"result", "failed"}})),
        snapshot_age(MakeGauge(r, "az_replay_snapshot_age_seconds",
                               "Seconds since the latest successful snapshot (-1: none yet)")),
        snapshot_records(MakeGauge(r, "az_replay_snapshot_records",
                                   "Records in the latest successful snapshot")) {}

  Gauge& records;
  Gauge& capacity;
  Gauge& alpha;
  Gauge& beta;
  Gauge& priority_sum;
  Gauge& priority_min;
  Gauge& priority_max;
  Gauge& withdrawn;
  Gauge& new_record_priority;
  Gauge& model_version;
  prometheus::Family<Counter>& inserted;
  Counter& inserted_ring;
  Counter& inserted_control;
  Counter& inserted_remote;
  prometheus::Family<Counter>& rejected;
  Counter& rejected_ring;
  Counter& rejected_control;
  Counter& rejected_remote;
  prometheus::Family<Counter>& remote;
  prometheus::Family<Gauge>& remote_seq;
  struct HostSeries {
    Counter* stored;
    Counter* duplicate;
    Counter* rejected;
    Gauge* committed;
  };
  std::mutex hosts_mutex;
  std::map<std::string, HostSeries> hosts;  // made on a host's first appearance
  Counter& duplicates;
  Counter& sample_requests;
  Counter& sampled;
  Counter& prefetch_hits;
  prometheus::Family<Counter>& updates;
  Counter& updates_applied;
  Counter& updates_stale;
  Counter& updates_rejected;
  Counter& clamped;
  Histogram& staleness;
  Gauge& ring_occupancy;
  Gauge& ring_capacity;
  Gauge& ring_sleeping_producers;
  Counter& ring_waits;
  Counter& ring_wait_seconds;
  prometheus::Family<Counter>& ring_reclaimed;
  Counter& ring_reclaimed_writes;
  Counter& ring_reclaimed_reads;
  Gauge& samples_per_insert;
  Gauge& draws_available;
  prometheus::Family<Counter>& limiter_waits;
  Counter& limiter_sample_waits;
  Counter& limiter_insert_waits;
  Counter& limiter_timeouts;
  Histogram& snapshot_duration;
  prometheus::Family<Counter>& snapshots;
  Counter& snapshots_ok;
  Counter& snapshots_failed;
  Gauge& snapshot_age;
  Gauge& snapshot_records;
};

Result<std::unique_ptr<ReplayMetrics>> ReplayMetrics::Create(const std::string& bind_address,
                                                             int port) {
  std::unique_ptr<ReplayMetrics> metrics(new ReplayMetrics());
  AZ_ASSIGN_OR_RETURN(metrics->exporter_, service::MetricsExporter::Start(bind_address, port));
  metrics->m_ = std::make_unique<Families>(metrics->exporter_->registry());
  metrics->port_ = metrics->exporter_->port();
  return metrics;
}

ReplayMetrics::~ReplayMetrics() = default;

void ReplayMetrics::Update(const MetricsInput& in) {
  Families& m = *m_;
  m.records.Set(static_cast<double>(in.size));
  m.capacity.Set(static_cast<double>(in.capacity));
  m.alpha.Set(in.alpha);
  m.beta.Set(in.last_beta);
  m.priority_sum.Set(in.priority_sum);
  m.priority_min.Set(in.priority_min);
  m.priority_max.Set(in.priority_max);
  m.withdrawn.Set(static_cast<double>(in.withdrawn));
  m.new_record_priority.Set(in.new_record_priority);
  if (in.has_model_version) m.model_version.Set(in.model_version);
  AdvanceTo(m.inserted_ring, static_cast<double>(in.inserted_ring));
  AdvanceTo(m.inserted_control, static_cast<double>(in.inserted_control));
  AdvanceTo(m.rejected_ring, static_cast<double>(in.rejected_ring));
  AdvanceTo(m.rejected_control, static_cast<double>(in.rejected_control));
  AdvanceTo(m.inserted_remote, static_cast<double>(in.inserted_remote));
  AdvanceTo(m.rejected_remote, static_cast<double>(in.rejected_remote));
  {
    std::lock_guard lock(m.hosts_mutex);
    for (const MetricsInput::RemoteHost& host : in.remote_hosts) {
      auto it = m.hosts.find(host.host);
      if (it == m.hosts.end()) {
        it = m.hosts
                 .emplace(host.host,
                          Families::HostSeries{
                              &m.remote.Add({{"host", host.host}, {"result", "stored"}}),
                              &m.remote.Add({{"host", host.host}, {"result", "duplicate"}}),
                              &m.remote.Add({{"host", host.host}, {"result", "rejected"}}),
                              &m.remote_seq.Add({{"host", host.host}})})
                 .first;
      }
      AdvanceTo(*it->second.stored, static_cast<double>(host.stored));
      AdvanceTo(*it->second.duplicate, static_cast<double>(host.duplicates));
      AdvanceTo(*it->second.rejected, static_cast<double>(host.rejected));
      it->second.committed->Set(static_cast<double>(host.committed_through));
    }
  }
  AdvanceTo(m.duplicates, static_cast<double>(in.duplicates));
  AdvanceTo(m.sample_requests, static_cast<double>(in.sample_requests));
  AdvanceTo(m.sampled, static_cast<double>(in.sampled_records));
  AdvanceTo(m.prefetch_hits, static_cast<double>(in.prefetch_hits));
  AdvanceTo(m.updates_applied, static_cast<double>(in.updates_applied));
  AdvanceTo(m.updates_stale, static_cast<double>(in.updates_stale));
  AdvanceTo(m.updates_rejected, static_cast<double>(in.updates_rejected));
  AdvanceTo(m.clamped, static_cast<double>(in.priorities_clamped));
  m.ring_occupancy.Set(static_cast<double>(in.ring_occupancy));
  m.ring_capacity.Set(static_cast<double>(in.ring_capacity));
  m.ring_sleeping_producers.Set(in.ring_sleeping_producers);
  AdvanceTo(m.ring_waits, static_cast<double>(in.ring_pop_waits));
  AdvanceTo(m.ring_wait_seconds, in.ring_pop_wait_seconds);
  AdvanceTo(m.ring_reclaimed_writes, static_cast<double>(in.ring_reclaimed_writes));
  AdvanceTo(m.ring_reclaimed_reads, static_cast<double>(in.ring_reclaimed_reads));
  m.samples_per_insert.Set(in.samples_per_insert);
  m.draws_available.Set(in.draws_available);
  AdvanceTo(m.limiter_sample_waits, static_cast<double>(in.limiter_sample_waits));
  AdvanceTo(m.limiter_insert_waits, static_cast<double>(in.limiter_insert_waits));
  AdvanceTo(m.limiter_timeouts, static_cast<double>(in.limiter_sample_timeouts));
  m.snapshot_age.Set(in.has_snapshot ? in.snapshot_age_seconds : -1);
  if (in.has_snapshot) m.snapshot_records.Set(static_cast<double>(in.snapshot_records));
}

void ReplayMetrics::ObserveStaleness(std::span<const std::uint32_t> staleness) {
  if (staleness.empty()) return;
  // One histogram call per batch, not one locked Observe per record.
  std::vector<double> buckets(kStalenessBuckets.size() + 1, 0.0);
  double sum = 0;
  for (std::uint32_t s : staleness) {
    const auto value = static_cast<double>(s);
    sum += value;
    std::size_t i = 0;
    while (i < kStalenessBuckets.size() && value > kStalenessBuckets[i]) ++i;
    buckets[i] += 1;
  }
  m_->staleness.ObserveMultiple(buckets, sum);
}

void ReplayMetrics::ObserveSnapshot(double seconds, bool ok) {
  if (ok) {
    m_->snapshot_duration.Observe(seconds);
    m_->snapshots_ok.Increment();
  } else {
    m_->snapshots_failed.Increment();
  }
}

}  // namespace az::replayd
