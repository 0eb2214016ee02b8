// az-uci [--model PATH|uniform] [--threads T] [--hash MB] [--nn-cache N] [--minibatch B]
//        [--c-puct C] [--risk-beta B] [--move-overhead MS]
// A UCI chess engine over a chess model (or the uniform evaluator), on the self-play's search:
// UCI commands on stdin, UCI answers on stdout and nothing else; diagnostics go to stderr. The
// flags set the UCI options' starting values (docs/chess.md, "Playing the model: az-uci"). Bad
// flags or a model that cannot be loaded exit 2 with the reason on stderr.

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <string_view>

#include "core/base/log.h"
#include "services/uci/uci_engine.h"

namespace {
constexpr int kExitBadInput = 2;
}  // namespace

int main(int argc, char** argv) {
  az::SetLogComponent("az-uci");
  CLI::App app{"A UCI chess engine over a chess model, on the project's MCTS."};
  az::uci::EngineOptions options;
  app.add_option("--model", options.model, "a chess weights file, or uniform (no network)")
      ->capture_default_str();
  app.add_option("--threads", options.threads, "LibTorch threads (UCI option Threads)")
      ->check(CLI::Range(1, az::uci::kMaxThreads))
      ->capture_default_str();
  app.add_option("--hash", options.hash_mb, "search tree memory in MiB (UCI option Hash)")
      ->check(CLI::Range(az::uci::kMinHashMb, az::uci::kMaxHashMb))
      ->capture_default_str();
  app.add_option("--nn-cache", options.nn_cache_entries,
                 "NN cache entries, rounded down to a power of two; 0 off (UCI NNCacheSize)")
      ->check(CLI::Range(std::uint64_t{0}, az::uci::kMaxNnCacheEntries))
      ->capture_default_str();
  app.add_option("--minibatch", options.minibatch,
                 "leaves in flight per network call (UCI option MinibatchSize)")
      ->check(CLI::Range(1, az::uci::kMaxMinibatch))
      ->capture_default_str();
  app.add_option("--c-puct", options.c_puct, "PUCT exploration constant (UCI option CPuct)")
      ->check(CLI::Range(1e-6f, 100.0f))
      ->capture_default_str();
  app.add_option("--risk-beta", options.risk_beta,
                 "entropic risk: < 0 averse, > 0 seeking (UCI option RiskBeta)")
      ->check(CLI::Range(-100.0f, 100.0f))
      ->capture_default_str();
  app.add_option("--move-overhead", options.move_overhead_ms,
                 "ms kept back from every move for the GUI and the pipes (UCI Move Overhead)")
      ->check(CLI::Range(0, az::uci::kMaxMoveOverheadMs))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "az-uci: " << e.what() << "\n";
    return kExitBadInput;
  }

  // The reader must not flush std::cout behind the sink's lock: the search thread writes too.
  std::cin.tie(nullptr);
  auto engine = az::uci::UciEngine::Create(options, [](std::string_view line) {
    std::cout << line << '\n' << std::flush;  // one line at a time: the engine serialises calls
  });
  if (!engine.ok()) {
    std::cerr << "az-uci: " << engine.status().ToString() << "\n";
    return kExitBadInput;
  }
  AZ_LOG(kInfo) << "ready: model " << options.model << ", hash " << options.hash_mb
                << " MiB, minibatch " << options.minibatch;
  (*engine)->Run(std::cin);
  return 0;
}
