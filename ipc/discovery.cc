#include "ipc/discovery.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "ipc/endpoint.h"
#include "ipc/file_util.h"

namespace az::ipc {

std::string ServiceInfoPath(std::string_view run_dir, std::string_view service) {
  return std::string(run_dir) + "/" + std::string(service) + ".json";
}

nlohmann::json ServiceInfoToJson(const ServiceInfo& info) {
  return {{"kind", kServiceInfoKind},
          {"version", kServiceInfoVersion},
          {"service", info.service},
          {"pid", info.pid},
          {"host", info.host},
          {"control_endpoint", info.control_endpoint},
          {"events_endpoint", info.events_endpoint},
          {"metrics_port", info.metrics_port},
          {"start_time_unix_ms", info.start_time_unix_ms},
          {"state", info.state}};
}

Result<ServiceInfo> ParseServiceInfo(std::string_view text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return DataLoss("not a JSON object");
  }
  auto kind = json.find("kind");
  if (kind == json.end() || !kind->is_string() || kind->get<std::string>() != kServiceInfoKind) {
    return DataLoss("not a service record (\"kind\" is not \"az-service\")");
  }
  auto version = json.find("version");
  if (version == json.end() || !version->is_number_integer()) {
    return DataLoss("service record without an integer \"version\"");
  }
  if (version->get<int>() != kServiceInfoVersion) {
    return FailedPrecondition("service record version " + std::to_string(version->get<int>()) +
                              ", this build reads version " + std::to_string(kServiceInfoVersion));
  }
  ServiceInfo info;
  try {
    info.service = json.at("service").get<std::string>();
    info.pid = json.at("pid").get<std::int64_t>();
    info.host = json.at("host").get<std::string>();
    info.control_endpoint = json.at("control_endpoint").get<std::string>();
    info.events_endpoint = json.value("events_endpoint", std::string());
    info.metrics_port = json.value("metrics_port", 0);
    info.start_time_unix_ms = json.value("start_time_unix_ms", std::int64_t{0});
    info.state = json.value("state", std::string("running"));
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(std::string("malformed service record: ") + e.what());
  }
  return info;
}

Status WriteServiceInfo(std::string_view run_dir, const ServiceInfo& info) {
  AZ_RETURN_IF_ERROR(ValidateServiceName(info.service));
  return WriteFileAtomically(ServiceInfoPath(run_dir, info.service),
                             ServiceInfoToJson(info).dump(2) + "\n");
}

Result<ServiceInfo> ReadServiceInfo(std::string_view run_dir, std::string_view service) {
  AZ_RETURN_IF_ERROR(ValidateServiceName(service));
  const std::string path = ServiceInfoPath(run_dir, service);
  AZ_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  Result<ServiceInfo> info = ParseServiceInfo(text);
  if (!info.ok()) return info.status().WithContext(path);
  return info;
}

Result<std::vector<ServiceInfo>> ListServices(std::string_view run_dir) {
  std::error_code error;
  std::filesystem::directory_iterator it(std::filesystem::path(run_dir), error);
  if (error) {
    return NotFound("run directory '" + std::string(run_dir) + "': " + error.message());
  }
  std::vector<ServiceInfo> out;
  for (const auto& entry : it) {
    const std::filesystem::path& path = entry.path();
    if (path.extension() != ".json" || !entry.is_regular_file(error)) continue;
    if (!ValidateServiceName(path.stem().string()).ok()) continue;
    Result<std::string> text = ReadSmallFile(path.string());
    if (!text.ok()) continue;  // removed while listing
    Result<ServiceInfo> info = ParseServiceInfo(*text);
    if (!info.ok() || info->service != path.stem().string()) continue;
    out.push_back(std::move(info).value());
  }
  std::sort(out.begin(), out.end(),
            [](const ServiceInfo& a, const ServiceInfo& b) { return a.service < b.service; });
  return out;
}

bool ProcessAlive(std::int64_t pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // A zombie (killed, not yet reaped by its parent) answers kill(0) but serves nothing.
  Result<std::string> stat = ReadSmallFile("/proc/" + std::to_string(pid) + "/stat");
  if (stat.ok()) {
    const size_t paren = stat->rfind(')');
    if (paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] == 'Z') {
      return false;
    }
  }
  return true;
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

}  // namespace az::ipc
