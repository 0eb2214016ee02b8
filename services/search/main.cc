// az-search --fen "<FEN>" --simulations N [--model PATH]
// Searches one chess position with MCTS and prints the root's moves with their visit counts, most
// visited first, then `bestmove <uci>`. Without --model the evaluator is uniform. Bad input (FEN,
// flags, model file) exits 2 with the reason on stderr.

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "core/base/log.h"
#include "services/search/search_tool.h"

namespace {
constexpr int kExitBadInput = 2;
constexpr int kExitFailed = 1;
}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-search");
  CLI::App app{"Searches a chess position with MCTS and prints the visits of the root's moves."};
  az::search_tool::SearchToolOptions options;
  float fpu_base = -1.0f;
  std::string virtual_loss = "loss";
  app.add_option("--fen", options.fen, "position as FEN (default: the start position)");
  app.add_option("--simulations", options.simulations, "visits below the root")
      ->check(CLI::Range(1, 10'000'000));
  app.add_option("--model", options.model_path,
                 "network weights file (core/nn); without it the evaluator is uniform");
  app.add_option("--batch", options.batch, "leaves per evaluator call")->check(CLI::Range(1, 1024));
  app.add_option("--risk-beta", options.risk_beta, "entropic risk: < 0 averse, > 0 seeking")
      ->check(CLI::Range(-100.0f, 100.0f));
  app.add_option("--fpu-base", fpu_base,
                 "first-play urgency reduction (default: 1.0 with --model, 0 without)")
      ->check(CLI::Range(0.0f, 10.0f));
  app.add_option("--virtual-loss", virtual_loss, "how a playout in flight counts: loss or parent-q")
      ->check(CLI::IsMember({"loss", "parent-q"}));
  app.add_option("--threads", options.threads, "LibTorch threads with --model")
      ->check(CLI::Range(1, 256));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "az-search: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (fpu_base >= 0.0f) options.fpu_base = fpu_base;
  options.virtual_loss =
      virtual_loss == "loss" ? az::mcts::VirtualLoss::kLoss : az::mcts::VirtualLoss::kParentQ;

  const az::Status status = az::search_tool::RunSearchTool(options, std::cout);
  if (!status.ok()) {
    std::cerr << "az-search: " << status.ToString() << "\n";
    const bool bad_input = status.code() == az::StatusCode::kInvalidArgument ||
                           status.code() == az::StatusCode::kNotFound ||
                           status.code() == az::StatusCode::kDataLoss ||
                           status.code() == az::StatusCode::kFailedPrecondition;
    return bad_input ? kExitBadInput : kExitFailed;
  }
  return 0;
}
