// az-analyse --game connect4|chess|tictactoe --model PATH|uniform --simulations N [--threads T]
// Reads one position per line on stdin and prints exactly one line per input line, in order:
// `bestmove <move> value <v>` (more fields may follow) or `error <reason>`. Positions: Connect
// Four and tic-tac-toe, the moves from the empty board as digits ("4453"), or `start`; chess, a
// FEN, or `startpos [moves <uci> ...]`. Exit 0 when every line was answered, 1 when some got an
// error, 2 for bad flags or a model that cannot be loaded (docs/analyse.md).

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "core/base/log.h"
#include "core/games/registry.h"
#include "services/analyse/analyser.h"

namespace {
constexpr int kExitLineErrors = 1;
constexpr int kExitBadInput = 2;
}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-analyse");
  CLI::App app{"Answers a best move and a value for each position on stdin, one line each."};
  az::analyse::AnalyseOptions options;
  app.add_option("--game", options.game, "the game: " + az::games::GameNames("|"))->required();
  app.add_option("--model", options.model, "a weights file, or uniform")->capture_default_str();
  app.add_option("--simulations", options.simulations,
                 "0: the raw policy's most probable move; N: MCTS with N playouts")
      ->check(CLI::Range(0, 10'000'000))
      ->capture_default_str();
  app.add_option("--threads", options.threads, "LibTorch threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--batch", options.batch, "leaves per network call within a search")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "az-analyse: " << e.what() << "\n";
    return kExitBadInput;
  }
  az::Result<std::unique_ptr<az::analyse::Analyser>> analyser =
      az::analyse::CreateAnalyser(options);
  if (!analyser.ok()) {
    std::cerr << "az-analyse: " << analyser.status().ToString() << "\n";
    return kExitBadInput;
  }
  const int errors = az::analyse::AnalyseStream(**analyser, std::cin, std::cout);
  return errors > 0 ? kExitLineErrors : 0;
}
