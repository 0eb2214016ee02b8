#pragma once

// The main() every long-running service shares (az-replay, az-evaluator, az-selfplay, az-learner):
// flags and config file through CLI11, the configuration checked, log level and component set,
// SIGTERM/SIGINT turned into App::Stop() by a signal thread started before any other thread, then
// App::Create and App::Run until a clean stop, and the app destroyed before main returns (its
// metrics exporter stops within 100 ms, so a restart never waits on it).
//
// Exit codes: 0 after a clean stop; 2 for a bad command line or configuration, and for a failure
// that `spec.needs_a_person` says a person must fix (the message says what); 1 for any other
// failure (a supervisor may restart the service for those).
//
//   int main(int argc, char** argv) {
//     return az::service::RunServiceMain<LearnerApp, LearnerConfig>(argc, argv, {...});
//   }
//
// App must have `static Result<std::unique_ptr<App>> Create(const Config&)`, `Status Run()` and a
// thread-safe `void Stop()` that returns promptly; Config derives from ServiceOptions
// (service_options.h). Stop() is called on the signal thread, never before Create has returned
// nor once Run has returned, so it may use what Create built (the control server) unlocked.

#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "core/base/log.h"
#include "core/base/status.h"
#include "services/common/cli_fwd.h"
#include "services/common/service_options.h"
#include "services/common/service_util.h"
#include "services/common/shutdown_signals.h"

namespace az::service {

inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadConfig = 2;

// Parses the command line and the --config file into what `add_options` registered. Returns -1 when
// parsing succeeded; otherwise the exit code, with the message written to stderr: 0 after --help,
// kExitBadConfig for a bad flag or config file. Not a template, so that only service_main.cc
// compiles CLI11's parser.
int ParseServiceCommandLine(int argc, char** argv, const std::string& program,
                            const std::string& description,
                            const std::function<void(CLI::App&)>& add_options);

template <typename Config>
struct ServiceMainSpec {
  std::string program;      // "az-learner": the log component until the config names the service
  std::string description;  // the first line of --help
  void (*add_options)(CLI::App& cli, Config& config) = nullptr;
  Status (*finalize)(Config& config) = nullptr;  // checks and derives; an error exits 2
  // Whether a failure of Create (or, with `run_failures_too`, of Run) needs a person: exit 2.
  bool (*needs_a_person)(StatusCode code) = nullptr;
  bool run_failures_too = false;
  std::string on_signal = "shutting down";  // logged when SIGTERM/SIGINT arrives
};

template <typename App, typename Config>
int RunServiceMain(int argc, char** argv, const ServiceMainSpec<Config>& spec) {
  static_assert(std::is_base_of_v<ServiceOptions, Config>,
                "a service's config derives from ServiceOptions");
  SetLogComponent(spec.program);
  Config config;
  if (const int exit_code =
          ParseServiceCommandLine(argc, argv, spec.program, spec.description,
                                  [&](CLI::App& cli) { spec.add_options(cli, config); });
      exit_code >= 0) {
    return exit_code;
  }
  if (const Status status = spec.finalize(config); !status.ok()) {
    std::cerr << spec.program << ": " << status.ToString() << "\n";
    return kExitBadConfig;
  }
  SetLogLevel(*ParseLogLevel(config.log_level));
  SetLogComponent("az-" + config.service);  // az-selfplay-3 for worker 3

  // Before any thread starts, so that only the signal thread receives SIGTERM/SIGINT. A signal
  // that arrives while Create runs stops the app as soon as it exists. The signal thread calls
  // Stop() holding `running_mutex`, and main takes the app out of `running` under it before
  // destroying it: a Stop() in progress ends before the app goes, and none starts after.
  std::mutex running_mutex;
  App* running = nullptr;
  bool early_stop = false;
  auto signals = ShutdownSignals::Start([&](int signo) {
    AZ_LOG(kInfo) << "signal " << signo << ": " << spec.on_signal;
    std::lock_guard lock(running_mutex);
    early_stop = true;
    if (running != nullptr) running->Stop();
  });
  if (!signals.ok()) {
    AZ_LOG(kError) << signals.status().ToString();
    return kExitFailed;
  }

  Result<std::unique_ptr<App>> made = App::Create(config);
  if (!made.ok()) {
    AZ_LOG(kError) << made.status().ToString();
    return spec.needs_a_person(made.status().code()) ? kExitBadConfig : kExitFailed;
  }
  std::unique_ptr<App> app = std::move(made).value();
  {
    std::lock_guard lock(running_mutex);
    running = app.get();
    if (early_stop) app->Stop();
  }
  const Status status = app->Run();
  {
    std::lock_guard lock(running_mutex);
    running = nullptr;
  }
  app.reset();
  if (!status.ok()) {
    AZ_LOG(kError) << status.ToString();
    return spec.run_failures_too && spec.needs_a_person(status.code()) ? kExitBadConfig
                                                                       : kExitFailed;
  }
  return 0;
}

}  // namespace az::service
