// az-score --game tictactoe|connect4 --model PATH|uniform [--simulations N] [--json]
// Scores a model against the game's exact solver: the share of positions where its move keeps the
// game-theoretic value (docs/learning.md). Exit 0, or 2 for bad flags, a game without a solver or
// a model that cannot be loaded, 1 when the network fails.

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "core/base/log.h"
#include "services/score/solver_score.h"

int main(int argc, char** argv) {
  az::SetLogComponent("az-score");
  CLI::App app{"Scores a model's moves against the game's exact solver."};
  az::score::ScoreOptions options;
  bool json = false;
  app.add_option("--game", options.game, "a game with a solver: tictactoe, connect4")->required();
  app.add_option("--model", options.model, "a weights file, or uniform")->capture_default_str();
  app.add_option("--simulations", options.simulations, "0: the raw policy; N: MCTS, N playouts")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--threads", options.threads, "LibTorch threads")->check(CLI::Range(1, 256));
  app.add_option("--positions", options.positions,
                 "positions from random play (games too large to score every position of)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--min-ply", options.min_ply, "fewest plies of those positions")
      ->capture_default_str();
  app.add_option("--max-ply", options.max_ply, "most plies of those positions")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seeds the random play")->capture_default_str();
  app.add_flag("--as-player", options.as_player,
               "the positions the model faces playing either side against every reply "
               "(tic-tac-toe): perfect play is 100%");
  app.add_flag("--json", json, "one JSON object instead of text");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "az-score: " << e.what() << "\n";
    return 2;
  }
  az::Result<az::score::ScoreReport> report = az::score::ScoreModel(options);
  if (!report.ok()) {
    std::cerr << "az-score: " << report.status().ToString() << "\n";
    return report.status().code() == az::StatusCode::kInternal ? 1 : 2;
  }
  std::cout << (json ? az::score::ReportJson(*report) + "\n" : az::score::FormatReport(*report));
  return 0;
}
