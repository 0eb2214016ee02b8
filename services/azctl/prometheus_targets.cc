// `azctl prometheus-targets`: the run's metrics endpoints as a Prometheus file_sd target list
// (docs/dashboards.md). Prometheus rereads the file when it changes, so a run whose services pick
// free ports, restart, or gain self-play workers is scraped without editing any config.
//
//   [{"targets": ["localhost:9102"],
//     "labels": {"service": "replay", "role": "replay", "run": "20261122-0900"}}, ...]
//
// The target labels must not be label names the services' own metrics use (component, result,
// reason, source, side, kind): Prometheus would rename the metric's label to exported_<name>,
// and queries by it would break. tests/dashboards checks that no such rename happens.

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "ipc/discovery.h"
#include "ipc/file_util.h"
#include "services/azctl/azctl.h"

namespace az::azctl {
namespace {

struct TargetsOptions {
  std::string output;  // empty: stdout
};

// "selfplay-3" -> "selfplay": queries can aggregate over the workers of one role.
std::string Role(const std::string& service) {
  const std::size_t dash = service.rfind('-');
  if (dash == std::string::npos || dash + 1 == service.size()) return service;
  for (std::size_t i = dash + 1; i < service.size(); ++i) {
    if (service[i] < '0' || service[i] > '9') return service;
  }
  return service.substr(0, dash);
}

nlohmann::json TargetList(const std::vector<ipc::ServiceInfo>& services,
                          const std::string& run_name) {
  nlohmann::json list = nlohmann::json::array();
  const std::string this_host = ipc::HostName();
  for (const ipc::ServiceInfo& info : services) {
    // A cleanly stopped service is no target; one that died still "running" stays, so that its
    // `up` goes to 0 and the AzServiceDown alert fires.
    if (info.metrics_port <= 0 || info.state != "running") continue;
    const std::string host = info.host == this_host ? "localhost" : info.host;
    list.push_back(
        {{"targets", {host + ":" + std::to_string(info.metrics_port)}},
         {"labels", {{"service", info.service}, {"role", Role(info.service)}, {"run", run_name}}}});
  }
  return list;
}

int RunTargets(Context& context, const TargetsOptions& targets) {
  const GlobalOptions& options = context.options;
  if (options.run_dir.empty()) {
    return context.Fail(InvalidArgument("--run-dir (or $AZ_RUN_DIR) is required"), kExitUsage);
  }
  Result<std::vector<ipc::ServiceInfo>> services = ipc::ListServices(options.run_dir);
  if (!services.ok()) return context.Fail(services.status(), kExitUsage);
  const std::string run_name =
      std::filesystem::weakly_canonical(options.run_dir).filename().string();
  const std::string text = TargetList(*services, run_name).dump(2) + "\n";
  if (targets.output.empty()) {
    std::cout << text;
    return kExitOk;
  }
  // Atomic, so Prometheus never reads half a file.
  Status written = ipc::WriteFileAtomically(targets.output, text);
  if (!written.ok()) return context.Fail(written, kExitUsage);
  return kExitOk;
}

}  // namespace

void AddPrometheusTargetsCommand(CLI::App& app, Context& context) {
  TargetsOptions& targets = context.Keep<TargetsOptions>({});
  app.add_option("--output,-o", targets.output,
                 "write the list to this file atomically (default: print it)");
  app.callback([&context, &targets] {
    context.SetAction([&context, &targets] { return RunTargets(context, targets); });
  });
}

}  // namespace az::azctl
