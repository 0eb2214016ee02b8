#pragma once

// Service discovery in a run directory. Each service writes <run-dir>/<service>.json atomically
// when its control server starts, and marks it "stopped" when it stops cleanly; a killed service
// leaves it "running" with a dead pid, which is how azctl reports it as down. The record:
//
//   {"kind": "az-service", "version": 1, "service": "replay", "pid": 4242, "host": "box",
//    "control_endpoint": "ipc:///run/az/replay.ctl", "events_endpoint": "",
//    "metrics_port": 9102, "start_time_unix_ms": 1700000000000, "state": "running"}

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace az::ipc {

inline constexpr std::string_view kServiceInfoKind = "az-service";
inline constexpr int kServiceInfoVersion = 1;

struct ServiceInfo {
  std::string service;
  std::int64_t pid = 0;
  std::string host;
  std::string control_endpoint;
  std::string events_endpoint;  // empty when the service publishes no events
  int metrics_port = 0;         // 0 when the service exports no metrics
  std::int64_t start_time_unix_ms = 0;
  std::string state = "running";  // "running", or "stopped" after a clean stop
};

// <run-dir>/<service>.json
std::string ServiceInfoPath(std::string_view run_dir, std::string_view service);

nlohmann::json ServiceInfoToJson(const ServiceInfo& info);
// DATA_LOSS when the text is not a service record (not JSON, wrong kind, missing or mistyped
// fields); FAILED_PRECONDITION for a version this build does not read.
Result<ServiceInfo> ParseServiceInfo(std::string_view text);

// Writes the record atomically (ipc/file_util.h). The run directory must exist.
Status WriteServiceInfo(std::string_view run_dir, const ServiceInfo& info);
// NOT_FOUND when the service never started in this run directory; errors of ParseServiceInfo.
Result<ServiceInfo> ReadServiceInfo(std::string_view run_dir, std::string_view service);

// Every service record in the run directory, sorted by service name. Other *.json files (configs,
// anything not of kind "az-service") are skipped. NOT_FOUND when the directory does not exist.
Result<std::vector<ServiceInfo>> ListServices(std::string_view run_dir);

// Whether a process with this pid runs on this host (kill(pid, 0), EPERM counting as alive; a
// zombie does not).
bool ProcessAlive(std::int64_t pid);

// The host name, as recorded in ServiceInfo::host.
std::string HostName();

}  // namespace az::ipc
