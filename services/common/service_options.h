#pragma once

// The options every long-running service shares (az-replay, az-evaluator, az-selfplay,
// az-learner): where it lives (--run-dir, --service), its metrics (--metrics-port,
// --metrics-bind) and its log (--log-level, --log-interval), plus --config. Each service's config
// struct derives from ServiceOptions and sets its own defaults for them in its constructor (the
// one place those defaults live), registers them with AddServiceOptions and checks them with
// FinalizeServiceOptions, so the four spell, range-check and validate them the same way.

#include <string>

#include "core/base/status.h"
#include "services/common/cli_fwd.h"

namespace az::service {

struct ServiceOptions {
  std::string run_dir;   // required (or $AZ_RUN_DIR): control socket, discovery record
  std::string service;   // the service's name in the run directory
  int metrics_port = 0;  // 0: any free port; -1: no metrics
  std::string metrics_bind = "127.0.0.1";  // 0.0.0.0 to let other hosts scrape (docs/security.md)
  std::string log_level = "info";          // debug, info, warning or error
  double log_interval = 10;                // seconds between progress lines in the log; 0: none
};

// How one service describes its shared options in --help.
struct ServiceOptionsHelp {
  // What the run directory holds for this service.
  std::string run_dir = "the run directory (control socket, discovery record)";
  // Shown after "service name in the run directory" when the default is derived (empty service).
  std::string service_default;
  std::string metrics_port = "Prometheus /metrics port; 0: any free port; -1: off";
  // The lowest --metrics-port accepted: -1 (off), or lower for a service that gives a value below
  // -1 a meaning of its own (self-play: -2, 9110 + worker id).
  int min_metrics_port = -1;
  std::string log_interval = "seconds between progress lines; 0: none";
};

// Registers --config (a TOML or INI file, keys named as the long flags; unknown keys are errors)
// and the shared options on `app`, with ranges; the values in `options` are the defaults shown.
void AddServiceOptions(CLI::App& app, ServiceOptions& options, const ServiceOptionsHelp& help = {});

// Checks and normalises the shared options after parsing: --run-dir present (made absolute and
// normal), --service a valid name, --log-level known, --metrics-port in [-1, 65535] (resolve a
// service's own values below -1 first). InvalidArgument naming the option.
Status FinalizeServiceOptions(ServiceOptions& options);

}  // namespace az::service
