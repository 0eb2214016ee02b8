// az-replay: the prioritized replay daemon (docs/replay.md).
//
//   az-replay --run-dir DIR [--store FILE] [--capacity N] [--alpha A] [--config replay.toml] ...
//
// Exit codes: 0 after a clean shutdown (SIGTERM, SIGINT or `azctl replay shutdown`), 2 for a bad
// configuration (the message says what to change), 1 when the daemon could not start or failed.

#include "services/common/service_main.h"
#include "services/replay/replay_app.h"
#include "services/replay/replay_config.h"

namespace {

// A bad flag value, or a store file (or --restore) that contradicts the configuration.
bool NeedsAPerson(az::StatusCode code) {
  return code == az::StatusCode::kFailedPrecondition || code == az::StatusCode::kInvalidArgument;
}

}  // namespace

int main(int argc, char** argv) {
  using az::replayd::ReplayApp;
  using az::replayd::ReplayConfig;
  return az::service::RunServiceMain<ReplayApp, ReplayConfig>(
      argc, argv,
      {
          .program = "az-replay",
          .description =
              "az-replay: the prioritized replay buffer of the pipeline, served over ZeroMQ",
          .add_options = az::replayd::AddReplayOptions,
          .finalize = az::replayd::FinalizeConfig,
          .needs_a_person = NeedsAPerson,
      });
}
