// Run-wide commands: `status` (every service of the run at a glance) and `events`.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <ctime>
#include <future>
#include <iostream>

#include "ipc/client.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "ipc/event_subscriber.h"
#include "services/azctl/azctl.h"

namespace az::azctl {
namespace {

std::chrono::milliseconds Timeout(const GlobalOptions& options) {
  return std::chrono::milliseconds(
      std::max<long long>(1, std::llround(options.timeout_seconds * 1000)));
}

// What `status` found out about one service.
struct Probe {
  ipc::ServiceInfo info;
  bool up = false;
  std::string state;  // running, paused, stopping, down, unresponsive
  std::string why;    // for a service that is not up
  nlohmann::json status = nullptr;
};

Probe ProbeService(const ipc::ServiceInfo& info, const GlobalOptions& options) {
  Probe probe;
  probe.info = info;
  const bool local = info.host == ipc::HostName();
  if (info.state == "stopped") {
    probe.state = "down";
    probe.why = "stopped";
    return probe;
  }
  if (local && !ipc::ProcessAlive(info.pid)) {
    probe.state = "down";
    probe.why = "process " + std::to_string(info.pid) + " is gone";
    return probe;
  }
  Result<ipc::Client> client = ipc::Client::Create({.endpoint = info.control_endpoint,
                                                    .run_dir = options.run_dir,
                                                    .attempt_timeout = Timeout(options),
                                                    .max_attempts = options.attempts});
  Result<ipc::Reply> reply = client.ok() ? client->Call("status") : client.status();
  if (!reply.ok()) {
    probe.state = "unresponsive";
    probe.why = reply.status().ToString();
    return probe;
  }
  probe.up = true;
  probe.status = reply->body;
  probe.state = reply->body.value("state", std::string("running"));
  return probe;
}

int RunStatus(Context& context) {
  const GlobalOptions& options = context.options;
  if (options.run_dir.empty()) {
    return context.Fail(InvalidArgument("--run-dir (or $AZ_RUN_DIR) is required"), kExitUsage);
  }
  Result<std::vector<ipc::ServiceInfo>> services = ipc::ListServices(options.run_dir);
  if (!services.ok()) return context.Fail(services.status(), kExitUsage);

  // Probe every service at once, so a hung one costs one timeout, not one each.
  std::vector<std::future<Probe>> futures;
  for (const ipc::ServiceInfo& info : *services) {
    futures.push_back(std::async(std::launch::async, ProbeService, info, options));
  }
  std::vector<Probe> probes;
  for (auto& future : futures) probes.push_back(future.get());
  const bool all_up = !probes.empty() && std::all_of(probes.begin(), probes.end(),
                                                     [](const Probe& p) { return p.up; });

  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Probe& probe : probes) {
      nlohmann::json entry = {{"service", probe.info.service},
                              {"up", probe.up},
                              {"state", probe.state},
                              {"pid", probe.info.pid},
                              {"host", probe.info.host},
                              {"control_endpoint", probe.info.control_endpoint},
                              {"metrics_port", probe.info.metrics_port}};
      if (probe.up) {
        entry["status"] = probe.status;
      } else {
        entry["reason"] = probe.why;
      }
      list.push_back(std::move(entry));
    }
    PrintJson({{"run_dir", options.run_dir}, {"all_up", all_up}, {"services", list}});
  } else if (probes.empty()) {
    std::cout << "no services in " << options.run_dir << "\n";
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"SERVICE", "STATE", "PID", "UPTIME", "METRICS", "DETAIL"}};
    for (const Probe& probe : probes) {
      std::string uptime = "-";
      if (probe.up && probe.status.contains("uptime_seconds")) {
        uptime = FormatDuration(probe.status["uptime_seconds"].get<double>());
      }
      rows.push_back({probe.info.service, probe.state, std::to_string(probe.info.pid), uptime,
                      probe.info.metrics_port > 0 ? std::to_string(probe.info.metrics_port) : "-",
                      probe.up ? probe.info.control_endpoint : probe.why});
    }
    std::vector<size_t> widths(rows[0].size(), 0);
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    }
    for (const auto& row : rows) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
      }
      std::cout << line << "\n";
    }
  }
  return all_up ? kExitOk : kExitUnreachable;
}

std::string FormatTime(std::int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

struct EventsOptions {
  std::vector<std::string> from;
  std::vector<std::string> topics;
  bool follow = false;
  int count = 0;
  double wait_seconds = 2;
};

int RunEvents(Context& context, const EventsOptions& events) {
  const GlobalOptions& options = context.options;
  std::vector<std::string> endpoints;
  if (!options.endpoint.empty()) {
    endpoints.push_back(options.endpoint);
  } else {
    if (options.run_dir.empty()) {
      return context.Fail(InvalidArgument("--run-dir (or $AZ_RUN_DIR) or --endpoint is required"),
                          kExitUsage);
    }
    if (events.from.empty()) {
      Result<std::vector<ipc::ServiceInfo>> services = ipc::ListServices(options.run_dir);
      if (!services.ok()) return context.Fail(services.status(), kExitUsage);
      for (const ipc::ServiceInfo& info : *services) {
        if (!info.events_endpoint.empty()) endpoints.push_back(info.events_endpoint);
      }
      if (endpoints.empty()) {
        return context.Fail(NotFound("no service in " + options.run_dir +
                                     " publishes events (name one with --from)"),
                            kExitUnreachable);
      }
    } else {
      for (const std::string& service : events.from) {
        Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(options.run_dir, service);
        if (info.ok() && !info->events_endpoint.empty()) {
          endpoints.push_back(info->events_endpoint);
          continue;
        }
        Result<std::string> endpoint = ipc::EventsEndpoint(options.run_dir, service);
        if (!endpoint.ok()) return context.Fail(endpoint.status(), kExitUsage);
        endpoints.push_back(*endpoint);
      }
    }
  }
  Result<ipc::EventSubscriber> subscriber = ipc::EventSubscriber::Create(
      {.endpoints = endpoints, .topics = events.topics, .run_dir = options.run_dir});
  if (!subscriber.ok()) return context.Fail(subscriber.status(), kExitUsage);

  const auto first_wait =
      std::chrono::milliseconds(std::max<long long>(1, std::llround(events.wait_seconds * 1000)));
  // Without --follow: the catch-up events (the latest of each topic) arrive together; stop once
  // the stream has been quiet this long after the first.
  const auto quiet = std::chrono::milliseconds(250);
  int printed = 0;
  while (events.count == 0 || printed < events.count) {
    const auto wait =
        events.follow ? std::chrono::milliseconds(1000) : (printed == 0 ? first_wait : quiet);
    Result<ipc::Event> event = subscriber->Next(wait);
    if (!event.ok()) {
      if (event.status().code() != StatusCode::kDeadlineExceeded) {
        return context.Fail(event.status(), kExitUnreachable);
      }
      if (events.follow) continue;
      break;
    }
    ++printed;
    if (options.json) {
      std::cout << ipc::EventToJson(*event).dump(-1, ' ', false,
                                                 nlohmann::json::error_handler_t::replace)
                << std::endl;
    } else {
      std::cout << FormatTime(event->time_unix_ms) << "  " << event->publisher << "  "
                << event->topic << "  seq " << event->seq << "  "
                << event->data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                << std::endl;
    }
  }
  if (printed == 0) {
    return context.Fail(
        DeadlineExceeded("no event within " + std::to_string(events.wait_seconds) + " s"),
        kExitUnreachable);
  }
  return kExitOk;
}

}  // namespace

void AddRunStatusCommand(CLI::App& app, Context& context) {
  app.callback([&context] { context.SetAction([&context] { return RunStatus(context); }); });
}

void AddEventsCommand(CLI::App& app, Context& context) {
  EventsOptions& events = context.Keep<EventsOptions>({});
  app.add_option("--from", events.from,
                 "publishing service (repeatable; default: every service that publishes)");
  app.add_option("--topic", events.topics, "topic to show, e.g. model (repeatable; default: all)");
  app.add_flag("--follow", events.follow, "keep printing events as they come");
  app.add_option("--count", events.count, "exit after this many events")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--wait", events.wait_seconds, "seconds to wait for the first event")
      ->check(CLI::Range(0.001, 86400.0));
  app.callback([&context, &events] {
    context.SetAction([&context, &events] { return RunEvents(context, events); });
  });
}

}  // namespace az::azctl
