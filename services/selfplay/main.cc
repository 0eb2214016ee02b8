// az-selfplay: many MCTS games at once; leaves go to az-evaluator through the eval channel,
// finished games' samples into the run's sample ring for az-replay (docs/selfplay.md).
//
//   az-selfplay --run-dir DIR --game chess|connect4|tictactoe --games G --simulations S [--worker-id W]
//               [--risk-beta B] [--max-games N] [--config selfplay.toml] ...
//
// Exit codes: 0 after max-games games or a clean shutdown (SIGTERM, SIGINT or `azctl selfplay-W
// shutdown`), 2 for a bad configuration, 1 when it could not start or failed.

#include "services/common/service_main.h"
#include "services/selfplay/selfplay_app.h"
#include "services/selfplay/selfplay_config.h"

namespace {

// A bad flag value, or a channel or ring of the run that does not match this worker.
bool NeedsAPerson(az::StatusCode code) {
  return code == az::StatusCode::kInvalidArgument || code == az::StatusCode::kFailedPrecondition;
}

}  // namespace

int main(int argc, char** argv) {
  using az::selfplay::SelfPlayApp;
  using az::selfplay::SelfPlayConfig;
  return az::service::RunServiceMain<SelfPlayApp, SelfPlayConfig>(
      argc, argv,
      {
          .program = "az-selfplay",
          .description = "az-selfplay: self-play games for the pipeline, evaluated by az-evaluator",
          .add_options = az::selfplay::AddSelfPlayOptions,
          .finalize = az::selfplay::FinalizeConfig,
          .needs_a_person = NeedsAPerson,
          .run_failures_too = true,
      });
}
