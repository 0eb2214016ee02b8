// azctl's command line: global options, then a run-wide command or a service and its subcommand.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "core/base/log.h"
#include "ipc/endpoint.h"
#include "services/azctl/azctl.h"

namespace az::azctl {
namespace {

std::string Footer() {
  std::string services;
  for (const std::string& name : RegisteredServices()) services += " " + name;
  if (services.empty()) services = " (none)";
  return "Commands:\n"
         "  status                      every service of the run: state, pid, uptime\n"
         "  events [--follow] ...       pipeline events, the latest of each topic first\n"
         "  prometheus-targets [-o F]   the run's metrics endpoints as a Prometheus file_sd list\n"
         "  SERVICE status|pause|resume|shutdown|commands\n"
         "  SERVICE call '<json>'       a raw request, e.g. '{\"cmd\": \"status\"}'\n"
         "  SERVICE <command> ...       the service's own commands (SERVICE --help)\n"
         "Services with their own commands:" +
         services +
         "\n"
         "Exit codes: 0 ok, 1 the service answered an error, 2 usage, 3 unreachable / timed out\n"
         "            (for status: a service is down).";
}

// CLI11 reports --help as an exception with exit code 0; every real parse error is a usage error.
int ParseExit(CLI::App& app, const CLI::ParseError& error) {
  const int code = app.exit(error);
  return code == 0 ? kExitOk : kExitUsage;
}

}  // namespace

int RunAzctl(int argc, const char* const* argv) {
  SetLogLevel(LogLevel::kWarning);  // the library's info lines are noise on a terminal
  Context context;
  CLI::App app("azctl: control and inspect the services of an AlphaZero training run", "azctl");
  AddGlobalOptions(app, context.options);
  app.prefix_command();  // everything from the first positional on is the command
  app.footer(Footer());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return ParseExit(app, error);
  }
  std::vector<std::string> rest = app.remaining();
  if (rest.empty()) {
    std::cerr << app.help() << "\n";
    return kExitUsage;
  }
  const std::string command = rest.front();
  rest.erase(rest.begin());

  CLI::App sub("", "azctl " + command);
  AddGlobalOptions(sub, context.options);
  if (command == "status") {
    sub.description("every service of the run at a glance");
    AddRunStatusCommand(sub, context);
  } else if (command == "events") {
    sub.description("print pipeline events");
    AddEventsCommand(sub, context);
  } else if (command == "prometheus-targets") {
    sub.description("the run's metrics endpoints as a Prometheus file_sd target list");
    AddPrometheusTargetsCommand(sub, context);
  } else {
    Status valid = ipc::ValidateServiceName(command);
    if (!valid.ok()) {
      std::cerr << "azctl: '" << command << "' is neither a command nor a service name ("
                << valid.message() << ")\n";
      return kExitUsage;
    }
    context.service = command;
    sub.description("commands of the service '" + command + "'");
    AddGenericServiceCommands(sub, context);
    if (ServiceCommands add = FindServiceCommands(command)) add(sub, context);
    sub.require_subcommand(1);
  }
  std::reverse(rest.begin(), rest.end());  // CLI11 consumes a vector from its back
  try {
    sub.parse(rest);
  } catch (const CLI::ParseError& error) {
    return ParseExit(sub, error);
  }
  if (!context.action()) {
    std::cerr << sub.help() << "\n";
    return kExitUsage;
  }
  return context.action()();
}

}  // namespace az::azctl
