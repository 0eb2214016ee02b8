// az-learner: trains the network on prioritized batches from az-replay, sends the losses back as
// priorities, checkpoints and publishes models (docs/learner.md).
//
//   az-learner --run-dir DIR --game chess|connect4 [--batch B] [--lr LR] [--beta-start 0.4
//              --beta-end 1.0 --beta-steps N] [--checkpoint-every K] [--publish-every K]
//              [--resume | --no-resume] [--config learner.toml] ...
//
// Exit codes: 0 after a clean shutdown (SIGTERM, SIGINT, `azctl learner shutdown` or --max-steps;
// the last step is finished and checkpointed), 2 for a bad configuration or checkpoints that need
// a person (none loads, or --no-resume over existing ones), 1 when it could not start or failed.

#include <CLI/CLI.hpp>
#include <atomic>
#include <iostream>

#include "core/base/log.h"
#include "services/common/service_util.h"
#include "services/common/shutdown_signals.h"
#include "services/learner/learner_app.h"
#include "services/learner/learner_config.h"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadConfig = 2;

bool NeedsAPerson(az::StatusCode code) {
  return code == az::StatusCode::kInvalidArgument || code == az::StatusCode::kDataLoss ||
         code == az::StatusCode::kFailedPrecondition;
}

}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-learner");
  CLI::App cli{"az-learner: trains the network on prioritized replay and publishes models"};
  az::learner::LearnerConfig config;
  az::learner::AddLearnerOptions(cli, config);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli.exit(e);  // --help
    std::cerr << "az-learner: " << e.what() << "\n";
    return kExitBadConfig;
  }
  if (const az::Status status = az::learner::FinalizeConfig(config); !status.ok()) {
    std::cerr << "az-learner: " << status.ToString() << "\n";
    return kExitBadConfig;
  }
  az::SetLogLevel(*az::service::ParseLogLevel(config.log_level));

  // Before any thread starts, so that only the signal thread receives SIGTERM/SIGINT.
  std::atomic<az::learner::LearnerApp*> running{nullptr};
  std::atomic<bool> early_stop{false};
  auto signals = az::service::ShutdownSignals::Start([&](int signo) {
    AZ_LOG(kInfo) << "signal " << signo << ": finishing the step and checkpointing";
    early_stop.store(true);
    if (auto* app = running.load()) app->Stop();
  });
  if (!signals.ok()) {
    AZ_LOG(kError) << signals.status().ToString();
    return kExitFailed;
  }

  az::Result<std::unique_ptr<az::learner::LearnerApp>> made =
      az::learner::LearnerApp::Create(config);
  if (!made.ok()) {
    AZ_LOG(kError) << made.status().ToString();
    return NeedsAPerson(made.status().code()) ? kExitBadConfig : kExitFailed;
  }
  std::unique_ptr<az::learner::LearnerApp> app = std::move(made).value();
  running.store(app.get());
  if (early_stop.load()) app->Stop();
  const az::Status status = app->Run();
  running.store(nullptr);
  app.reset();
  if (!status.ok()) {
    AZ_LOG(kError) << status.ToString();
    return kExitFailed;
  }
  return 0;
}
