// az-score --game tictactoe|connect4 --model PATH|uniform|onestep [--simulations N] [--json]
//          [--root-selection puct|gumbel --gumbel-c-scale C] [--one-ply-value]
//          [--positions-file FILE | --set small|full | --positions N ...]
// az-score --game connect4 --generate FILE --positions N [--bands A-B,...] [--strong-from P]
// [--seed S] Scores a model against the game's exact solver: the share of positions where its move
// keeps the game-theoretic value (docs/analyse.md, docs/learning.md); or writes a stored,
// solver-referenced position set. Exit 0, or 2 for bad flags, a game without a solver, a set or
// model that cannot be loaded, 1 when the network fails or a set cannot be written.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "core/base/log.h"
#include "services/score/position_set.h"
#include "services/score/solver_score.h"

namespace {

int Generate(const az::score::GenerateOptions& options, const std::string& path,
             const std::string& command) {
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  az::Result<az::score::PositionSet> set =
      az::score::GeneratePositionSet(options, [&](int done, int total) {
        if (done % 25 == 0 || done == total) {
          std::fprintf(stderr, "az-score: %d of %d positions in %.0f s\n", done, total, elapsed());
        }
      });
  if (!set.ok()) {
    std::cerr << "az-score: " << set.status().ToString() << "\n";
    return 2;
  }
  set->comments = {
      "A solver-referenced benchmark for az-score (format: services/score/position_set.h; what",
      "the figures mean: docs/learning.md). Made by: " + command,
      "Each line: the moves from the start, the band of plies, the play that reached the position",
      "(random, strong, mixed), and the solver's value of every action for the side to move",
      "(1 win, 0 draw, -1 loss, x not playable)."};
  const az::Status written = az::score::WritePositionSet(*set, path);
  if (!written.ok()) {
    std::cerr << "az-score: " << written.ToString() << "\n";
    return 1;
  }
  std::printf("wrote %zu positions to %s in %.0f s\n", set->positions.size(), path.c_str(),
              elapsed());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-score");
  CLI::App app{"Scores a model's moves against the game's exact solver."};
  az::score::ScoreOptions options;
  az::score::GenerateOptions generate;
  std::string generate_path;
  std::string bands = az::score::BandsText(generate.bands);
  bool json = false;
  app.add_option("--game", options.game, "a game with a solver: tictactoe, connect4")->required();
  app.add_option("--model", options.model,
                 "a weights file; uniform (first legal move, or MCTS with equal priors); onestep "
                 "(wins at once, else blocks, else the first legal move)")
      ->capture_default_str();
  app.add_option("--simulations", options.simulations, "0: the raw policy; N: MCTS, N playouts")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  std::string root_selection = "puct";
  app.add_option("--root-selection", root_selection,
                 "with --simulations: puct, or gumbel (self-play's sequential halving, no noise)")
      ->check(CLI::IsMember({"puct", "gumbel"}))
      ->capture_default_str();
  app.add_option("--gumbel-c-scale", options.gumbel_c_scale,
                 "gumbel: sigma's scale (scripts/run's Connect Four self-play: 1.0)")
      ->check(CLI::Range(1e-6, 1e6))
      ->capture_default_str();
  app.add_option("--c-puct", options.c_puct,
                 "with --simulations: PUCT's exploration constant (below a Gumbel root too; "
                 "self-play's default)")
      ->capture_default_str();
  app.add_flag("--one-ply-value", options.one_ply_value,
               "instead of the policy, the move after which the network's value is best for the "
               "mover (no search; a move that ends the game is valued exactly): which head "
               "chooses better");
  app.add_option("--threads", options.threads,
                 "LibTorch threads; with --generate, groups of positions (a band from one source) "
                 "made at once")
      ->check(CLI::Range(1, 256));
  app.add_option("--positions-file", options.positions_file,
                 "a stored position set (az-score --generate); Connect Four's default is the "
                 "shipped small set");
  app.add_option("--set", options.set,
                 "a shipped set by name: small, full (services/score/data/<game>-<name>.txt)");
  app.add_option("--positions", options.positions,
                 "N positions from random play, solved now (slow), instead of a stored set; with "
                 "--generate, the positions to write")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  app.add_option("--min-ply", options.min_ply, "fewest plies of the random positions")
      ->capture_default_str();
  app.add_option("--max-ply", options.max_ply, "most plies of the random positions")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seeds the random play (and --generate)")
      ->capture_default_str();
  app.add_flag("--as-player", options.as_player,
               "the positions the model faces playing either side against every reply "
               "(tic-tac-toe): perfect play is 100%");
  app.add_flag("--json", json, "one JSON object instead of text");
  app.add_option("--generate", generate_path,
                 "write a stored, solver-referenced position set to this file instead of scoring");
  app.add_option("--bands", bands, "with --generate: bands of plies")->capture_default_str();
  app.add_option("--strong-from", generate.strong_from,
                 "with --generate: the ply where strong play starts using the solver")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_flag("--include-trivial", generate.include_trivial,
               "with --generate: keep positions where every move keeps the value");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "az-score: " << e.what() << "\n";
    return 2;
  }
  if (!generate_path.empty()) {
    az::Result<std::vector<az::score::PlyBand>> parsed = az::score::ParseBands(bands);
    if (!parsed.ok() || options.positions < 1) {
      std::cerr << "az-score: "
                << (parsed.ok() ? "--generate needs --positions N" : parsed.status().ToString())
                << "\n";
      return 2;
    }
    generate.game = options.game;
    generate.positions = options.positions;
    generate.seed = options.seed;
    generate.bands = *parsed;
    generate.threads = options.threads;
    std::string command = "az-score --game " + generate.game + " --generate " + generate_path +
                          " --positions " + std::to_string(generate.positions) + " --seed " +
                          std::to_string(generate.seed) + " --bands " + bands + " --strong-from " +
                          std::to_string(generate.strong_from) +
                          (generate.include_trivial ? " --include-trivial" : "");
    return Generate(generate, generate_path, command);
  }
  options.gumbel = root_selection == "gumbel";
  az::Result<az::score::ScoreReport> report = az::score::ScoreModel(options);
  if (!report.ok()) {
    std::cerr << "az-score: " << report.status().ToString() << "\n";
    return report.status().code() == az::StatusCode::kInternal ? 1 : 2;
  }
  std::cout << (json ? az::score::ReportJson(*report) + "\n" : az::score::FormatReport(*report));
  return 0;
}
