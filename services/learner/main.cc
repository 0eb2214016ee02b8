// az-learner: trains the network on prioritized batches from az-replay, sends the losses back as
// priorities, checkpoints and publishes models (docs/learner.md).
//
//   az-learner --run-dir DIR --game chess|connect4|tictactoe [--batch B] [--lr LR] [--beta-start 0.4
//              --beta-end 1.0 --beta-steps N] [--checkpoint-every K] [--publish-every K]
//              [--resume | --no-resume] [--config learner.toml] ...
//
// Exit codes: 0 after a clean shutdown (SIGTERM, SIGINT, `azctl learner shutdown` or --max-steps;
// the last step is finished and checkpointed), 2 for a bad configuration or checkpoints that need
// a person (none loads, or --no-resume over existing ones), 1 when it could not start or failed.

#include "services/common/service_main.h"
#include "services/learner/learner_app.h"
#include "services/learner/learner_config.h"

namespace {

// A bad flag value, or checkpoints that none loads or that --no-resume would overwrite.
bool NeedsAPerson(az::StatusCode code) {
  return code == az::StatusCode::kInvalidArgument || code == az::StatusCode::kDataLoss ||
         code == az::StatusCode::kFailedPrecondition;
}

}  // namespace

int main(int argc, char** argv) {
  using az::learner::LearnerApp;
  using az::learner::LearnerConfig;
  return az::service::RunServiceMain<LearnerApp, LearnerConfig>(
      argc, argv,
      {
          .program = "az-learner",
          .description =
              "az-learner: trains the network on prioritized replay and publishes models",
          .add_options = az::learner::AddLearnerOptions,
          .finalize = az::learner::FinalizeConfig,
          .needs_a_person = NeedsAPerson,
          .on_signal = "finishing the step and checkpointing",
      });
}
