// az-evaluator: batches eval requests from every self-play worker of a run, runs the network on
// them and answers with priors and WDL; hot-swaps published models (docs/evaluator.md).
//
//   az-evaluator --run-dir DIR --game chess|connect4|tictactoe [--model PATH] [--max-batch N]
//                [--stall-us U] [--threads T] [--device cpu|cuda] [--config evaluator.toml] ...
//
// Exit codes: 0 after a clean shutdown (SIGTERM, SIGINT or `azctl evaluator shutdown`), 2 for a bad
// configuration or model file (the message says what is wrong), 1 when it could not start or
// failed.

#include "services/common/service_main.h"
#include "services/evaluator/evaluator_app.h"
#include "services/evaluator/evaluator_config.h"

namespace {

// A bad flag value, a model file that is missing, corrupt or of the wrong shapes.
bool NeedsAPerson(az::StatusCode code) {
  return code == az::StatusCode::kInvalidArgument || code == az::StatusCode::kNotFound ||
         code == az::StatusCode::kDataLoss || code == az::StatusCode::kFailedPrecondition;
}

}  // namespace

int main(int argc, char** argv) {
  using az::evaluator::EvaluatorApp;
  using az::evaluator::EvaluatorConfig;
  return az::service::RunServiceMain<EvaluatorApp, EvaluatorConfig>(
      argc, argv,
      {
          .program = "az-evaluator",
          .description =
              "az-evaluator: batched network evaluation for the self-play workers of a run",
          .add_options = az::evaluator::AddEvaluatorOptions,
          .finalize = az::evaluator::FinalizeConfig,
          .needs_a_person = NeedsAPerson,
      });
}
