#include "services/relay/relay_config.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <bit>
#include <cctype>
#include <filesystem>

#include "ipc/curve.h"
#include "services/replay/server/remote_ingest.h"

namespace az::relay {

void AddRelayOptions(CLI::App& app, RelayConfig& c) {
  service::AddServiceOptions(app, c,
                             {.run_dir = "this host's run directory (sample ring, spool, models, "
                                         "keys/: a copy of the central run's)"});
  app.add_option("--central", c.central,
                 "the central replay daemon's remote endpoint, tcp://HOST:PORT (required)");
  app.add_option("--host", c.host, "this host's name at the daemon (default: the host name)");
  app.add_option("--game", c.game, "the samples' game (" + games::GameNames("|") + ")")
      ->capture_default_str();
  app.add_option("--shm-scope", c.shm_scope,
                 "shared-memory scope of the sample ring, shm:PREFIX or dir:PATH (default: "
                 "derived from the run directory)");
  app.add_option("--ring-name", c.ring_name, "segment name of the sample ring")
      ->capture_default_str();
  app.add_option("--ring-capacity", c.ring_capacity,
                 "slots of the sample ring when the relay creates it (a power of two)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--ring-batch", c.ring_batch, "records taken from the ring per call")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--spool-dir", c.spool_dir, "the on-disk spool (default: RUN_DIR/spool)");
  app.add_option("--spool-max-bytes", c.spool_max_bytes,
                 "unacknowledged bytes the spool holds before the relay stops taking samples")
      ->check(CLI::Range(std::uint64_t{1} << 16, std::uint64_t{1} << 44))
      ->capture_default_str();
  app.add_option("--spool-segment-records", c.spool_segment_records, "entries per spool file")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--push-batch", c.push_batch, "samples per push")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--push-timeout", c.push_timeout, "seconds one push waits for its reply")
      ->check(CLI::Range(0.05, 600.0))
      ->capture_default_str();
  app.add_option("--retry-max", c.retry_max,
                 "longest wait in seconds between tries while the daemon is unreachable")
      ->check(CLI::Range(0.01, 600.0))
      ->capture_default_str();
  app.add_option("--model-dir", c.model_dir,
                 "where fetched models are written for the local evaluator (default: "
                 "RUN_DIR/models)");
  app.add_option("--model-poll-interval", c.model_poll_interval,
                 "seconds between asks for a newer model; 0: do not follow models")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--model-keep", c.model_keep, "newest fetched model files kept")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
}

Status FinalizeConfig(RelayConfig& c) {
  AZ_RETURN_IF_ERROR(service::FinalizeServiceOptions(c));
  if (c.central.empty()) return InvalidArgument("--central (tcp://HOST:PORT) is required");
  if (!ipc::IsTcpEndpoint(c.central)) {
    return InvalidArgument("--central must be the replay daemon's tcp://HOST:PORT, got " +
                           c.central);
  }
  if (c.host.empty()) {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    for (char& ch : name) {
      if (ch != 0 && !std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') {
        ch = '_';
      }
    }
    c.host = std::string(name).substr(0, 64);
  }
  AZ_RETURN_IF_ERROR(replayd::ValidateHostName(c.host).WithContext("--host"));
  AZ_ASSIGN_OR_RETURN(c.game_info, games::FindGame(c.game));
  if (!std::has_single_bit(c.ring_capacity)) {
    return InvalidArgument("--ring-capacity must be a power of two, got " +
                           std::to_string(c.ring_capacity));
  }
  if (c.spool_dir.empty()) c.spool_dir = c.run_dir + "/spool";
  if (c.model_dir.empty()) c.model_dir = c.run_dir + "/models";
  c.spool_dir = std::filesystem::absolute(c.spool_dir).lexically_normal().string();
  c.model_dir = std::filesystem::absolute(c.model_dir).lexically_normal().string();
  return Status::Ok();
}

nlohmann::json ConfigToJson(const RelayConfig& c) {
  return {{"run_dir", c.run_dir},
          {"service", c.service},
          {"central", c.central},
          {"host", c.host},
          {"game", c.game},
          {"shm_scope", c.shm_scope},
          {"ring_name", c.ring_name},
          {"ring_capacity", c.ring_capacity},
          {"ring_batch", c.ring_batch},
          {"spool_dir", c.spool_dir},
          {"spool_max_bytes", c.spool_max_bytes},
          {"spool_segment_records", c.spool_segment_records},
          {"push_batch", c.push_batch},
          {"push_timeout", c.push_timeout},
          {"retry_max", c.retry_max},
          {"model_dir", c.model_dir},
          {"model_poll_interval", c.model_poll_interval},
          {"model_keep", c.model_keep},
          {"metrics_port", c.metrics_port},
          {"metrics_bind", c.metrics_bind},
          {"log_level", c.log_level},
          {"log_interval", c.log_interval}};
}

}  // namespace az::relay
