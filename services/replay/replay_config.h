#pragma once

// The configuration of az-replay: every flag, its default and its range, from the command line or a
// config file (CLI11: `--config FILE`, TOML or INI, keys named as the long flags; unknown keys are
// refused). deploy/config/replay.toml is a commented example with every key. The options every
// service shares (run directory, service name, metrics, log) are services/common's
// ServiceOptions; the daemon's defaults for them are set in the constructor below.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"
#include "services/common/cli_fwd.h"
#include "services/common/service_options.h"
#include "services/replay/record_layout.h"
#include "services/replay/server/rate_limiter.h"

namespace az::replayd {

// run_dir (required): control socket, discovery record, default paths.
struct ReplayConfig : service::ServiceOptions {
  ReplayConfig() : ServiceOptions({.service = "replay", .metrics_port = 9102}) {}

  // Where things live.
  std::string store;         // the store file; default <run-dir>/replay.store
  std::string snapshot_dir;  // default <run-dir>/snapshots
  std::string endpoint;      // control endpoint; default ipc://<run-dir>/replay.ctl
  std::string shm_scope;     // sample ring scope ("shm:<prefix>" / "dir:<path>"); default derived
  std::string ring_name = "samples";

  // The buffer (fixed when the store file is created; checked against an existing one).
  std::uint64_t capacity = 100000;
  std::uint64_t record_bytes = 1160;  // sizeof(sample::ChessSample)
  std::string record_layout = "chess";
  double alpha = 0.6;
  double epsilon = 1e-6;
  double initial_priority = 1.0;

  // Snapshots.
  double snapshot_interval = 600;  // seconds; 0: only on request
  int snapshot_keep = 3;
  bool snapshot_on_exit = false;
  std::string restore;  // load this snapshot (or "latest" in snapshot_dir) into an empty store

  // Rate limiter and sampling.
  RateLimiterOptions rate;
  std::uint32_t max_batch = 16384;
  double sample_timeout = 10;  // seconds a sample request may wait when it names no timeout
  bool prefetch = true;
  double prefetch_max_age = 1;  // seconds

  // Ingest.
  bool ingest = true;
  std::uint64_t ring_capacity = 4096;  // used when the daemon creates the ring
  std::uint32_t ingest_batch = 64;

  // Samples from other hosts (docs/scaling.md): a tcp:// endpoint (always CURVE, the run's keys)
  // where az-relay pushes its host's samples and fetches the newest model; empty: none.
  std::string remote_endpoint;
  std::string remote_dir;  // the hosts' journals; default <run-dir>/remote

  // Observability (besides the shared metrics and log options).
  std::string model_events_from = "learner";  // service whose "model" events set the model version

  // Test hook (hidden): SIGKILL after committing this many ring records, before releasing the last.
  std::uint64_t crash_after_ingest = 0;
  // Test hook (hidden): SIGKILL after storing this many pushed records, before the journal commit.
  std::uint64_t crash_after_remote = 0;

  // Derived by Finalize.
  RecordLayout layout;  // from record_layout by Validate
};

// Registers every option (and --config) on `app`, with ranges. Unknown config-file keys are errors.
void AddReplayOptions(CLI::App& app, ReplayConfig& config);

// Fills the defaults that depend on the run directory and checks what single flags cannot
// (layout against record size, rate limiter options, ring capacity a power of two, ...).
// InvalidArgument naming the option.
Status FinalizeConfig(ReplayConfig& config);

// The effective configuration, for the startup log and `status`.
nlohmann::json ConfigToJson(const ReplayConfig& config);

}  // namespace az::replayd
