// az-evaluator: batches eval requests from every self-play worker of a run, runs the network on
// them and answers with priors and WDL; hot-swaps published models (docs/evaluator.md).
//
//   az-evaluator --run-dir DIR --game chess|connect4 [--model PATH] [--max-batch N]
//                [--stall-us U] [--threads T] [--device cpu|cuda] [--config evaluator.toml] ...
//
// Exit codes: 0 after a clean shutdown (SIGTERM, SIGINT or `azctl evaluator shutdown`), 2 for a bad
// configuration or model file (the message says what is wrong), 1 when it could not start or
// failed.

#include <CLI/CLI.hpp>
#include <atomic>
#include <iostream>

#include "core/base/log.h"
#include "services/common/service_util.h"
#include "services/common/shutdown_signals.h"
#include "services/evaluator/evaluator_app.h"
#include "services/evaluator/evaluator_config.h"

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadConfig = 2;

bool IsConfigError(az::StatusCode code) {
  return code == az::StatusCode::kInvalidArgument || code == az::StatusCode::kNotFound ||
         code == az::StatusCode::kDataLoss || code == az::StatusCode::kFailedPrecondition;
}

}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-evaluator");
  CLI::App cli{"az-evaluator: batched network evaluation for the self-play workers of a run"};
  az::evaluator::EvaluatorConfig config;
  az::evaluator::AddEvaluatorOptions(cli, config);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli.exit(e);  // --help
    std::cerr << "az-evaluator: " << e.what() << "\n";
    return kExitBadConfig;
  }
  if (const az::Status status = az::evaluator::FinalizeConfig(config); !status.ok()) {
    std::cerr << "az-evaluator: " << status.ToString() << "\n";
    return kExitBadConfig;
  }
  az::SetLogLevel(*az::service::ParseLogLevel(config.log_level));

  // Before any thread starts, so that only the signal thread receives SIGTERM/SIGINT.
  std::atomic<az::evaluator::EvaluatorApp*> running{nullptr};
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

  az::Result<std::unique_ptr<az::evaluator::EvaluatorApp>> made =
      az::evaluator::EvaluatorApp::Create(config);
  if (!made.ok()) {
    AZ_LOG(kError) << made.status().ToString();
    return IsConfigError(made.status().code()) ? kExitBadConfig : kExitFailed;
  }
  std::unique_ptr<az::evaluator::EvaluatorApp> app = std::move(made).value();
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
