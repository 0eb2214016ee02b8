// az-arena: a Connect Four match between two players, to measure whether the pipeline learns.
//
//   az-arena --a RUN/models/model-40.azw --b RUN/models/model-0.azw [--games 100] [--simulations
//   32] az-arena --a RUN/models/model-40.azw --b onestep
//
// A player is a weights file (MCTS with --simulations playouts, or the raw policy with 0), `random`
// or `onestep` (plays a win, blocks a loss, avoids handing one over, else random). Games start from
// random openings, each played twice with the colours swapped. Prints one line (or --json) with
// A's wins, draws, losses, score and Elo difference. Exit 2 for bad input (a missing or damaged
// model file), 1 when a network fails.

#include <CLI/CLI.hpp>
#include <iostream>

#include "core/base/log.h"
#include "services/arena/match.h"
#include "services/arena/players.h"

int main(int argc, char** argv) {
  az::SetLogComponent("az-arena");
  CLI::App app{"az-arena: a Connect Four match between two players (weights files or baselines)"};
  std::string a_spec;
  std::string b_spec = "onestep";
  az::arena::PlayerOptions player;
  az::arena::MatchOptions match;
  bool json = false;
  app.add_option("--a", a_spec, "player A: a weights file, random or onestep")->required();
  app.add_option("--b", b_spec, "player B: a weights file, random or onestep")
      ->capture_default_str();
  app.add_option("--games", match.games, "games (an even number: each opening twice)")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  app.add_option("--simulations", player.simulations,
                 "MCTS playouts per move of a network player; 0: its raw policy")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--opening-plies", match.opening_plies, "random moves before the players play")
      ->check(CLI::Range(0, 6))
      ->capture_default_str();
  app.add_option("--seed", match.seed, "openings and the baselines' choices")
      ->capture_default_str();
  app.add_option("--threads", player.threads, "LibTorch intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_flag("--json", json, "print the result as one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "az-arena: " << e.what() << "\n";
    return 2;
  }
  auto a = az::arena::MakePlayer(a_spec, player);
  if (!a.ok()) {
    std::cerr << "az-arena: player A: " << a.status().ToString() << "\n";
    return 2;
  }
  auto b = az::arena::MakePlayer(b_spec, player);
  if (!b.ok()) {
    std::cerr << "az-arena: player B: " << b.status().ToString() << "\n";
    return 2;
  }
  az::Result<az::arena::MatchResult> result = az::arena::PlayMatch(**a, **b, match);
  if (!result.ok()) {
    std::cerr << "az-arena: " << result.status().ToString() << "\n";
    return 1;
  }
  if (json) {
    std::cout << az::arena::MatchResultToJson(*result).dump() << "\n";
  } else {
    std::cout << az::arena::MatchResultToString(*result) << "\n";
  }
  return 0;
}
