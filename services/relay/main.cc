// az-relay: a self-play host's link to the central replay daemon and learner (docs/scaling.md).
//
//   az-relay --run-dir DIR --central tcp://HOST:PORT [--host NAME] [--config relay.toml] ...
//
// Exit codes: 0 after a clean shutdown (SIGTERM, SIGINT or `azctl relay shutdown`), 2 for a bad
// configuration or missing keys (the message says what to change), 1 when it failed otherwise.

#include "services/common/service_main.h"
#include "services/relay/relay_app.h"
#include "services/relay/relay_config.h"

namespace {

// A bad flag value, keys not copied from the central run, a spool of another game.
bool NeedsAPerson(az::StatusCode code) {
  return code == az::StatusCode::kFailedPrecondition || code == az::StatusCode::kInvalidArgument;
}

}  // namespace

int main(int argc, char** argv) {
  using az::relay::RelayApp;
  using az::relay::RelayConfig;
  return az::service::RunServiceMain<RelayApp, RelayConfig>(
      argc, argv,
      {
          .program = "az-relay",
          .description = "az-relay: pushes this host's self-play samples to the central replay "
                         "daemon over ZeroMQ TCP and follows its models",
          .add_options = az::relay::AddRelayOptions,
          .finalize = az::relay::FinalizeConfig,
          .needs_a_person = NeedsAPerson,
      });
}
