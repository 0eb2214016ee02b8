#include "services/score/solver_score.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/games/registry.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"
#include "core/nn/network_evaluator.h"
#include "services/score/position_set.h"
#include "services/score/solved.h"

namespace az::score {
namespace {

template <games::GameDefinition G>
using Position = internal::SolvedPosition<G>;

template <games::Solvable G>
Position<G> Solved(const typename G::State& state) {
  return internal::Solve<G>(state);
}

bool Ongoing(auto outcome) { return !games::IsTerminal(outcome); }

// Every position play can reach where the game goes on, each once (small games only).
template <games::Solvable G>
void Enumerate(const typename G::State& state, std::set<std::string>& seen,
               std::vector<typename G::State>& out) {
  typename G::Move moves[G::kMaxMoves];
  const int count = G::LegalMoves(state, moves);
  if (!Ongoing(G::Outcome(state, count))) return;
  const typename G::Record record = G::ToRecord(state);
  if (!seen.insert(std::string(reinterpret_cast<const char*>(&record), sizeof record)).second)
    return;
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
    const int target =
        options.min_ply + static_cast<int>(next() % static_cast<std::uint64_t>(
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
std::vector<Position<G>> SolvedSet(const ScoreOptions& options) {
  std::vector<typename G::State> states;
  if constexpr (requires { requires G::kEnumerable; }) {  // every reachable position
    std::set<std::string> seen;
    Enumerate<G>(G::NewGame(0), seen, states);
  } else {
    states = RandomPositions<G>(options);
  }
  std::vector<Position<G>> positions;
  positions.reserve(states.size());
  for (const auto& state : states) positions.push_back(Solved<G>(state));
  return positions;
}

// A stored set's positions with their stored values: nothing is solved.
template <games::Solvable G>
std::vector<Position<G>> StoredSet(const PositionSet& set) {
  std::vector<Position<G>> positions;
  positions.reserve(set.positions.size());
  for (const StoredPosition& stored : set.positions) {
    Result<typename G::State> state = G::ParsePosition(stored.moves);
    AZ_CHECK(state.ok(), "az-score: a checked position set holds an unreadable position");
    Position<G> p{*state, {}, {}, -1, stored.band, stored.source};
    typename G::Move moves[G::kMaxMoves];
    const int count = G::LegalMoves(p.state, moves);
    for (int i = 0; i < count; ++i) {
      p.moves.push_back(moves[i]);
      p.values.push_back(
          stored.values[static_cast<std::size_t>(G::PolicyIndex(p.state, moves[i]))]);
      p.best = std::max(p.best, p.values.back());
    }
    positions.push_back(std::move(p));
  }
  return positions;
}

// The onestep baseline's move (ScoreOptions::model), as an index into position.moves.
template <games::Solvable G>
int OneStepChoice(const Position<G>& p) {
  for (std::size_t m = 0; m < p.moves.size(); ++m) {
    if (internal::WinsAtOnce<G>(p.state, p.moves[m])) return static_cast<int>(m);
  }
  for (std::size_t m = 0; m < p.moves.size(); ++m) {
    if (internal::Careful<G>(p.state, p.moves[m])) return static_cast<int>(m);
  }
  return 0;
}

// The network's priors over each state's `moves` (in that order) and its W - L for the side to
// move, batch by batch.
template <games::Solvable G>
Status EvaluateStates(nn::NetworkEvaluator<G>& network, std::span<const typename G::State> states,
                      std::span<const std::vector<typename G::Move>> moves,
                      std::vector<std::vector<float>>& priors, std::vector<float>& values) {
  priors.assign(states.size(), {});
  values.assign(states.size(), 0.0f);
  constexpr std::size_t kBatch = 256;
  for (std::size_t begin = 0; begin < states.size(); begin += kBatch) {
    const std::size_t end = std::min(states.size(), begin + kBatch);
    std::vector<typename G::Record> records(end - begin);
    std::vector<std::vector<std::uint16_t>> indices(end - begin);
    std::vector<std::array<float, 3>> wdl(end - begin);
    std::vector<mcts::Leaf<G>> leaves;
    std::vector<mcts::LeafEval> evals;
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t k = i - begin;
      records[k] = G::ToRecord(states[i]);
      for (const auto& move : moves[i]) {
        indices[k].push_back(static_cast<std::uint16_t>(G::PolicyIndex(states[i], move)));
      }
      priors[i].resize(moves[i].size());
      leaves.push_back({&records[k], moves[i], indices[k]});
      evals.push_back({priors[i], std::span<float, 3>(wdl[k])});
    }
    AZ_RETURN_IF_ERROR(network.Evaluate(leaves, evals));
    for (std::size_t k = 0; k < leaves.size(); ++k) values[begin + k] = wdl[k][0] - wdl[k][2];
  }
  return Status::Ok();
}

// ScoreOptions::one_ply_value: for each position, the move after which the network values the
// position worst for the opponent; a move that ends the game is valued exactly (+1, 0).
template <games::Solvable G>
Result<std::vector<int>> OnePlyValueChoices(nn::NetworkEvaluator<G>& network,
                                            const std::vector<Position<G>>& positions) {
  std::vector<std::vector<double>> move_values(positions.size());
  std::vector<typename G::State> children;
  std::vector<std::vector<typename G::Move>> child_moves;
  std::vector<std::pair<std::size_t, std::size_t>> owners;  // (position, move) of each child
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Position<G>& p = positions[i];
    move_values[i].assign(p.moves.size(), 0.0);
    for (std::size_t m = 0; m < p.moves.size(); ++m) {
      typename G::State child = p.state;
      G::Apply(child, p.moves[m]);
      typename G::Move moves[G::kMaxMoves];
      const int count = G::LegalMoves(child, moves);
      const games::GameOutcome outcome = G::Outcome(child, count);
      if (games::IsTerminal(outcome)) {  // the child's side to move has lost, or a draw
        move_values[i][m] = -games::OutcomeValue(outcome);
        continue;
      }
      children.push_back(child);
      child_moves.emplace_back(moves, moves + count);
      owners.emplace_back(i, m);
    }
  }
  std::vector<std::vector<float>> priors;
  std::vector<float> values;
  AZ_RETURN_IF_ERROR(EvaluateStates<G>(network, children, child_moves, priors, values));
  for (std::size_t c = 0; c < owners.size(); ++c) {
    move_values[owners[c].first][owners[c].second] = -values[c];
  }
  std::vector<int> choices(positions.size(), 0);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    choices[i] = static_cast<int>(std::max_element(move_values[i].begin(), move_values[i].end()) -
                                  move_values[i].begin());
  }
  return choices;
}

// The index (into position.moves) of the move the model plays in each position.
template <games::Solvable G>
Result<std::vector<int>> Choices(const ScoreOptions& options, nn::NetworkEvaluator<G>* network,
                                 const std::vector<Position<G>>& positions) {
  std::vector<int> choices(positions.size(), 0);
  if (options.model == "onestep") {
    for (std::size_t i = 0; i < positions.size(); ++i) choices[i] = OneStepChoice<G>(positions[i]);
    return choices;
  }
  if (options.one_ply_value && network != nullptr) {
    return OnePlyValueChoices<G>(*network, positions);
  }
  if (options.simulations == 0) {
    if (network == nullptr) return choices;  // uniform: the first legal move
    std::vector<typename G::State> states;
    std::vector<std::vector<typename G::Move>> moves;
    for (const Position<G>& p : positions) {
      states.push_back(p.state);
      moves.push_back(p.moves);
    }
    std::vector<std::vector<float>> priors;
    std::vector<float> values;
    AZ_RETURN_IF_ERROR(EvaluateStates<G>(*network, states, moves, priors, values));
    for (std::size_t i = 0; i < positions.size(); ++i) {
      choices[i] = static_cast<int>(std::max_element(priors[i].begin(), priors[i].end()) -
                                    priors[i].begin());
    }
    return choices;
  }
  mcts::SearchOptions search_options;
  search_options.root_noise = false;
  search_options.reuse_tree = false;
  search_options.virtual_loss = mcts::VirtualLoss::kLoss;
  search_options.max_batch = 8;
  if (options.gumbel) {  // as self-play searches: one playout in flight, the halving exact
    search_options.root_selection = mcts::RootSelection::kGumbel;
    search_options.gumbel_c_scale = options.gumbel_c_scale;
    search_options.max_batch = 1;
  }
  search_options.c_puct = options.c_puct;
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
  std::set<std::string> seen;
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
      if (!seen.insert(std::string(reinterpret_cast<const char*>(&record), sizeof record)).second) {
        continue;
      }
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
  if (options.model != "uniform" && options.model != "onestep") {
    nn::RuntimeOptions runtime;
    runtime.device = nn::DeviceChoice::kCpu;
    runtime.intra_op_threads = options.threads;
    AZ_ASSIGN_OR_RETURN(network, nn::NetworkEvaluator<G>::Load(options.model, runtime));
  }
  ScoreReport report;
  report.game = std::string(G::kName);
  report.model = options.model;
  report.simulations = options.simulations;
  report.one_ply_value = options.one_ply_value;
  report.gumbel = options.gumbel;
  if (options.gumbel) report.gumbel_c_scale = options.gumbel_c_scale;
  if (options.simulations > 0) report.c_puct = options.c_puct;
  report.as_player = options.as_player;
  constexpr bool kEnumerable = requires { requires G::kEnumerable; };

  std::vector<Position<G>> positions;
  std::optional<PositionSet> stored;
  std::string path = options.positions_file;
  if (path.empty() && !options.set.empty()) path = ShippedSetPath(G::kName, options.set);
  if (path.empty() && !options.as_player && options.positions == 0 && !kEnumerable) {
    path = ShippedSetPath(G::kName, "small");
  }
  if (options.as_player) {
    if constexpr (kEnumerable) {
      AZ_ASSIGN_OR_RETURN(positions, PlayerPositions<G>(options, network.get()));
      report.set = "as-player";
    } else {
      return InvalidArgument("--as-player needs a game small enough to enumerate");
    }
  } else if (!path.empty()) {
    AZ_ASSIGN_OR_RETURN(stored, ReadPositionSet(path));
    if (stored->game != G::kName) {
      return InvalidArgument(path + " is a set of " + stored->game + " positions, not " +
                             std::string(G::kName));
    }
    positions = StoredSet<G>(*stored);
    report.set = path;
  } else {
    positions = SolvedSet<G>(options);
    report.set = kEnumerable ? "reachable" : "random " + std::to_string(options.positions);
  }
  AZ_ASSIGN_OR_RETURN(std::vector<int> choices, Choices<G>(options, network.get(), positions));

  if (stored) {
    for (const PlyBand& band : stored->bands) {
      report.bands.emplace_back();
      report.bands.back().min_ply = band.min_ply;
      report.bands.back().max_ply = band.max_ply;
    }
    for (int s = 0; s < kSources; ++s) {
      report.sources.emplace_back();
      report.sources.back().source = std::string(kSourceNames[s]);
    }
  } else {
    // Three bands of plies, as even as the range allows.
    int max_ply = 0;
    for (Position<G>& p : positions) max_ply = std::max(max_ply, G::Ply(p.state));
    const int width = max_ply / 3 + 1;
    for (int b = 0; b < 3; ++b) {
      report.bands.emplace_back();
      report.bands.back().min_ply = b * width;
      report.bands.back().max_ply = b * width + width - 1;
    }
    for (Position<G>& p : positions) p.band = G::Ply(p.state) / width;
  }
  for (std::string_view value : kValueNames) {
    report.values.emplace_back();
    report.values.back().value = std::string(value);
  }
  const auto count = [](Tally& tally, bool kept, bool trivial) {
    ++tally.positions;
    tally.kept += kept;
    tally.trivial += trivial;
  };
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Position<G>& p = positions[i];
    const bool kept = p.values[static_cast<std::size_t>(choices[i])] == p.best;
    const bool trivial = p.trivial();
    count(report, kept, trivial);
    count(report.bands[static_cast<std::size_t>(p.band)], kept, trivial);
    if (stored) count(report.sources[static_cast<std::size_t>(p.source)], kept, trivial);
    count(report.values[static_cast<std::size_t>(1 - p.best)], kept, trivial);  // kValueNames
  }
  std::erase_if(report.sources, [](const SourceScore& s) { return s.positions == 0; });
  std::erase_if(report.values, [](const ValueScore& v) { return v.positions == 0; });
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace

Result<ScoreReport> ScoreModel(const ScoreOptions& options) {
  AZ_ASSIGN_OR_RETURN(const games::GameInfo* game, games::FindGame(options.game));
  if (!game->has_solver) {
    return InvalidArgument("game " + std::string(game->name) + " has no solver to score against");
  }
  if (options.simulations < 0 || options.threads < 0 || options.positions < 0 ||
      options.min_ply < 0 || options.max_ply < options.min_ply) {
    return InvalidArgument("score options out of range");
  }
  if ((!options.positions_file.empty()) + (!options.set.empty()) + (options.positions > 0) > 1) {
    return InvalidArgument("give at most one of a positions file, a set name and a count");
  }
  if (options.as_player &&
      (!options.positions_file.empty() || !options.set.empty() || options.positions > 0)) {
    return InvalidArgument("--as-player makes its own positions: no set or count with it");
  }
  if (options.model == "onestep" && options.simulations > 0) {
    return InvalidArgument("the onestep baseline plays without search: --simulations 0");
  }
  if (options.gumbel && (options.simulations == 0 || !(options.gumbel_c_scale > 0.0f))) {
    return InvalidArgument("a Gumbel root needs --simulations N and a positive --gumbel-c-scale");
  }
  if (!(options.c_puct > 0.0f && options.c_puct <= 100.0f)) {
    return InvalidArgument("--c-puct must be in (0, 100]");
  }
  if (options.one_ply_value &&
      (options.simulations > 0 || options.model == "uniform" || options.model == "onestep")) {
    return InvalidArgument(
        "--one-ply-value reads a network's value without search: a weights "
        "file and --simulations 0");
  }
  return games::VisitGame(game->id, [&]<games::GameDefinition G>() -> Result<ScoreReport> {
    if constexpr (games::Solvable<G>) {
      return Score<G>(options);
    } else {
      return InvalidArgument("no solver");
    }
  });
}

namespace {

std::string Percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", 100 * share);
  return text;
}

// "positions N kept K (S%) trivial T non-trivial U%"
std::string TallyText(const Tally& tally) {
  char line[160];
  std::snprintf(line, sizeof line, "positions %5d kept %5d (%s) trivial %4d non-trivial %s",
                tally.positions, tally.kept, Percent(tally.share()).c_str(), tally.trivial,
                Percent(tally.nontrivial_share()).c_str());
  return line;
}

nlohmann::json TallyJson(const Tally& tally) {
  return {{"positions", tally.positions},
          {"kept", tally.kept},
          {"share", tally.share()},
          {"trivial", tally.trivial},
          {"nontrivial_share", tally.nontrivial_share()}};
}

}  // namespace

std::string FormatReport(const ScoreReport& report) {
  char line[512];
  std::snprintf(line, sizeof line,
                "score %s%s%s positions %d kept %d (%s) trivial %d non-trivial %s in %.1f s%s\n",
                report.game.c_str(), report.as_player ? " as-player" : "",
                report.one_ply_value ? " one-ply-value" : "", report.positions, report.kept,
                Percent(report.share()).c_str(), report.trivial,
                Percent(report.nontrivial_share()).c_str(), report.seconds,
                report.set.find('/') == std::string::npos
                    ? ""
                    : (" [" + std::filesystem::path(report.set).filename().string() + "]").c_str());
  std::string text = line;
  for (const BandScore& band : report.bands) {
    if (band.positions == 0) continue;
    std::snprintf(line, sizeof line, "  plies  %2d-%-2d %s\n", band.min_ply, band.max_ply,
                  TallyText(band).c_str());
    text += line;
  }
  for (const SourceScore& source : report.sources) {
    std::snprintf(line, sizeof line, "  %-12s %s\n", source.source.c_str(),
                  TallyText(source).c_str());
    text += line;
  }
  for (const ValueScore& value : report.values) {
    std::snprintf(line, sizeof line, "  value %-6s %s\n", value.value.c_str(),
                  TallyText(value).c_str());
    text += line;
  }
  return text;
}

std::string ReportJson(const ScoreReport& report) {
  nlohmann::json bands = nlohmann::json::array();
  for (const BandScore& band : report.bands) {
    nlohmann::json entry = TallyJson(band);
    entry["min_ply"] = band.min_ply;
    entry["max_ply"] = band.max_ply;
    bands.push_back(entry);
  }
  nlohmann::json sources = nlohmann::json::array();
  for (const SourceScore& source : report.sources) {
    nlohmann::json entry = TallyJson(source);
    entry["source"] = source.source;
    sources.push_back(entry);
  }
  nlohmann::json values = nlohmann::json::array();
  for (const ValueScore& value : report.values) {
    nlohmann::json entry = TallyJson(value);
    entry["value"] = value.value;
    values.push_back(entry);
  }
  nlohmann::json json = TallyJson(report);
  json["game"] = report.game;
  json["model"] = report.model;
  json["simulations"] = report.simulations;
  json["one_ply_value"] = report.one_ply_value;
  json["root_selection"] = report.gumbel ? "gumbel" : "puct";
  if (report.gumbel) json["gumbel_c_scale"] = report.gumbel_c_scale;
  if (report.simulations > 0) json["c_puct"] = report.c_puct;
  json["as_player"] = report.as_player;
  json["set"] = report.set;
  json["seconds"] = report.seconds;
  json["bands"] = bands;
  json["sources"] = sources;
  json["values"] = values;
  return json.dump();
}

}  // namespace az::score
