// Context of an azctl command: endpoint resolution, calls, error reporting, output and the registry
// of per-service subcommands.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "ipc/client.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "services/azctl/azctl.h"

namespace az::azctl {
namespace {

std::map<std::string, ServiceCommands, std::less<>>& Registry() {
  static std::map<std::string, ServiceCommands, std::less<>> registry;
  return registry;
}

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kUnavailable:
    case StatusCode::kDataLoss:
    case StatusCode::kPermissionDenied: return kExitUnreachable;
    default: return kExitUsage;
  }
}

std::string ValueText(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void AddGlobalOptions(CLI::App& app, GlobalOptions& options) {
  app.add_option("--run-dir", options.run_dir, "the run directory (default: $AZ_RUN_DIR)")
      ->envname("AZ_RUN_DIR");
  app.add_option("--endpoint", options.endpoint,
                 "talk to this ZeroMQ endpoint (e.g. tcp://host:5555) instead of the run's");
  app.add_option("--timeout", options.timeout_seconds, "seconds to wait for each attempt")
      ->check(CLI::Range(0.001, 3600.0));
  app.add_option("--attempts", options.attempts, "attempts before giving up")
      ->check(CLI::Range(1, 100));
  app.add_flag("--json", options.json, "print JSON on stdout, for scripts");
}

Result<std::string> Context::ServiceEndpoint() const {
  if (!options.endpoint.empty()) return options.endpoint;
  if (options.run_dir.empty()) {
    return InvalidArgument("--run-dir (or $AZ_RUN_DIR) or --endpoint is required");
  }
  Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(options.run_dir, service);
  if (info.ok() && !info->control_endpoint.empty()) return info->control_endpoint;
  // Not started yet (or the record is unreadable): the default name still reaches it once it runs.
  return ipc::ControlEndpoint(options.run_dir, service);
}

int Context::Fail(const Status& status, int exit_code) const {
  std::string who = service.empty() ? "" : service + ": ";
  std::cerr << "azctl: " << who << status.ToString() << "\n";
  if (options.json) {
    PrintJson({{"ok", false}, {"error", ipc::ErrorJson(status)}});
  }
  return exit_code;
}

std::optional<ipc::Reply> Context::Exchange(nlohmann::json request,
                                            std::vector<zmq::message_t> frames, int* exit_code) {
  Result<std::string> endpoint = ServiceEndpoint();
  if (!endpoint.ok()) {
    *exit_code = Fail(endpoint.status(), kExitUsage);
    return std::nullopt;
  }
  if (options.endpoint.empty()) {
    // A service that never started here and has no socket: most likely a typo, so say so at once
    // instead of waiting out every attempt.
    Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(options.run_dir, service);
    std::optional<std::string> path = ipc::IpcPath(*endpoint);
    if (!info.ok() && info.status().code() == StatusCode::kNotFound && path &&
        path->starts_with("/") && !std::filesystem::exists(*path)) {
      std::string known;
      if (Result<std::vector<ipc::ServiceInfo>> all = ipc::ListServices(options.run_dir);
          all.ok()) {
        for (const ipc::ServiceInfo& other : *all)
          known += (known.empty() ? "" : ", ") + other.service;
      }
      *exit_code = Fail(Unavailable("no service '" + service + "' in " + options.run_dir +
                                    " (services there: " + (known.empty() ? "none" : known) + ")"),
                        kExitUnreachable);
      return std::nullopt;
    }
  }
  const auto timeout = std::chrono::milliseconds(
      std::max<long long>(1, std::llround(options.timeout_seconds * 1000)));
  Result<ipc::Client> client = ipc::Client::Create({.endpoint = *endpoint,
                                                    .run_dir = options.run_dir,
                                                    .attempt_timeout = timeout,
                                                    .max_attempts = options.attempts});
  if (!client.ok()) {
    *exit_code = Fail(client.status(), kExitUsage);
    return std::nullopt;
  }
  Result<ipc::Reply> reply = client->Exchange(std::move(request), std::move(frames));
  if (!reply.ok()) {
    Status status = reply.status();
    // Say why the service may not answer, when the run directory knows.
    if (options.endpoint.empty()) {
      Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(options.run_dir, service);
      if (!info.ok() && info.status().code() == StatusCode::kNotFound) {
        status =
            status.WithContext("no service '" + service + "' has started in " + options.run_dir);
      } else if (info.ok() && info->state == "stopped") {
        status = status.WithContext("'" + service + "' stopped");
      } else if (info.ok() && info->host == ipc::HostName() && !ipc::ProcessAlive(info->pid)) {
        status = status.WithContext("process " + std::to_string(info->pid) + " is gone");
      }
    }
    *exit_code = Fail(status, ExitCodeFor(status));
    return std::nullopt;
  }
  *exit_code = kExitOk;
  return std::move(reply).value();
}

int Context::Run(nlohmann::json request, std::vector<zmq::message_t> frames,
                 const std::function<void(const ipc::Reply&)>& human,
                 const std::function<int(const ipc::Reply&)>& outcome) {
  int exit_code = kExitOk;
  std::optional<ipc::Reply> reply = Exchange(std::move(request), std::move(frames), &exit_code);
  if (!reply) return exit_code;
  Status status = ipc::ReplyStatus(reply->body);
  if (options.json) PrintJson(reply->body);
  if (!status.ok()) {
    std::cerr << "azctl: " << service << ": " << status.ToString() << "\n";
    return status.code() == StatusCode::kDataLoss && !reply->body.contains("error")
               ? kExitUnreachable
               : kExitServiceError;
  }
  if (!options.json) {
    if (human) {
      human(*reply);
    } else {
      nlohmann::json fields = reply->body;
      fields.erase("ok");
      fields.erase("id");
      PrintFields(fields);
    }
  }
  return outcome ? outcome(*reply) : kExitOk;
}

bool RegisterServiceCommands(std::string_view name, ServiceCommands add) {
  Registry()[std::string(name)] = add;
  return true;
}

ServiceCommands FindServiceCommands(std::string_view service) {
  auto& registry = Registry();
  if (auto it = registry.find(service); it != registry.end()) return it->second;
  // "selfplay-3" -> "selfplay"
  const size_t dash = service.rfind('-');
  if (dash != std::string_view::npos && dash + 1 < service.size() &&
      std::all_of(service.begin() + dash + 1, service.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    if (auto it = registry.find(service.substr(0, dash)); it != registry.end()) return it->second;
  }
  return nullptr;
}

std::vector<std::string> RegisteredServices() {
  std::vector<std::string> names;
  for (const auto& [name, add] : Registry()) names.push_back(name);
  return names;
}

void PrintJson(const nlohmann::json& value) {
  std::cout << value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void PrintFields(const nlohmann::json& object) {
  if (!object.is_object()) {
    std::cout << ValueText(object) << "\n";
    return;
  }
  static const char* const kFirst[] = {"service", "state", "pid", "host", "uptime_seconds"};
  std::vector<std::string> keys;
  for (const char* key : kFirst) {
    if (object.contains(key)) keys.push_back(key);
  }
  const auto first_count = static_cast<std::ptrdiff_t>(keys.size());
  for (const auto& [key, value] : object.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::sort(keys.begin() + first_count, keys.end());
  size_t width = 0;
  for (const std::string& key : keys) width = std::max(width, key.size());
  for (const std::string& key : keys) {
    const nlohmann::json& value = object[key];
    std::string text = key == "uptime_seconds" && value.is_number()
                           ? FormatDuration(value.get<double>())
                           : ValueText(value);
    std::cout << key << ":" << std::string(width - key.size() + 1, ' ') << text << "\n";
  }
}

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0)) return "-";
  char text[32];
  const long long s = static_cast<long long>(seconds);
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.1fs", seconds);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  } else if (s < 86400) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  } else {
    std::snprintf(text, sizeof text, "%lldd%02lldh", s / 86400, (s % 86400) / 3600);
  }
  return text;
}

}  // namespace az::azctl
