// az-arena: a match between two players of any registered game, to measure whether the pipeline
// learns.
//
//   az-arena --a RUN/models/model-40.azw --b RUN/models/model-0.azw [--games 100] [--simulations 32]
//   az-arena --a RUN/models/model-40.azw --b onestep
//   az-arena --game chess --a RUN/models/model-90.azw --b RUN/models/model-0.azw \
//            --opening-book deploy/openings/chess.txt --opening-plies 4
//
// A player is a weights file (MCTS with --simulations playouts, or the raw policy with 0), `random`
// or `onestep` (plays a win in one, else a move that allows none, else random). Games start from
// random openings (after a book position when --opening-book is given), each played twice with the
// colours swapped. Prints one line (or --json) with A's wins, draws, losses, score and Elo
// difference. Exit 2 for bad input (a missing or damaged model file, a bad book), 1 when a network
// fails.

#include <CLI/CLI.hpp>
#include <iostream>

#include "core/base/log.h"
#include "core/games/registry.h"
#include "services/arena/match.h"
#include "services/arena/players.h"
#include "services/common/game_kind.h"
#include "services/selfplay/driver/openings.h"

namespace {

struct Args {
  std::string a_spec;
  std::string b_spec = "onestep";
  std::string book;
  az::arena::PlayerOptions player;
  az::arena::MatchOptions match;
  bool json = false;
};

template <az::games::GameDefinition G>
int Run(const Args& args) {
  std::vector<typename G::State> book;
  if (!args.book.empty()) {
    auto read = az::selfplay::ReadOpeningBook(args.book);
    az::Status status = read.status();
    if (read.ok()) {
      auto positions = az::selfplay::OpeningPositions<G>(*read);
      status = positions.status();
      if (positions.ok()) book = std::move(positions).value();
    }
    if (!status.ok()) {
      std::cerr << "az-arena: --opening-book: " << status.ToString() << "\n";
      return 2;
    }
  }
  auto a = az::arena::MakePlayer<G>(args.a_spec, args.player);
  if (!a.ok()) {
    std::cerr << "az-arena: player A: " << a.status().ToString() << "\n";
    return 2;
  }
  auto b = az::arena::MakePlayer<G>(args.b_spec, args.player);
  if (!b.ok()) {
    std::cerr << "az-arena: player B: " << b.status().ToString() << "\n";
    return 2;
  }
  az::Result<az::arena::MatchResult> result = az::arena::PlayMatch<G>(**a, **b, args.match, book);
  if (!result.ok()) {
    std::cerr << "az-arena: " << result.status().ToString() << "\n";
    return 1;
  }
  if (args.json) {
    std::cout << az::arena::MatchResultToJson(*result).dump() << "\n";
  } else {
    std::cout << az::arena::MatchResultToString(*result) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-arena");
  CLI::App app{"az-arena: a match between two players (weights files or baselines) of one game"};
  Args args;
  std::string game = "connect4";
  app.add_option("--game", game, "the game: " + az::service::GameKindChoices())
      ->check(CLI::IsMember(az::service::GameKindNames()))
      ->capture_default_str();
  app.add_option("--a", args.a_spec, "player A: a weights file, random or onestep")->required();
  app.add_option("--b", args.b_spec, "player B: a weights file, random or onestep")
      ->capture_default_str();
  app.add_option("--games", args.match.games, "games (an even number: each opening twice)")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  app.add_option("--simulations", args.player.simulations,
                 "MCTS playouts per move of a network player; 0: its raw policy")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--opening-book", args.book,
                 "start positions, one a line in the game's position text (chess: FEN or "
                 "startpos moves ...), one drawn per pair of games; empty: the game's start");
  app.add_option("--opening-plies", args.match.opening_plies,
                 "random moves (never ending the game) before the players play")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_option("--max-plies", args.match.max_plies,
                 "a longer game is a draw (0: the game's default, chess 512)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--seed", args.match.seed, "openings and the baselines' choices")
      ->capture_default_str();
  app.add_option("--threads", args.player.threads, "LibTorch intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_flag("--json", args.json, "print the result as one JSON object");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "az-arena: " << e.what() << "\n";
    return 2;
  }
  az::Result<const az::games::GameInfo*> info = az::games::FindGame(game);
  if (!info.ok()) {
    std::cerr << "az-arena: " << info.status().ToString() << "\n";
    return 2;
  }
  return az::games::VisitGame((*info)->id,
                              [&]<az::games::GameDefinition G>() { return Run<G>(args); });
}
