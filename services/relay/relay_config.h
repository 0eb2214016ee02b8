#pragma once

// The configuration of az-relay (docs/scaling.md): every flag, its default and its range, from the
// command line or a config file (CLI11 `--config FILE`, keys named as the long flags; unknown keys
// are refused). deploy/config/relay.toml is a commented example with every key.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"
#include "core/games/registry.h"
#include "services/common/cli_fwd.h"
#include "services/common/service_options.h"

namespace az::relay {

struct RelayConfig : service::ServiceOptions {
  RelayConfig() : ServiceOptions({.service = "relay", .metrics_port = 9105}) {}

  // The central replay daemon's remote endpoint (its remote-endpoint key), tcp://HOST:PORT;
  // required. CURVE with the keys in <run-dir>/keys, a copy of the central run's.
  std::string central;
  std::string host;  // this host's name at the daemon; default: the machine's host name
  std::string game = "connect4";  // the samples' game: the record size and checks

  // The host's sample ring (as az-replay would open it).
  std::string shm_scope;  // default: derived from the run directory
  std::string ring_name = "samples";
  std::uint64_t ring_capacity = 4096;  // used when the relay creates the ring
  std::uint32_t ring_batch = 64;       // records taken per ring call

  // The spool.
  std::string spool_dir;  // default <run-dir>/spool
  std::uint64_t spool_max_bytes = std::uint64_t{1} << 30;
  std::uint64_t spool_segment_records = 16384;

  // Pushing.
  std::uint32_t push_batch = 256;  // records per push
  double push_timeout = 5;         // seconds one push waits for its reply
  double retry_max = 5;            // seconds between tries, at most, while the daemon is away

  // Models.
  std::string model_dir;           // default <run-dir>/models
  double model_poll_interval = 2;  // seconds between asks for a newer model; 0: no models
  int model_keep = 5;              // newest model files kept

  // Derived by FinalizeConfig.
  const games::GameInfo* game_info = nullptr;
};

void AddRelayOptions(CLI::App& app, RelayConfig& config);
// Defaults that depend on the run directory, and what single flags cannot check. InvalidArgument
// naming the option.
Status FinalizeConfig(RelayConfig& config);
nlohmann::json ConfigToJson(const RelayConfig& config);

}  // namespace az::relay
