// Perft and move-generation speed. Run: build/bin/chess_bench
// The perft benchmarks report nodes per CPU second as the "nodes/s" counter (leaves bulk-counted);
// CPU time, not wall time, because the shared development machines are loaded.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/chess/bitboard.h"
#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/chess/perft.h"
#include "core/chess/position.h"

namespace az::chess {
namespace {

constexpr const char* kKiwipete =
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

Position FromFen(const char* fen) { return *Position::FromFen(fen); }

void RunPerft(benchmark::State& state, const Position& position) {
  const int depth = static_cast<int>(state.range(0));
  std::uint64_t nodes = 0;
  for (auto _ : state) {
    nodes = Perft(position, depth);
    benchmark::DoNotOptimize(nodes);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["nodes/s"] =
      benchmark::Counter(static_cast<double>(nodes) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.SetLabel(SlidingAttackMethod());
}

void BM_PerftStart(benchmark::State& state) { RunPerft(state, Position()); }
BENCHMARK(BM_PerftStart)->Arg(5)->Arg(6)->Unit(benchmark::kMillisecond);

void BM_PerftKiwipete(benchmark::State& state) { RunPerft(state, FromFen(kKiwipete)); }
BENCHMARK(BM_PerftKiwipete)->Arg(4)->Arg(5)->Unit(benchmark::kMillisecond);

// Positions from random play, so that the per-call figures are not one position's.
std::vector<Position> RandomPositions(int count) {
  std::mt19937_64 rng(7);
  std::vector<Position> positions;
  while (static_cast<int>(positions.size()) < count) {
    Position p;
    for (int ply = 0; ply < 80; ++ply) {
      const MoveList moves = LegalMoves(p);
      if (moves.empty()) break;
      p.MakeMove(moves[static_cast<int>(rng() % static_cast<std::uint64_t>(moves.size()))]);
      if (ply >= 10) positions.push_back(p);
    }
  }
  positions.resize(static_cast<std::size_t>(count));
  return positions;
}

void BM_GenerateLegalMoves(benchmark::State& state) {
  const std::vector<Position> positions = RandomPositions(1024);
  MoveList moves;
  std::size_t i = 0;
  for (auto _ : state) {
    GenerateLegalMoves(positions[i++ & 1023], moves);
    benchmark::DoNotOptimize(moves.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_GenerateLegalMoves);

void BM_CountLegalMoves(benchmark::State& state) {
  const std::vector<Position> positions = RandomPositions(1024);
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(CountLegalMoves(positions[i++ & 1023]));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_CountLegalMoves);

// Copy-make: copy the 144-byte position and play one move (hash updated incrementally).
void BM_CopyMake(benchmark::State& state) {
  const std::vector<Position> positions = RandomPositions(1024);
  std::vector<Move> first_moves;
  for (const Position& p : positions) {
    const MoveList moves = LegalMoves(p);
    first_moves.push_back(moves.empty() ? Move::Null() : moves[moves.size() / 2]);
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t k = i++ & 1023;
    if (first_moves[k].is_null()) continue;
    Position child = positions[k];
    child.MakeMove(first_moves[k]);
    benchmark::DoNotOptimize(child);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_CopyMake);

// What a search that replays moves from its root pays per ply: Game::Play then Game::Undo.
void BM_GamePlayUndo(benchmark::State& state) {
  Game game;
  const MoveList moves = game.LegalMoves();
  std::size_t i = 0;
  for (auto _ : state) {
    game.Play(moves[static_cast<int>(i++ % static_cast<std::size_t>(moves.size()))]);
    game.Undo();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_GamePlayUndo);

void BM_GameOutcome(benchmark::State& state) {
  Game game;
  for (const char* m : {"e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"}) {
    (void)game.PlayUci(m);
  }
  for (auto _ : state) benchmark::DoNotOptimize(game.Outcome());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_GameOutcome);

}  // namespace
}  // namespace az::chess
