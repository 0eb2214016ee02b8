// az-replay: the prioritized replay daemon (docs/replay.md).
//
//   az-replay --run-dir DIR [--store FILE] [--capacity N] [--alpha A] [--config replay.toml] ...
//
// Exit codes: 0 after a clean shutdown (SIGTERM, SIGINT or `azctl replay shutdown`), 2 for a bad
// configuration (the message says what to change), 1 when the daemon could not start or failed.

#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "core/base/log.h"
#include "services/replay/replay_app.h"
#include "services/replay/replay_config.h"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadConfig = 2;

}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-replay");
  CLI::App app{"az-replay: the prioritized replay buffer of the pipeline, served over ZeroMQ"};
  az::replayd::ReplayConfig config;
  az::replayd::AddReplayOptions(app, config);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    std::cerr << "az-replay: config file: " << e.what()
              << " (keys are the long flag names, e.g. record-bytes = 1160; az-replay --help "
                 "lists them)\n";
    return kExitBadConfig;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "az-replay: " << e.what() << "\n";
    return kExitBadConfig;
  }
  if (az::Status status = az::replayd::FinalizeConfig(config); !status.ok()) {
    std::cerr << "az-replay: " << status.ToString() << "\n";
    return kExitBadConfig;
  }

  // SIGTERM and SIGINT ask for a clean shutdown. Blocked here, before any thread starts, so that
  // only the waiting thread below receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  az::Result<std::unique_ptr<az::replayd::ReplayApp>> made = az::replayd::ReplayApp::Create(config);
  if (!made.ok()) {
    AZ_LOG(kError) << made.status().ToString();
    const az::StatusCode code = made.status().code();
    return code == az::StatusCode::kFailedPrecondition || code == az::StatusCode::kInvalidArgument
               ? kExitBadConfig
               : kExitFailed;
  }
  std::unique_ptr<az::replayd::ReplayApp> replay = std::move(made).value();

  std::atomic<bool> done{false};
  std::thread signal_waiter([&] {
    const timespec poll = {0, 200'000'000};
    while (!done.load()) {
      const int signal = sigtimedwait(&signals, nullptr, &poll);
      if (signal > 0) {
        AZ_LOG(kInfo) << "signal " << signal << ": shutting down";
        replay->Stop();
      }
    }
  });
  const az::Status status = replay->Run();
  done.store(true);
  signal_waiter.join();
  if (!status.ok()) {
    AZ_LOG(kError) << status.ToString();
  }
  // Run() closed everything that matters (store, endpoint, ring). What is left is the metrics
  // server, whose civetweb threads take up to 2 s to notice a stop; a restart under systemd or a
  // test should not wait for that, and there is nothing to lose by not waiting.
  std::_Exit(status.ok() ? 0 : kExitFailed);
}
