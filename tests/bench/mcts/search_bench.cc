// Search speed with fake evaluators (search and move generation alone, no network), one thread.
//   BM_ConnectFourSearch/<batch>/<risk>/<vl_loss>: playouts per second for an 800-visit search from
//     the empty board, fresh tree each time (the arena is reset in O(1), not reallocated); risk 1
//     is risk_beta -0.5; vl_loss 1 is VirtualLoss::kLoss. Collisions per playout show how well one
//     tree's batch spreads.
//   BM_ConnectFourGame/<reuse>: a whole self-play-like game, 800 visits a move, with and without
//     subtree reuse; reports playouts actually run per move and the visits inherited per move.
//   BM_ChessSearch/<position>/<batch>: 800 visits on a fresh tree from the start position (0) or a
//     middlegame (1); move generation, make/undo and the record of every leaf included.
//   BM_ChessGame/<reuse>: the first 20 plies of a game at 400 visits a move.

#include <benchmark/benchmark.h>

#include "core/chess/game.h"
#include "core/games/chess/chess.h"
#include "core/games/connect4/connect_four.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"

namespace az::mcts {
namespace {

using games::ConnectFour;
using games::ConnectFourPosition;

Search<ConnectFour> MakeSearch(const SearchOptions& options) {
  Result<Search<ConnectFour>> search = Search<ConnectFour>::Create(options, ConnectFourPosition());
  AZ_CHECK(search.ok(), search.status().ToString());
  return std::move(search).value();
}

void BM_ConnectFourSearch(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const float beta = state.range(1) == 0 ? 0.0f : -0.5f;
  const VirtualLoss mode = state.range(2) == 0 ? VirtualLoss::kParentQ : VirtualLoss::kLoss;
  Search<ConnectFour> search =
      MakeSearch({.risk_beta = beta, .virtual_loss = mode, .max_batch = batch});
  HashEvaluator<ConnectFour> evaluator(1);
  const ConnectFourPosition root;
  for (auto _ : state) {
    search.SetRoot(root);
    AZ_CHECK(search.Run(evaluator, 800).ok());
  }
  const SearchStats& stats = search.stats();
  state.SetItemsProcessed(static_cast<std::int64_t>(stats.playouts));
  state.counters["collisions_per_playout"] =
      static_cast<double>(stats.collisions) / static_cast<double>(stats.playouts);
  state.counters["nodes"] = search.arena().used();
}
BENCHMARK(BM_ConnectFourSearch)
    ->ArgNames({"batch", "risk", "vl_loss"})
    ->Args({1, 0, 0})
    ->Args({1, 1, 0})
    ->Args({4, 0, 0})
    ->Args({16, 0, 0})
    ->Args({4, 0, 1})
    ->Args({16, 0, 1})
    ->Unit(benchmark::kMicrosecond);

void BM_ConnectFourGame(benchmark::State& state) {
  const bool reuse = state.range(0) != 0;
  Search<ConnectFour> search = MakeSearch({.max_batch = 1, .reuse_tree = reuse});
  HashEvaluator<ConnectFour> evaluator(1);
  std::int64_t moves = 0;
  std::uint64_t inherited = 0;
  for (auto _ : state) {
    search.SetRoot(ConnectFourPosition());
    while (!games::IsTerminal(search.root_outcome())) {
      AZ_CHECK(search.Run(evaluator, 800).ok());
      search.Advance(search.BestMove());
      inherited += search.stats().inherited_visits;
      ++moves;
    }
  }
  const SearchStats& stats = search.stats();
  state.SetItemsProcessed(static_cast<std::int64_t>(stats.playouts));
  state.counters["moves_per_second"] =
      benchmark::Counter(static_cast<double>(moves), benchmark::Counter::kIsRate);
  state.counters["playouts_per_move"] = static_cast<double>(stats.playouts) / moves;
  state.counters["inherited_per_move"] = static_cast<double>(inherited) / moves;
}
BENCHMARK(BM_ConnectFourGame)->ArgName("reuse")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// A closed middlegame, both sides castled or about to, about 40 legal moves.
constexpr const char* kMiddlegame =
    "r1bq1rk1/pp2bppp/2n2n2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 9";

void BM_ChessSearch(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(1));
  Result<chess::Game> root =
      chess::Game::FromFen(state.range(0) == 0 ? chess::kStartFen : kMiddlegame);
  AZ_CHECK(root.ok());
  Result<Search<games::Chess>> search = Search<games::Chess>::Create(
      {.virtual_loss = batch > 1 ? VirtualLoss::kLoss : VirtualLoss::kParentQ, .max_batch = batch},
      *root);
  AZ_CHECK(search.ok());
  HashEvaluator<games::Chess> evaluator(1);
  for (auto _ : state) {
    search->SetRoot(*root);
    AZ_CHECK(search->Run(evaluator, 800).ok());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(search->stats().playouts));
  state.counters["nodes"] = search->arena().used();
  state.counters["collisions_per_playout"] = static_cast<double>(search->stats().collisions) /
                                             static_cast<double>(search->stats().playouts);
}
BENCHMARK(BM_ChessSearch)
    ->ArgNames({"middlegame", "batch"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({1, 16})
    ->Unit(benchmark::kMillisecond);

void BM_ChessGame(benchmark::State& state) {
  const bool reuse = state.range(0) != 0;
  Result<Search<games::Chess>> search =
      Search<games::Chess>::Create({.max_batch = 1, .reuse_tree = reuse}, chess::Game());
  AZ_CHECK(search.ok());
  HashEvaluator<games::Chess> evaluator(1);
  std::int64_t moves = 0;
  std::uint64_t inherited = 0;
  for (auto _ : state) {
    search->SetRoot(chess::Game());
    for (int ply = 0; ply < 20 && !games::IsTerminal(search->root_outcome()); ++ply) {
      AZ_CHECK(search->Run(evaluator, 400).ok());
      search->Advance(search->BestMove());
      inherited += search->stats().inherited_visits;
      ++moves;
    }
  }
  const SearchStats& stats = search->stats();
  state.SetItemsProcessed(static_cast<std::int64_t>(stats.playouts));
  state.counters["moves_per_second"] =
      benchmark::Counter(static_cast<double>(moves), benchmark::Counter::kIsRate);
  state.counters["playouts_per_move"] = static_cast<double>(stats.playouts) / moves;
  state.counters["inherited_per_move"] = static_cast<double>(inherited) / moves;
}
BENCHMARK(BM_ChessGame)->ArgName("reuse")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_ArenaResetAndRefill(benchmark::State& state) {
  NodeArena arena(1u << 20);
  for (auto _ : state) {
    arena.Reset();
    for (int i = 0; i < 1000; ++i) benchmark::DoNotOptimize(arena.Allocate(7));
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_ArenaResetAndRefill);

}  // namespace
}  // namespace az::mcts
