#include "services/replay/replay_config.h"

#include <CLI/CLI.hpp>
#include <bit>
#include <filesystem>

#include "core/sample/chess_sample.h"
#include "ipc/curve.h"
#include "ipc/endpoint.h"

namespace az::replayd {

static_assert(sizeof(sample::ChessSample) == 1160, "ReplayConfig::record_bytes default");

void AddReplayOptions(CLI::App& app, ReplayConfig& c) {
  service::AddServiceOptions(app, c);
  app.add_option("--store", c.store, "the store file (default: RUN_DIR/replay.store)");
  app.add_option("--snapshot-dir", c.snapshot_dir,
                 "snapshots go here (default: RUN_DIR/snapshots)");
  app.add_option(
      "--endpoint", c.endpoint,
      "control endpoint (default: ipc://RUN_DIR/replay.ctl; tcp://HOST:PORT on request)");
  app.add_option("--shm-scope", c.shm_scope,
                 "shared-memory scope of the sample ring, shm:PREFIX or dir:PATH (default: "
                 "derived from the run directory)");
  app.add_option("--ring-name", c.ring_name, "segment name of the sample ring")
      ->capture_default_str();

  app.add_option("--capacity", c.capacity, "records the buffer holds")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32))
      ->capture_default_str();
  app.add_option("--record-bytes", c.record_bytes, "bytes per record")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option(
         "--record-layout", c.record_layout,
         "a game's sample, validated on arrival (" + games::GameNames("|") + "), or bytes (opaque)")
      ->check([](const std::string& name) {
        return ParseRecordLayout(name).ok() ? std::string() : "not one of " + RecordLayoutChoices();
      })
      ->capture_default_str();
  app.add_option("--alpha", c.alpha, "priority exponent: p = (loss + eps)^alpha; 0 = uniform")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--epsilon", c.epsilon, "added to every loss so no record gets priority 0")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--initial-priority", c.initial_priority,
                 "priority of records inserted into an empty buffer")
      ->check(CLI::Range(1e-6, 65536.0))
      ->capture_default_str();

  app.add_option("--snapshot-interval", c.snapshot_interval,
                 "seconds between snapshots; 0: only on request")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--snapshot-keep", c.snapshot_keep, "newest snapshots kept")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--snapshot-on-exit", c.snapshot_on_exit, "write a snapshot on a clean shutdown")
      ->capture_default_str();
  app.add_option("--restore", c.restore,
                 "load this snapshot file (or 'latest' from the snapshot dir) into an empty store");

  app.add_option("--min-size-to-sample", c.rate.min_size_to_sample,
                 "records the buffer must hold before any sample is served")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32))
      ->capture_default_str();
  app.add_option("--samples-per-insert", c.rate.samples_per_insert,
                 "rate limiter: draws per inserted record; 0: no limit")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--error-buffer", c.rate.error_buffer,
                 "rate limiter: draws the ratio may be off by, either way")
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  app.add_option("--block-inserts", c.rate.block_inserts,
                 "rate limiter: hold the sample ring back while the learner is behind")
      ->capture_default_str();
  app.add_option("--max-batch", c.max_batch, "largest batch one sample request may ask for")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--sample-timeout", c.sample_timeout,
                 "seconds a sample request may wait for the rate limiter when it names no timeout")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--prefetch", c.prefetch, "draw the next batch ahead of the learner")
      ->capture_default_str();
  app.add_option("--prefetch-max-age", c.prefetch_max_age,
                 "seconds after which a batch drawn ahead is drawn again")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();

  app.add_option("--ingest", c.ingest, "take samples from the sample ring")->capture_default_str();
  app.add_option("--ring-capacity", c.ring_capacity,
                 "slots of the sample ring when the daemon creates it (a power of two)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--ingest-batch", c.ingest_batch, "records taken from the ring per call")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();

  app.add_option("--remote-endpoint", c.remote_endpoint,
                 "tcp://HOST:PORT where self-play hosts' az-relay push samples and fetch models "
                 "(CURVE with the run's keys); empty: none");
  app.add_option("--remote-dir", c.remote_dir,
                 "the remote hosts' sequence journals (default: RUN_DIR/remote)");
  app.add_option("--model-events-from", c.model_events_from,
                 "service whose 'model' events give the current model version; empty: none")
      ->capture_default_str();
  // For the crash tests; not part of the documented interface.
  app.add_option("--crash-after-ingest", c.crash_after_ingest)->group("");
  app.add_option("--crash-after-remote", c.crash_after_remote)->group("");
}

Status FinalizeConfig(ReplayConfig& c) {
  AZ_RETURN_IF_ERROR(service::FinalizeServiceOptions(c));
  if (c.store.empty()) c.store = c.run_dir + "/replay.store";
  if (c.snapshot_dir.empty()) c.snapshot_dir = c.run_dir + "/snapshots";
  if (c.remote_dir.empty()) c.remote_dir = c.run_dir + "/remote";
  if (!c.remote_endpoint.empty() && !ipc::IsTcpEndpoint(c.remote_endpoint)) {
    return InvalidArgument("--remote-endpoint must be tcp://HOST:PORT, got " + c.remote_endpoint);
  }
  c.store = std::filesystem::absolute(c.store).lexically_normal().string();
  c.snapshot_dir = std::filesystem::absolute(c.snapshot_dir).lexically_normal().string();
  AZ_ASSIGN_OR_RETURN(c.layout, ParseRecordLayout(c.record_layout));
  AZ_RETURN_IF_ERROR(CheckRecordSize(c.layout, c.record_bytes));
  AZ_RETURN_IF_ERROR(ValidateRateLimiterOptions(c.rate).WithContext("rate limiter"));
  if (!std::has_single_bit(c.ring_capacity)) {
    return InvalidArgument("--ring-capacity must be a power of two, got " +
                           std::to_string(c.ring_capacity));
  }
  if (!c.model_events_from.empty())
    AZ_RETURN_IF_ERROR(ipc::ValidateServiceName(c.model_events_from));
  return Status::Ok();
}

nlohmann::json ConfigToJson(const ReplayConfig& c) {
  return {{"run_dir", c.run_dir},
          {"store", c.store},
          {"snapshot_dir", c.snapshot_dir},
          {"endpoint", c.endpoint},
          {"service", c.service},
          {"shm_scope", c.shm_scope},
          {"ring_name", c.ring_name},
          {"capacity", c.capacity},
          {"record_bytes", c.record_bytes},
          {"record_layout", c.record_layout},
          {"alpha", c.alpha},
          {"epsilon", c.epsilon},
          {"initial_priority", c.initial_priority},
          {"snapshot_interval", c.snapshot_interval},
          {"snapshot_keep", c.snapshot_keep},
          {"snapshot_on_exit", c.snapshot_on_exit},
          {"restore", c.restore},
          {"min_size_to_sample", c.rate.min_size_to_sample},
          {"samples_per_insert", c.rate.samples_per_insert},
          {"error_buffer", c.rate.error_buffer},
          {"block_inserts", c.rate.block_inserts},
          {"max_batch", c.max_batch},
          {"sample_timeout", c.sample_timeout},
          {"prefetch", c.prefetch},
          {"prefetch_max_age", c.prefetch_max_age},
          {"ingest", c.ingest},
          {"ring_capacity", c.ring_capacity},
          {"ingest_batch", c.ingest_batch},
          {"metrics_port", c.metrics_port},
          {"metrics_bind", c.metrics_bind},
          {"remote_endpoint", c.remote_endpoint},
          {"remote_dir", c.remote_dir},
          {"model_events_from", c.model_events_from},
          {"log_level", c.log_level},
          {"log_interval", c.log_interval}};
}

}  // namespace az::replayd
