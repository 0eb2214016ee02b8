#pragma once

// The daemon's Prometheus metrics (docs/replay.md, "Metrics"), served on the metrics port by the
// exporter every service uses (services/common/metrics_exporter.h). The libraries expose plain
// stats structs; this file alone turns them into metrics, so nothing below the service depends on
// prometheus-cpp.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace az::service {
class MetricsExporter;
}  // namespace az::service

namespace az::replayd {

// Everything the periodic update reads, from the store, the limiter, the ring, the sampler and the
// snapshotter. Counters are totals since start (or, for the store's, since the store was created).
struct MetricsInput {
  std::uint64_t size = 0;
  std::uint64_t capacity = 0;
  double alpha = 0;
  double priority_sum = 0;
  double priority_min = 0;
  double priority_max = 0;
  std::uint64_t withdrawn = 0;
  double new_record_priority = 0;
  std::uint64_t inserted_ring = 0;
  std::uint64_t inserted_control = 0;
  std::uint64_t rejected_ring = 0;
  std::uint64_t rejected_control = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t sample_requests = 0;
  std::uint64_t sampled_records = 0;
  std::uint64_t prefetch_hits = 0;
  std::uint64_t updates_applied = 0;
  std::uint64_t updates_stale = 0;
  std::uint64_t updates_rejected = 0;
  std::uint64_t priorities_clamped = 0;
  double last_beta = 0;
  bool has_model_version = false;
  double model_version = 0;
  // Sample ring (all processes, except the waits: the daemon's own).
  std::uint64_t ring_occupancy = 0;
  std::uint64_t ring_capacity = 0;
  std::uint64_t ring_pop_waits = 0;
  double ring_pop_wait_seconds = 0;
  std::uint32_t ring_sleeping_producers = 0;
  std::uint64_t ring_reclaimed_writes = 0;
  std::uint64_t ring_reclaimed_reads = 0;
  // Rate limiter.
  double samples_per_insert = 0;
  double draws_available = 0;
  std::uint64_t limiter_sample_waits = 0;
  std::uint64_t limiter_sample_timeouts = 0;
  std::uint64_t limiter_insert_waits = 0;
  // Samples pushed by other hosts (az-relay), in all and per host.
  std::uint64_t inserted_remote = 0;
  std::uint64_t rejected_remote = 0;
  struct RemoteHost {
    std::string host;
    std::uint64_t stored = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t rejected = 0;
    std::uint64_t committed_through = 0;
  };
  std::vector<RemoteHost> remote_hosts;
  // Snapshots.
  bool has_snapshot = false;
  double snapshot_age_seconds = 0;
  std::uint64_t snapshot_records = 0;
};

class ReplayMetrics {
 public:
  // Binds `bind_address`:`port` (port 0: any free port) and serves /metrics. InvalidArgument for a
  // bad address; Unavailable when the port cannot be bound.
  static Result<std::unique_ptr<ReplayMetrics>> Create(const std::string& bind_address, int port);
  ~ReplayMetrics();  // stops serving within 100 ms

  // The port actually bound.
  int port() const { return port_; }

  // Sets the gauges and advances the counters to the totals in `input`. Thread-safe.
  void Update(const MetricsInput& input);
  // One served batch: the staleness of each record in model versions (empty when unknown).
  void ObserveStaleness(std::span<const std::uint32_t> staleness);
  void ObserveSnapshot(double seconds, bool ok);

 private:
  struct Families;
  ReplayMetrics() = default;

  int port_ = 0;
  std::unique_ptr<service::MetricsExporter> exporter_;
  std::unique_ptr<Families> m_;
};

}  // namespace az::replayd
