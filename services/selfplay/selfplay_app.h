#pragma once

// The self-play worker as an object (docs/selfplay.md): the engine's games (the driver library,
// driver/selfplay_engine.h) wired to the eval channel and the sample ring through their adapters,
// the control server and Prometheus metrics. main.cc parses the configuration, calls Create and
// Run.
//
//   AZ_ASSIGN_OR_RETURN(auto app, SelfPlayApp::Create(config));
//   return app->Run();   // until max_games, `shutdown`, Stop() (SIGTERM), or a fatal error
//
// Commands: the built-in status, pause (finishes the evaluations in flight, then waits; games keep
// their state), resume, shutdown, commands.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/base/status.h"
#include "ipc/server.h"
#include "services/common/metrics_exporter.h"
#include "services/selfplay/driver/selfplay_engine.h"
#include "services/selfplay/eval_channel_evaluator.h"
#include "services/selfplay/sample_ring_sink.h"
#include "services/selfplay/selfplay_config.h"
#include "services/selfplay/selfplay_metrics.h"
#include "shm/scope.h"

namespace az::selfplay {

class SelfPlayApp {
 public:
  // Opens (or creates) the sample ring, binds the control endpoint and the metrics port; the eval
  // channel is attached in Run, so a worker may start before the evaluator. `config` must have
  // been finalised. Errors: FAILED_PRECONDITION for a sample ring of another record size,
  // ALREADY_EXISTS when this service name is already served in the run directory, UNAVAILABLE for
  // ports that cannot be bound.
  static Result<std::unique_ptr<SelfPlayApp>> Create(const SelfPlayConfig& config);

  SelfPlayApp(const SelfPlayApp&) = delete;
  SelfPlayApp& operator=(const SelfPlayApp&) = delete;
  ~SelfPlayApp();

  // Waits for the eval channel (up to connect_timeout), then plays until max_games games have
  // finished, `shutdown` or Stop(). Games in progress at a stop are abandoned (their samples are
  // not pushed: a game without its outcome has no targets). DEADLINE_EXCEEDED when the channel
  // never appeared; the channel's or the ring's errors. Call once.
  Status Run();
  // Asks Run() to return. Thread-safe; may be called before Run().
  void Stop();

  const std::string& endpoint() const { return server_->endpoint(); }
  int metrics_port() const { return exporter_ ? exporter_->port() : 0; }

 private:
  explicit SelfPlayApp(const SelfPlayConfig& config) : config_(config) {}
  Result<shm::RequestClient> Connect();
  void Publish(bool force);
  void LogRates();
  nlohmann::json StatusJson();

  SelfPlayConfig config_;
  std::optional<shm::Scope> scope_;
  std::optional<shm::Ring> samples_;
  std::unique_ptr<service::MetricsExporter> exporter_;
  std::unique_ptr<SelfPlayMetrics> metrics_;
  std::unique_ptr<ipc::Server> server_;

  std::atomic<bool> stop_{false};
  std::mutex engine_mutex_;  // guards engine_ against Stop() from another thread
  std::unique_ptr<SelfPlayEngine> engine_;
  // The engine's transport, owned by engine_; their stats are read on the loop's thread.
  const EvalChannelEvaluator* evaluator_ = nullptr;
  const SampleRingSink* sink_ = nullptr;

  // Written by the loop, read by `status` on the server's thread.
  std::mutex status_mutex_;
  std::string phase_ = "starting";
  EngineCounters counters_;
  shm::ChannelClientStats channel_;
  shm::RingStats ring_;

  EngineCounters logged_;
  std::chrono::steady_clock::time_point last_log_;
  std::chrono::steady_clock::time_point last_publish_;
};

}  // namespace az::selfplay
