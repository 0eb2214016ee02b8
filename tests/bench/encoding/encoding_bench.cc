// Encoder speed: positions encoded per second (record -> planes, batched and single), the cost of
// the record itself (MakeRecord) against the planes, the legal-move mask and index list against
// move generation alone, and sample building and validation. Positions come from seeded random
// games (middle-game-like: plies 10-80), so every record has a full 8-position history. Connect
// Four's encoder on positions of random games at plies 6-30, the plies self-play and the
// benchmark cover.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/encoding/move_index.h"
#include "core/encoding/planes.h"
#include "core/encoding/position_record.h"
#include "core/games/connect4/connect_four_encoder.h"
#include "core/sample/chess_sample.h"
#include "core/sample/sample_builder.h"

namespace az::encoding {
namespace {

// Snapshots of random games at plies 10..80 (fewer if a game ends first).
const std::vector<chess::Game>& Games() {
  static const std::vector<chess::Game> games = [] {
    std::vector<chess::Game> out;
    std::mt19937_64 rng(1234);
    while (out.size() < 256) {
      chess::Game game;
      const int target = 10 + static_cast<int>(rng() % 71);
      while (game.ply() < target) {
        const chess::MoveList moves = game.LegalMoves();
        if (game.Outcome(moves.size()).is_terminal()) break;
        game.Play(moves[static_cast<int>(rng() % moves.size())]);
      }
      if (!game.Outcome().is_terminal() && game.ply() >= 10) out.push_back(game);
    }
    return out;
  }();
  return games;
}

const std::vector<PositionRecord>& Records() {
  static const std::vector<PositionRecord> records = [] {
    std::vector<PositionRecord> out;
    for (const chess::Game& g : Games()) out.push_back(MakeRecord(g));
    return out;
  }();
  return records;
}

void BM_EncodePlanes(benchmark::State& state) {
  const std::vector<PositionRecord>& records = Records();
  std::vector<float> planes(kInputFloats);
  std::size_t i = 0;
  for (auto _ : state) {
    EncodePlanes(records[i++ % records.size()], planes);
    benchmark::DoNotOptimize(planes.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodePlanes);

// Connect Four positions from random play at plies 6-30; a game that ends before is drawn again.
const std::vector<games::ConnectFourRecord>& ConnectFourRecords() {
  static const std::vector<games::ConnectFourRecord> records = [] {
    std::vector<games::ConnectFourRecord> out;
    std::mt19937_64 rng(1234);
    while (out.size() < 256) {
      games::ConnectFourPosition position;
      const int target = 6 + static_cast<int>(rng() % 25);
      bool over = false;
      while (!over && position.moves_played() < target) {
        int column = static_cast<int>(rng() % 7);
        while (!position.CanPlay(column)) column = (column + 1) % 7;
        over = position.IsWinningMove(column);
        position.Play(column);
      }
      if (!over) out.push_back(position.ToRecord());
    }
    return out;
  }();
  return records;
}

void BM_EncodeConnectFour(benchmark::State& state) {
  const std::vector<games::ConnectFourRecord>& records = ConnectFourRecords();
  std::vector<float> planes(games::kConnectFourInputSize);
  std::size_t i = 0;
  for (auto _ : state) {
    games::EncodeConnectFour(records[i++ % records.size()], planes);
    benchmark::DoNotOptimize(planes.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeConnectFour);

// A batch as the evaluator or learner builds it: N records into one N x 8 x 8 x 122 buffer.
void BM_EncodeBatch(benchmark::State& state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  std::vector<PositionRecord> batch;
  for (std::size_t i = 0; i < n; ++i) batch.push_back(Records()[i % Records().size()]);
  std::vector<float> planes(n * kInputFloats);
  for (auto _ : state) {
    EncodeBatch(batch, planes);
    benchmark::DoNotOptimize(planes.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(n * kInputBytes));
}
BENCHMARK(BM_EncodeBatch)->Arg(32)->Arg(256)->Arg(1024);

// The record alone: what the live encoder adds over encoding planes.
void BM_MakeRecord(benchmark::State& state) {
  const std::vector<chess::Game>& games = Games();
  std::size_t i = 0;
  for (auto _ : state) {
    PositionRecord r = MakeRecord(games[i++ % games.size()]);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MakeRecord);

// The live encoder: Game -> record -> planes.
void BM_EncodeGame(benchmark::State& state) {
  const std::vector<chess::Game>& games = Games();
  std::vector<float> planes(kInputFloats);
  std::size_t i = 0;
  for (auto _ : state) {
    EncodeGame(games[i++ % games.size()], planes);
    benchmark::DoNotOptimize(planes.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeGame);

// Baseline for the two below: move generation alone.
void BM_GenerateLegalMoves(benchmark::State& state) {
  const std::vector<chess::Game>& games = Games();
  chess::MoveList moves;
  std::size_t i = 0;
  for (auto _ : state) {
    chess::GenerateLegalMoves(games[i++ % games.size()].position(), moves);
    benchmark::DoNotOptimize(moves.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GenerateLegalMoves);

// The dense 4672-float mask (generates the moves itself).
void BM_LegalMoveMask(benchmark::State& state) {
  const std::vector<chess::Game>& games = Games();
  std::vector<float> mask(kPolicySize);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(LegalMoveMask(games[i++ % games.size()].position(), mask));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LegalMoveMask);

// Moves plus their indices: the sparse form a search leaf or evaluator response needs.
void BM_LegalMoveIndices(benchmark::State& state) {
  const std::vector<chess::Game>& games = Games();
  chess::MoveList moves;
  std::uint16_t indices[chess::kMaxMoves];
  std::size_t i = 0;
  for (auto _ : state) {
    const chess::Position& pos = games[i++ % games.size()].position();
    chess::GenerateLegalMoves(pos, moves);
    benchmark::DoNotOptimize(MoveIndices(pos, moves, indices));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LegalMoveIndices);

void BM_MakeSample(benchmark::State& state) {
  const std::vector<chess::Game>& games = Games();
  std::vector<std::vector<sample::MoveWeight>> searches;
  for (const chess::Game& g : games) {
    std::vector<sample::MoveWeight> w;
    float visits = 1.0f;
    for (const chess::Move m : g.LegalMoves()) w.push_back({m, visits += 7.0f});
    searches.push_back(w);
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const std::size_t k = i++ % games.size();
    Result<sample::ChessSample> s =
        sample::MakeSample(games[k], {searches[k], {0.3f, 0.4f, 0.3f}, 0.0f}, {1, 1});
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MakeSample);

void BM_ValidateSample(benchmark::State& state) {
  std::vector<sample::ChessSample> samples;
  for (const chess::Game& g : Games()) {
    std::vector<sample::MoveWeight> w;
    for (const chess::Move m : g.LegalMoves()) w.push_back({m, 1.0f});
    sample::ChessSample s = *sample::MakeSample(g, {w, {0.3f, 0.4f, 0.3f}, 0.0f}, {1, 1});
    sample::SetOutcome(s, chess::GameResult::kDraw);
    samples.push_back(s);
  }
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(sample::ValidateSample(samples[i++ % samples.size()]).ok());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ValidateSample);

}  // namespace
}  // namespace az::encoding
