// az-perft --fen "<FEN>" --depth D [--divide]
// Prints, with --divide, one "<uci move>: <nodes>" line per root move; then always a last line
// "nodes <N> nps <rate>". A bad FEN or depth exits 2 with the reason on stderr.

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>

#include "core/chess/perft.h"
#include "core/chess/position.h"
#include "core/chess/uci.h"

namespace {
constexpr int kExitBadInput = 2;
constexpr int kMaxDepth = 15;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Counts the leaf nodes of the legal move tree (perft) and its speed."};
  std::string fen(az::chess::kStartFen);
  int depth = 0;
  bool divide = false;
  app.add_option("--fen", fen, "position as FEN (default: the start position)");
  app.add_option("--depth", depth, "plies to search, 1.." + std::to_string(kMaxDepth))
      ->required()
      ->check(CLI::Range(1, kMaxDepth));
  app.add_flag("--divide", divide, "print each root move with its node count first");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::cerr << "az-perft: " << e.what() << "\n";
    return kExitBadInput;
  }

  const az::Result<az::chess::Position> position = az::chess::Position::FromFen(fen);
  if (!position.ok()) {
    std::cerr << "az-perft: " << position.status().message() << "\n";
    return kExitBadInput;
  }

  const auto start = std::chrono::steady_clock::now();
  std::uint64_t nodes = 0;
  if (divide) {
    for (const az::chess::PerftDivideEntry& e : az::chess::PerftDivide(*position, depth)) {
      std::cout << az::chess::MoveToUci(e.move) << ": " << e.nodes << "\n";
      nodes += e.nodes;
    }
  } else {
    nodes = az::chess::Perft(*position, depth);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto nps =
      static_cast<std::uint64_t>(seconds > 0 ? static_cast<double>(nodes) / seconds : 0.0);
  std::cout << "nodes " << nodes << " nps " << nps << std::endl;
  return 0;
}
