#include "services/score/solver_score.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "core/games/registry.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"
#include "core/nn/network_evaluator.h"

namespace az::score {
namespace {

// A scored position: its state, the solver's value of each legal move for the side to move (in
// LegalMoves order) and the best of them.
template <games::GameDefinition G>
struct Position {
  typename G::State state;
  std::vector<typename G::Move> moves;
  std::vector<int> values;
  int best = -1;
};

template <games::Solvable G>
int MoveValue(const typename G::State& state, typename G::Move move) {
  typename G::State child = state;
  G::Apply(child, move);
  typename G::Move moves[G::kMaxMoves];
  const games::GameOutcome outcome = G::Outcome(child, G::LegalMoves(child, moves));
  if (games::IsTerminal(outcome)) return -static_cast<int>(games::OutcomeValue(outcome));
  return -G::Solve(child);
}

template <games::Solvable G>
Position<G> Solved(const typename G::State& state) {
  Position<G> position{state, {}, {}, -1};
  typename G::Move moves[G::kMaxMoves];
  const int count = G::LegalMoves(state, moves);
  for (int i = 0; i < count; ++i) {
    position.moves.push_back(moves[i]);
    position.values.push_back(MoveValue<G>(state, moves[i]));
    position.best = std::max(position.best, position.values.back());
  }
  return position;
}

bool Ongoing(auto outcome) { return !games::IsTerminal(outcome); }

// Every position play can reach where the game goes on, each once (small games only).
template <games::Solvable G>
void Enumerate(const typename G::State& state, std::set<std::vector<std::uint8_t>>& seen,
               std::vector<typename G::State>& out) {
  typename G::Move moves[G::kMaxMoves];
  const int count = G::LegalMoves(state, moves);
  if (!Ongoing(G::Outcome(state, count))) return;
  const typename G::Record record = G::ToRecord(state);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(&record);
  if (!seen.insert(std::vector<std::uint8_t>(bytes, bytes + sizeof record)).second) return;
  out.push_back(state);
  for (int i = 0; i < count; ++i) {
    typename G::State child = state;
    G::Apply(child, moves[i]);
    Enumerate<G>(child, seen, out);
  }
}

// Positions from seeded random play, plies in [min_ply, max_ply], the game still going on.
template <games::Solvable G>
std::vector<typename G::State> RandomPositions(const ScoreOptions& options) {
  std::vector<typename G::State> out;
  std::uint64_t seed = options.seed * 0x9E3779B97F4A7C15ull + 1;
  const auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 33;
  };
  while (static_cast<int>(out.size()) < options.positions) {
    const int target = options.min_ply + static_cast<int>(next() % static_cast<std::uint64_t>(
                                             options.max_ply - options.min_ply + 1));
    typename G::State state = G::NewGame(0);
    typename G::Move moves[G::kMaxMoves];
    int count = G::LegalMoves(state, moves);
    while (G::Ply(state) < target && Ongoing(G::Outcome(state, count))) {
      G::Apply(state, moves[next() % static_cast<std::uint64_t>(count)]);
      count = G::LegalMoves(state, moves);
    }
    if (G::Ply(state) == target && Ongoing(G::Outcome(state, count))) out.push_back(state);
  }
  return out;
}

template <games::Solvable G>
std::vector<Position<G>> PositionSet(const ScoreOptions& options) {
  std::vector<typename G::State> states;
  if constexpr (requires { requires G::kEnumerable; }) {  // every reachable position
    std::set<std::vector<std::uint8_t>> seen;
    Enumerate<G>(G::NewGame(0), seen, states);
  } else {
    states = RandomPositions<G>(options);
  }
  std::vector<Position<G>> positions;
  positions.reserve(states.size());
  for (const auto& state : states) positions.push_back(Solved<G>(state));
  return positions;
}

// The index (into position.moves) of the move the model plays in each position.
template <games::Solvable G>
Result<std::vector<int>> Choices(const ScoreOptions& options,
                                 nn::NetworkEvaluator<G>* network,
                                 const std::vector<Position<G>>& positions) {
  std::vector<int> choices(positions.size(), 0);
  if (options.simulations == 0) {
    if (network == nullptr) return choices;  // uniform: the first legal move
    constexpr std::size_t kBatch = 256;
    for (std::size_t begin = 0; begin < positions.size(); begin += kBatch) {
      const std::size_t end = std::min(positions.size(), begin + kBatch);
      std::vector<typename G::Record> records(end - begin);
      std::vector<std::vector<std::uint16_t>> indices(end - begin);
      std::vector<std::vector<float>> priors(end - begin);
      std::vector<std::array<float, 3>> wdl(end - begin);
      std::vector<mcts::Leaf<G>> leaves;
      std::vector<mcts::LeafEval> evals;
      for (std::size_t i = begin; i < end; ++i) {
        const Position<G>& p = positions[i];
        const std::size_t k = i - begin;
        records[k] = G::ToRecord(p.state);
        for (const auto& move : p.moves) {
          indices[k].push_back(static_cast<std::uint16_t>(G::PolicyIndex(p.state, move)));
        }
        priors[k].resize(p.moves.size());
        leaves.push_back({&records[k], p.moves, indices[k]});
        evals.push_back({priors[k], std::span<float, 3>(wdl[k])});
      }
      AZ_RETURN_IF_ERROR(network->Evaluate(leaves, evals));
      for (std::size_t k = 0; k < leaves.size(); ++k) {
        choices[begin + k] = static_cast<int>(
            std::max_element(priors[k].begin(), priors[k].end()) - priors[k].begin());
      }
    }
    return choices;
  }
  mcts::SearchOptions search_options;
  search_options.root_noise = false;
  search_options.reuse_tree = false;
  search_options.virtual_loss = mcts::VirtualLoss::kLoss;
  search_options.max_batch = 8;
  search_options.fpu_base = network != nullptr ? 1.0f : 0.0f;
  search_options.max_nodes = static_cast<std::uint32_t>(
      std::min<std::uint64_t>((options.simulations + 2ull) * G::kMaxMoves + 1024, 1u << 24));
  AZ_ASSIGN_OR_RETURN(mcts::Search<G> search,
                      mcts::Search<G>::Create(search_options, G::NewGame(0)));
  mcts::UniformEvaluator<G> uniform;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    search.SetRoot(positions[i].state);
    if (network != nullptr) {
      AZ_RETURN_IF_ERROR(search.Run(*network, options.simulations));
    } else {
      AZ_RETURN_IF_ERROR(search.Run(uniform, options.simulations));
    }
    const std::uint16_t best = G::PackMove(search.BestMove());
    for (std::size_t m = 0; m < positions[i].moves.size(); ++m) {
      if (G::PackMove(positions[i].moves[m]) == best) choices[i] = static_cast<int>(m);
    }
  }
  return choices;
}

// The positions the model faces as a player (ScoreOptions::as_player), solved, for both sides.
template <games::Solvable G>
Result<std::vector<Position<G>>> PlayerPositions(const ScoreOptions& options,
                                                 nn::NetworkEvaluator<G>* network) {
  std::vector<Position<G>> out;
  std::set<std::vector<std::uint8_t>> seen;
  for (int model_side = 0; model_side < 2; ++model_side) {
    std::vector<typename G::State> frontier = {G::NewGame(0)};
    while (!frontier.empty()) {
      const typename G::State state = frontier.back();
      frontier.pop_back();
      typename G::Move moves[G::kMaxMoves];
      const int count = G::LegalMoves(state, moves);
      if (!Ongoing(G::Outcome(state, count))) continue;
      if (G::Ply(state) % 2 != model_side) {  // the opponent: every reply
        for (int i = 0; i < count; ++i) {
          typename G::State child = state;
          G::Apply(child, moves[i]);
          frontier.push_back(child);
        }
        continue;
      }
      const typename G::Record record = G::ToRecord(state);
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(&record);
      if (!seen.insert(std::vector<std::uint8_t>(bytes, bytes + sizeof record)).second) continue;
      std::vector<Position<G>> one = {Solved<G>(state)};
      AZ_ASSIGN_OR_RETURN(std::vector<int> choice, Choices<G>(options, network, one));
      typename G::State child = state;
      G::Apply(child, one[0].moves[static_cast<std::size_t>(choice[0])]);
      frontier.push_back(child);
      out.push_back(std::move(one[0]));
    }
  }
  return out;
}

template <games::Solvable G>
Result<ScoreReport> Score(const ScoreOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<nn::NetworkEvaluator<G>> network;
  if (options.model != "uniform") {
    nn::RuntimeOptions runtime;
    runtime.device = nn::DeviceChoice::kCpu;
    runtime.intra_op_threads = options.threads;
    AZ_ASSIGN_OR_RETURN(network, nn::NetworkEvaluator<G>::Load(options.model, runtime));
  }
  std::vector<Position<G>> positions;
  if (options.as_player) {
    if constexpr (requires { requires G::kEnumerable; }) {
      AZ_ASSIGN_OR_RETURN(positions, PlayerPositions<G>(options, network.get()));
    } else {
      return InvalidArgument("--as-player needs a game small enough to enumerate");
    }
  } else {
    positions = PositionSet<G>(options);
  }
  AZ_ASSIGN_OR_RETURN(std::vector<int> choices, Choices<G>(options, network.get(), positions));

  ScoreReport report;
  report.game = std::string(G::kName);
  report.as_player = options.as_player;
  int max_ply = 0;
  for (const auto& p : positions) max_ply = std::max(max_ply, G::Ply(p.state));
  // Three bands of plies, as even as the range allows.
  const int width = max_ply / 3 + 1;
  for (int b = 0; b < 3; ++b) report.bands.push_back({b * width, b * width + width - 1, 0, 0});
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Position<G>& p = positions[i];
    const bool kept = p.values[static_cast<std::size_t>(choices[i])] == p.best;
    const bool trivial = std::all_of(p.values.begin(), p.values.end(),
                                     [&p](int v) { return v == p.best; });
    ++report.positions;
    report.kept += kept;
    report.trivial += trivial;
    BandScore& band = report.bands[static_cast<std::size_t>(G::Ply(p.state) / width)];
    ++band.positions;
    band.kept += kept;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace

Result<ScoreReport> ScoreModel(const ScoreOptions& options) {
  AZ_ASSIGN_OR_RETURN(const games::GameInfo* game, games::FindGame(options.game));
  if (!game->has_solver) {
    return InvalidArgument("game " + std::string(game->name) + " has no solver to score against");
  }
  if (options.simulations < 0 || options.threads < 1 || options.positions < 1 ||
      options.min_ply < 0 || options.max_ply < options.min_ply) {
    return InvalidArgument("score options out of range");
  }
  return games::VisitGame(game->id, [&]<games::GameDefinition G>() -> Result<ScoreReport> {
    if constexpr (games::Solvable<G>) {
      return Score<G>(options);
    } else {
      return InvalidArgument("no solver");
    }
  });
}

std::string FormatReport(const ScoreReport& report) {
  char line[256];
  std::snprintf(line, sizeof line,
                "score %s%s positions %d kept %d (%.1f%%) trivial %d in %.1f s\n",
                report.game.c_str(), report.as_player ? " as-player" : "", report.positions,
                report.kept, 100 * report.share(), report.trivial, report.seconds);
  std::string text = line;
  for (const BandScore& band : report.bands) {
    if (band.positions == 0) continue;
    std::snprintf(line, sizeof line, "  plies %2d-%-2d positions %5d kept %5d (%.1f%%)\n",
                  band.min_ply, band.max_ply, band.positions, band.kept,
                  100.0 * band.kept / band.positions);
    text += line;
  }
  return text;
}

std::string ReportJson(const ScoreReport& report) {
  nlohmann::json bands = nlohmann::json::array();
  for (const BandScore& band : report.bands) {
    bands.push_back({{"min_ply", band.min_ply},
                     {"max_ply", band.max_ply},
                     {"positions", band.positions},
                     {"kept", band.kept}});
  }
  return nlohmann::json{{"game", report.game},
                        {"as_player", report.as_player},
                        {"positions", report.positions},
                        {"kept", report.kept},
                        {"share", report.share()},
                        {"trivial", report.trivial},
                        {"seconds", report.seconds},
                        {"bands", bands}}
      .dump();
}

}  // namespace az::score
