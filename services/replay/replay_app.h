#pragma once

// The replay daemon as an object: the prioritized replay store in its mapped file, served over the
// ZeroMQ control plane, fed from the sample ring, with a rate limiter, periodic snapshots and
// Prometheus metrics (docs/replay.md, "The daemon"). The parts are az_replay_server's
// (services/replay/server); this object wires them to the control server, the run's sample ring,
// the record layout (record_layout.h) and the metrics. main.cc hands it to the shared service main
// (services/common/service_main.h); tests and benchmarks may call Create and Run in process.
//
//   AZ_ASSIGN_OR_RETURN(auto app, ReplayApp::Create(config));
//   return app->Run();   // until `shutdown`, Stop() (SIGTERM), or a fatal error
//
// Commands (docs/replay.md lists their arguments and replies): sample, update-priorities, insert,
// read, snapshot, set, plus the built-in status, pause (stops ingesting from the ring), resume,
// shutdown, commands. With a remote endpoint, a second server there answers only what self-play
// hosts need (docs/scaling.md): push (their samples) and model (the newest model file), plus the
// built-in status and commands.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "core/base/status.h"
#include "core/replay/replay_store.h"
#include "ipc/event.h"
#include "ipc/server.h"
#include "services/replay/replay_config.h"
#include "services/replay/replay_metrics.h"
#include "services/replay/server/ingestor.h"
#include "services/replay/server/rate_limiter.h"
#include "services/replay/server/remote_ingest.h"
#include "services/replay/server/sampler.h"
#include "services/replay/server/snapshotter.h"

namespace az::replayd {

class ReplayApp {
 public:
  // Opens (or creates) the store, restores a snapshot if asked, binds the control endpoint and the
  // metrics port and opens the sample ring; nothing runs yet. `config` must have been finalised
  // (FinalizeConfig). Errors say what is wrong and what to do: FAILED_PRECONDITION when the store
  // file disagrees with the configuration (record size, capacity, alpha) or --restore targets a
  // store that holds records; ALREADY_EXISTS when another daemon serves this run directory or holds
  // the store; UNAVAILABLE for ports and files that cannot be opened; the errors of LoadSnapshot.
  static Result<std::unique_ptr<ReplayApp>> Create(const ReplayConfig& config);

  ReplayApp(const ReplayApp&) = delete;
  ReplayApp& operator=(const ReplayApp&) = delete;
  ~ReplayApp();

  // Serves until `shutdown` or Stop(), then shuts down cleanly: stops taking from the ring (the
  // record in hand is committed), answers waiting requests CANCELLED, finishes a snapshot in
  // progress (and writes one if snapshot_on_exit), flushes the store to disk and closes it, and
  // releases the endpoint and the ring. Only the metrics server is left for the destructor (it
  // stops within 100 ms). Logs a progress line every log_interval seconds. Returns OK after a
  // clean shutdown. Call once.
  Status Run();
  // Asks Run() to return. Thread-safe; may be called before Run().
  void Stop();

  // The bound control endpoint and metrics port (0 when metrics are off).
  const std::string& endpoint() const;
  // The bound remote endpoint (the port filled in); empty when there is none.
  std::string remote_endpoint() const;
  int metrics_port() const;

 private:
  explicit ReplayApp(const ReplayConfig& config);
  void RegisterCommands();
  nlohmann::json StatusJson() const;
  MetricsInput CollectMetrics() const;
  void UpdateModelVersion(std::int64_t version);
  std::string SnapshotMetadata() const;
  void LogProgress();  // one line: records, and rates since the previous line
  // The sample ring, opened or created, and its identity (for the ingest journal).
  Result<IngestSource> OpenRing() const;
  void EventLoop();  // model events from the learner

  // Handlers (command_handlers.cc).
  void HandleSample(ipc::Request& request, ipc::Responder& responder);
  // A served batch as the `sample` reply (body, draws and records frames); observes staleness.
  ipc::Reply SampleReply(SampledBatch batch);
  Result<ipc::Reply> HandleUpdatePriorities(ipc::Request& request);
  Result<ipc::Reply> HandleWithdraw(ipc::Request& request);
  Result<ipc::Reply> HandleInsert(ipc::Request& request);
  Result<ipc::Reply> HandleRead(ipc::Request& request);
  void HandleSnapshot(ipc::Request& request, ipc::Responder& responder);
  Result<ipc::Reply> HandleSet(ipc::Request& request);
  // The remote server's (remote_handlers.cc).
  Status StartRemote();
  Result<ipc::Reply> HandlePush(ipc::Request& request);
  Result<ipc::Reply> HandleModel(ipc::Request& request);
  nlohmann::json RemoteStatusJson() const;

  // The configuration; sample_timeout and log_level change with `set`, on the server thread only.
  ReplayConfig config_;
  const nlohmann::json config_json_;  // as started, for snapshot metadata (other threads)
  std::unique_ptr<replay::ReplayStore> store_;
  std::unique_ptr<RateLimiter> limiter_;
  std::unique_ptr<ReplayMetrics> metrics_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<Snapshotter> snapshotter_;
  std::unique_ptr<Ingestor> ingestor_;
  std::mutex server_mutex_;  // guards server_ between Stop() (any thread) and the end of Run()
  std::unique_ptr<ipc::Server> server_;
  std::unique_ptr<RemoteIngest> remote_;
  std::unique_ptr<ipc::Server> remote_server_;       // serves on its own thread
  std::string remote_bound_;                         // its endpoint, the port filled in
  mutable std::mutex model_mutex_;                   // guards latest_model_
  std::optional<ipc::ModelPublished> latest_model_;  // the newest "model" event, for `model`
  std::atomic<std::uint64_t> models_served_{0};
  nlohmann::json restored_;  // what --restore loaded, for status

  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> model_version_{-1};  // newest known; -1: none
  std::atomic<std::uint64_t> inserted_control_{0};
  std::atomic<std::uint64_t> rejected_control_{0};
  std::thread events_thread_;

  struct Progress {  // what the previous progress line counted
    std::chrono::steady_clock::time_point at;
    std::uint64_t inserted = 0;
    std::uint64_t sampled = 0;
    std::uint64_t updates = 0;
  };
  Progress progress_;
};

}  // namespace az::replayd
