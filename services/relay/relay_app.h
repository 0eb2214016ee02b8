#pragma once

// az-relay: a self-play host's link to the central pipeline (docs/scaling.md). On a host that runs
// its own az-evaluator and az-selfplay workers (shared memory on that host, as on one machine) but
// no replay daemon and no learner, the relay
//   - takes the finished samples off the host's sample ring and appends them to its on-disk spool
//     (spool.h), numbering them, before the ring slot is released;
//   - pushes them from the spool to the central replay daemon's remote endpoint over ZeroMQ TCP
//     with CURVE (`push`, services/replay/server/remote_ingest.h), in batches, retrying until a
//     reply says they are stored; the daemon deduplicates by (host, sequence number), so a lost
//     reply, a killed relay or a restarted daemon never stores a sample twice nor loses one;
//   - asks the daemon for the newest model every few seconds (`model`), checks the file against
//     its published checksum, writes it into the host's model directory and announces it as a
//     "model" event on its own events endpoint (ipc://<run-dir>/relay.pub), which the host's
//     evaluator follows (its model-events-from = "relay").
// Its control server answers status (spool, pushes, the daemon's view, the model) and the usual
// pause/resume/shutdown; pause stops taking from the ring.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "core/base/status.h"
#include "ipc/client.h"
#include "ipc/event_publisher.h"
#include "ipc/server.h"
#include "services/relay/relay_config.h"
#include "services/relay/spool.h"
#include "shm/ring.h"

namespace az::service {
class MetricsExporter;
}  // namespace az::service

namespace az::relay {

struct RelayStats {
  std::uint64_t taken = 0;            // records taken off the ring into the spool
  std::uint64_t ring_duplicates = 0;  // ring records already spooled (a restart mid-take)
  std::uint64_t pushes = 0;           // pushes answered
  std::uint64_t push_errors = 0;      // pushes that failed (the daemon away, refused, ...)
  std::uint64_t stored = 0;           // what the daemon's replies said it stored
  std::uint64_t duplicates = 0;       // ... already had
  std::uint64_t rejected = 0;         // ... dropped as malformed
  std::uint64_t models_fetched = 0;
  std::int64_t model_version = -1;  // the newest model written here
  std::string last_error;           // of the last failed push or model fetch
  bool connected = false;           // the last push was answered
};

class RelayApp {
 public:
  // Opens the spool, the ring and the events publisher, binds the control endpoint and the metrics
  // port; nothing runs yet. FailedPrecondition when <run-dir>/keys lacks the central run's keys.
  static Result<std::unique_ptr<RelayApp>> Create(const RelayConfig& config);
  ~RelayApp();
  RelayApp(const RelayApp&) = delete;
  RelayApp& operator=(const RelayApp&) = delete;

  // Runs until `shutdown` or Stop(): the ring thread, the push thread and the model thread, a
  // progress line every log_interval seconds. On the way out the record in hand is spooled and
  // the push in flight finishes (or times out); what is unacknowledged stays in the spool.
  Status Run();
  void Stop();

  const std::string& endpoint() const;
  RelayStats Stats() const;
  SpoolStats spool_stats() const { return spool_->Stats(); }

 private:
  explicit RelayApp(const RelayConfig& config);
  void RingLoop();
  void PushLoop();
  void ModelLoop();
  Status FetchModel(ipc::Client& client);
  nlohmann::json StatusJson() const;
  void LogProgress();
  void UpdateMetrics();
  void Fail(const Status& status, const char* what);

  RelayConfig config_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<shm::Ring> ring_;
  std::uint64_t ring_id_ = 0;
  std::unique_ptr<ipc::EventPublisher> events_;
  std::unique_ptr<ipc::Server> server_;
  std::unique_ptr<service::MetricsExporter> metrics_;
  struct Metrics;
  std::unique_ptr<Metrics> metric_;

  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::thread ring_thread_, push_thread_, model_thread_;
  mutable std::mutex mutex_;  // guards stats_
  RelayStats stats_;
  struct Progress {
    std::chrono::steady_clock::time_point at;
    std::uint64_t taken = 0;
    std::uint64_t stored = 0;
  } progress_;
};

}  // namespace az::relay
