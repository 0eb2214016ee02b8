// az-selfplay: many MCTS games at once; leaves go to az-evaluator through the eval channel,
// finished games' samples into the run's sample ring for az-replay (docs/selfplay.md).
//
//   az-selfplay --run-dir DIR --game chess|connect4 --games G --simulations S [--worker-id W]
//               [--risk-beta B] [--max-games N] [--config selfplay.toml] ...
//
// Exit codes: 0 after max-games games or a clean shutdown (SIGTERM, SIGINT or `azctl selfplay-W
// shutdown`), 2 for a bad configuration, 1 when it could not start or failed.

#include <CLI/CLI.hpp>
#include <atomic>
#include <iostream>

#include "core/base/log.h"
#include "services/common/service_util.h"
#include "services/common/shutdown_signals.h"
#include "services/selfplay/selfplay_app.h"
#include "services/selfplay/selfplay_config.h"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadConfig = 2;

}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-selfplay");
  CLI::App cli{"az-selfplay: self-play games for the pipeline, evaluated by az-evaluator"};
  az::selfplay::SelfPlayConfig config;
  az::selfplay::AddSelfPlayOptions(cli, config);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli.exit(e);  // --help
    std::cerr << "az-selfplay: " << e.what() << "\n";
    return kExitBadConfig;
  }
  if (const az::Status status = az::selfplay::FinalizeConfig(config); !status.ok()) {
    std::cerr << "az-selfplay: " << status.ToString() << "\n";
    return kExitBadConfig;
  }
  az::SetLogLevel(*az::service::ParseLogLevel(config.log_level));
  az::SetLogComponent("az-" + config.service);

  // Before any thread starts, so that only the signal thread receives SIGTERM/SIGINT.
  std::atomic<az::selfplay::SelfPlayApp*> running{nullptr};
  std::atomic<bool> early_stop{false};
  auto signals = az::service::ShutdownSignals::Start([&](int signo) {
    AZ_LOG(kInfo) << "signal " << signo << ": shutting down";
    early_stop.store(true);
    if (auto* app = running.load()) app->Stop();
  });
  if (!signals.ok()) {
    AZ_LOG(kError) << signals.status().ToString();
    return kExitFailed;
  }

  az::Result<std::unique_ptr<az::selfplay::SelfPlayApp>> made =
      az::selfplay::SelfPlayApp::Create(config);
  if (!made.ok()) {
    AZ_LOG(kError) << made.status().ToString();
    const az::StatusCode code = made.status().code();
    return code == az::StatusCode::kInvalidArgument || code == az::StatusCode::kFailedPrecondition
               ? kExitBadConfig
               : kExitFailed;
  }
  std::unique_ptr<az::selfplay::SelfPlayApp> app = std::move(made).value();
  running.store(app.get());
  if (early_stop.load()) app->Stop();
  const az::Status status = app->Run();
  running.store(nullptr);
  app.reset();
  if (!status.ok()) {
    AZ_LOG(kError) << status.ToString();
    return status.code() == az::StatusCode::kInvalidArgument ||
                   status.code() == az::StatusCode::kFailedPrecondition
               ? kExitBadConfig
               : kExitFailed;
  }
  return 0;
}
