#pragma once

// azctl: the one command-line client for every service of a run (docs/protocol.md, "azctl").
//
//   azctl --run-dir DIR status                        every service of the run at a glance
//   azctl --run-dir DIR SERVICE status|pause|resume|shutdown|commands
//   azctl --run-dir DIR SERVICE call '{"cmd": "...", ...}'
//   azctl --run-dir DIR events [--from SERVICE] [--topic T] [--follow]
//   azctl --run-dir DIR prometheus-targets [-o FILE]  the metrics endpoints, for Prometheus
//   azctl --run-dir DIR replay sample --batch 8       a service's own subcommands
//
// A service's own subcommands live in their own file, services/azctl/<service>_commands.cc, which
// registers a function that adds CLI11 subcommands to the service's app:
//
//   namespace az::azctl {
//   namespace {
//   void AddReplayCommands(CLI::App& app, Context& context) {
//     CLI::App* sample = app.add_subcommand("sample", "draw a prioritized batch");
//     int& batch = context.Keep<int>(8);
//     sample->add_option("--batch", batch, "records")->check(CLI::Range(1, 4096));
//     sample->callback([&context, &batch] {
//       context.SetAction([&context, &batch] {
//         return context.Run({{"cmd", "sample"}, {"batch", batch}});
//       });
//     });
//   }
//   }  // namespace
//   AZCTL_SERVICE_COMMANDS("replay", AddReplayCommands);
//   }  // namespace az::azctl
//
// The CMakeLists.txt picks up every .cc file in this folder. A file that registers options includes
// <CLI/CLI.hpp> itself (this header only declares CLI::App: services/common/cli_fwd.h).

#include <deque>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "ipc/message.h"
#include "services/common/cli_fwd.h"

namespace az::azctl {

// The exit status of azctl, for scripts.
enum ExitCode : int {
  kExitOk = 0,            // the command succeeded (for `status`: every service is up)
  kExitServiceError = 1,  // the service answered with an error
  kExitUsage = 2,         // bad command line, bad JSON, unknown run directory
  kExitUnreachable = 3,   // no answer in time, or (for `status`) a service is down
};

struct GlobalOptions {
  std::string run_dir;         // --run-dir, or $AZ_RUN_DIR
  std::string endpoint;        // --endpoint: talk to this endpoint instead of the run's
  double timeout_seconds = 2;  // --timeout: per attempt
  int attempts = 2;            // --attempts
  bool json = false;           // --json: machine-readable output on stdout
};

// Parses the command line (argv[0] is the program name), runs the command, returns the exit code.
int RunAzctl(int argc, const char* const* argv);

// Adds the global options to `app` (azctl accepts them before and after the command).
void AddGlobalOptions(CLI::App& app, GlobalOptions& options);

class Context {
 public:
  GlobalOptions options;
  std::string service;  // the service addressed; empty for run-wide commands

  // The control endpoint of `service`: --endpoint, else the discovery record's, else the default
  // name in the run directory. INVALID_ARGUMENT without a run directory or endpoint.
  Result<std::string> ServiceEndpoint() const;

  // Sends `request` (an object with "cmd") and `frames` to the service and prints the answer:
  // with --json the reply object, otherwise `human` (default: one "key: value" line per field).
  // Errors go to stderr. Returns the exit code: `outcome` of a successful reply when given (a
  // command whose service answered but did nothing, e.g. every update rejected), else kExitOk.
  int Run(nlohmann::json request, std::vector<zmq::message_t> frames = {},
          const std::function<void(const ipc::Reply&)>& human = {},
          const std::function<int(const ipc::Reply&)>& outcome = {});

  // Sends and returns the reply, {"ok": false} included; prints transport failures and sets
  // *exit_code. For commands that print their own output.
  std::optional<ipc::Reply> Exchange(nlohmann::json request, std::vector<zmq::message_t> frames,
                                     int* exit_code);

  // Prints an error for `what` (stderr; with --json also {"ok": false, "error": ...} on stdout) and
  // returns `exit_code`.
  int Fail(const Status& status, int exit_code) const;

  // The action a subcommand's callback chose; main runs it after parsing.
  void SetAction(std::function<int()> action) { action_ = std::move(action); }
  const std::function<int()>& action() const { return action_; }

  // Storage that lives as long as the Context, for subcommands' option variables.
  template <typename T>
  T& Keep(T value) {
    auto holder = std::make_shared<T>(std::move(value));
    T& ref = *holder;
    kept_.push_back(std::move(holder));
    return ref;
  }

 private:
  std::function<int()> action_;
  std::deque<std::shared_ptr<void>> kept_;
};

// Adds the commands every service answers: status, pause, resume, shutdown, commands, call.
void AddGenericServiceCommands(CLI::App& app, Context& context);
// `azctl status`: every service of the run; `azctl events`: pipeline events.
void AddRunStatusCommand(CLI::App& app, Context& context);
void AddEventsCommand(CLI::App& app, Context& context);
// `azctl prometheus-targets`: the run's metrics endpoints as a Prometheus file_sd list.
void AddPrometheusTargetsCommand(CLI::App& app, Context& context);

// A service's own subcommands (see the top of this file).
using ServiceCommands = void (*)(CLI::App& app, Context& context);
// Registers `add` for the service `name`; it also applies to numbered instances ("selfplay-3" uses
// "selfplay"'s). Returns true, for static registration.
bool RegisterServiceCommands(std::string_view name, ServiceCommands add);
// The registered function for `service`, or nullptr.
ServiceCommands FindServiceCommands(std::string_view service);
// The names with registered subcommands, sorted.
std::vector<std::string> RegisteredServices();

#define AZCTL_SERVICE_COMMANDS(name, function)                     \
  [[maybe_unused]] static const bool azctl_registered_##function = \
      ::az::azctl::RegisterServiceCommands(name, function)

// Output helpers.
void PrintJson(const nlohmann::json& value);  // pretty, to stdout
// One "key: value" line per field, identity and state first, the rest sorted.
void PrintFields(const nlohmann::json& object);
// "3d04h", "1h02m", "2m05s", "12.3s".
std::string FormatDuration(double seconds);

}  // namespace az::azctl
