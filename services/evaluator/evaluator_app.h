#pragma once

// The evaluator as an object (docs/evaluator.md): the network, the eval channel's batching loop,
// the control server (built-ins plus `load-model`), model-event hot swaps and Prometheus metrics.
// main.cc parses the configuration, calls Create and Run; tests and benchmarks may do the same in
// process.
//
//   AZ_ASSIGN_OR_RETURN(auto app, EvaluatorApp::Create(config));
//   return app->Run();   // until `shutdown`, Stop() (SIGTERM), or a fatal error
//
// Commands: load-model {"path": P} (loads P between batches and answers with the model version;
// a file of other shapes for the same game replaces the network; a refused file keeps the old
// weights and is answered with the loader's error), plus the built-in
// status, pause (stops taking requests; they wait in the ring), resume, shutdown, commands.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"
#include "core/nn/network.h"
#include "ipc/server.h"
#include "services/common/metrics_exporter.h"
#include "services/evaluator/eval_batcher.h"
#include "services/evaluator/evaluator_config.h"
#include "services/evaluator/evaluator_metrics.h"
#include "services/evaluator/model_watcher.h"

namespace az::evaluator {

class EvaluatorApp {
 public:
  // Builds the network (from --model, or fresh), opens or creates the eval channel, binds the
  // control endpoint and the metrics port and subscribes to model events; nothing runs yet.
  // `config` must have been finalised (FinalizeConfig). Errors: those of the weights file
  // (NOT_FOUND, DATA_LOSS, FAILED_PRECONDITION), FAILED_PRECONDITION for a network of another game
  // or a channel of other record sizes, ALREADY_EXISTS when another evaluator serves this service
  // name in the run directory, UNAVAILABLE for ports that cannot be bound.
  static Result<std::unique_ptr<EvaluatorApp>> Create(const EvaluatorConfig& config);

  EvaluatorApp(const EvaluatorApp&) = delete;
  EvaluatorApp& operator=(const EvaluatorApp&) = delete;
  ~EvaluatorApp();

  // Serves batches until `shutdown` or Stop(). Finishes the batch in hand (every request taken is
  // answered); requests still in the ring stay there for the next evaluator. Call once.
  Status Run();
  // Asks Run() to return. Thread-safe; may be called before Run().
  void Stop();

  const std::string& endpoint() const { return server_->endpoint(); }
  int metrics_port() const { return exporter_ ? exporter_->port() : 0; }

 private:
  struct LoadRequest {
    std::string path;
    ipc::Responder responder;
  };
  struct Counters {
    std::uint64_t batches = 0;
    std::uint64_t requests = 0;
    std::uint64_t positions = 0;
    std::uint64_t cache_lookups = 0;
    std::uint64_t cache_hits = 0;
    std::uint64_t invalid = 0;
    std::uint64_t forward_failures = 0;
    std::uint64_t response_timeouts = 0;
    std::uint64_t model_loads = 0;
    std::uint64_t model_load_failures = 0;
    double collect_seconds = 0;
    double forward_seconds = 0;
    double respond_seconds = 0;
    double stall_seconds = 0;
  };

  explicit EvaluatorApp(const EvaluatorConfig& config) : config_(config) {}
  void RegisterCommands();
  // Loads `path` into the network (between batches) and clears the batcher's cache. On error the
  // old weights (and the cache) stay; the error is logged and counted.
  Status LoadModel(const std::string& path, std::string_view why);
  void ServeLoadRequests();
  void TakeModelEvents();
  void Publish(const BatchReport* report);  // metrics and the status snapshot
  void LogRates();
  nlohmann::json StatusJson();

  EvaluatorConfig config_;
  std::string channel_name_;
  std::string scope_;
  nn::RuntimeOptions runtime_;
  std::unique_ptr<nn::Network> network_;
  std::string model_path_;  // the file the weights came from; empty for a fresh network
  std::unique_ptr<EvalBatcher> batcher_;
  std::unique_ptr<service::MetricsExporter> exporter_;
  std::unique_ptr<EvaluatorMetrics> metrics_;
  std::unique_ptr<ModelWatcher> watcher_;
  std::unique_ptr<ipc::Server> server_;

  std::atomic<bool> stop_{false};
  std::mutex load_mutex_;
  std::deque<LoadRequest> load_queue_;

  // Written by the loop, read by `status` on the server's thread.
  std::mutex status_mutex_;
  Counters counters_;
  EvaluatorTotals totals_;
  std::string model_path_shown_;
  std::string net_shown_;
  std::string device_shown_;
  bool fp16_shown_ = false;
  bool bf16_shown_ = false;

  // The loop's own.
  Counters logged_;
  std::chrono::steady_clock::time_point last_log_;
  std::chrono::steady_clock::time_point last_publish_;
};

}  // namespace az::evaluator
