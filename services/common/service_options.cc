#include "services/common/service_options.h"

#include <CLI/CLI.hpp>

#include "ipc/endpoint.h"
#include "services/common/service_util.h"

namespace az::service {

void AddServiceOptions(CLI::App& app, ServiceOptions& o, const ServiceOptionsHelp& help) {
  app.set_config("--config", "", "read options from this TOML/INI file (keys as the long flags)");
  app.allow_config_extras(CLI::config_extras_mode::error);

  app.add_option("--run-dir", o.run_dir, help.run_dir)->required()->envname("AZ_RUN_DIR");
  CLI::Option* service =
      app.add_option("--service", o.service,
                     "service name in the run directory" +
                         (help.service_default.empty() ? "" : " " + help.service_default));
  if (!o.service.empty()) service->capture_default_str();

  app.add_option("--metrics-port", o.metrics_port, help.metrics_port)
      ->check(CLI::Range(help.min_metrics_port, 65535))
      ->capture_default_str();
  app.add_option("--metrics-bind", o.metrics_bind, "address the metrics server binds")
      ->capture_default_str();
  app.add_option("--log-interval", o.log_interval, help.log_interval)
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--log-level", o.log_level, "debug, info, warning or error")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}))
      ->capture_default_str();
}

Status FinalizeServiceOptions(ServiceOptions& o) {
  if (o.run_dir.empty()) return InvalidArgument("--run-dir is required");
  AZ_ASSIGN_OR_RETURN(o.run_dir, ipc::NormalizeRunDir(o.run_dir));
  AZ_RETURN_IF_ERROR(ipc::ValidateServiceName(o.service).WithContext("--service"));
  AZ_RETURN_IF_ERROR(ParseLogLevel(o.log_level).status().WithContext("--log-level"));
  if (o.metrics_port < -1 || o.metrics_port > 65535) {
    return InvalidArgument("--metrics-port must be in [-1, 65535], got " +
                           std::to_string(o.metrics_port));
  }
  if (!(o.log_interval >= 0)) return InvalidArgument("--log-interval must be >= 0");
  return Status::Ok();
}

}  // namespace az::service
