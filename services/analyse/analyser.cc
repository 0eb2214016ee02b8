#include "services/analyse/analyser.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/games/registry.h"
#include "core/games/text.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"
#include "core/nn/network_evaluator.h"

namespace az::analyse {
namespace {

std::string Fixed(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

std::string ErrorLine(const Status& status) {
  std::string reason(status.message());
  std::replace(reason.begin(), reason.end(), '\n', ' ');
  return "error " + reason;
}

template <games::GameDefinition G>
class GameAnalyser final : public Analyser {
 public:
  GameAnalyser(const AnalyseOptions& options, std::unique_ptr<nn::NetworkEvaluator<G>> network,
               mcts::Search<G> search)
      : options_(options), network_(std::move(network)), search_(std::move(search)) {}

  std::string AnalyseLine(std::string_view line) override {
    Result<std::string> answer = Analyse(games::TrimText(line));
    return answer.ok() ? *answer : ErrorLine(answer.status());
  }

 private:
  Result<std::string> Analyse(std::string_view line) {
    if (line.empty()) return InvalidArgument("empty line: no position");
    AZ_ASSIGN_OR_RETURN(typename G::State state, G::ParsePosition(line));
    typename G::Move moves[G::kMaxMoves];
    const int count = G::LegalMoves(state, moves);
    if (games::IsTerminal(G::Outcome(state, count))) {
      return InvalidArgument("the game is over in this position");
    }
    if (options_.simulations == 0) {
      if (network_ == nullptr) {  // uniform: every move alike, the first is as good as any
        return "bestmove " + G::MoveText(state, moves[0]) + " value " + Fixed(0) + " prior " +
               Fixed(1.0 / count);
      }
      AZ_ASSIGN_OR_RETURN(auto choice, network_->BestRawMove(state));
      return "bestmove " + G::MoveText(state, choice.move) + " value " + Fixed(choice.value) +
             " prior " + Fixed(choice.prior);
    }
    search_.SetRoot(state);
    if (network_ != nullptr) {
      AZ_RETURN_IF_ERROR(search_.Run(*network_, options_.simulations));
    } else {
      AZ_RETURN_IF_ERROR(search_.Run(uniform_, options_.simulations));
    }
    const mcts::Wdl wdl = search_.RootWdl();
    const typename G::Move best = search_.BestMove();
    return "bestmove " + G::MoveText(state, best) + " value " + Fixed(wdl.win - wdl.loss) +
           " visits " + std::to_string(search_.RootChildVisits());
  }

  AnalyseOptions options_;
  std::unique_ptr<nn::NetworkEvaluator<G>> network_;  // null: uniform
  mcts::UniformEvaluator<G> uniform_;
  mcts::Search<G> search_;
};

template <games::GameDefinition G>
Result<std::unique_ptr<Analyser>> Make(const AnalyseOptions& options) {
  std::unique_ptr<nn::NetworkEvaluator<G>> network;
  if (options.model != "uniform") {
    nn::RuntimeOptions runtime;
    runtime.device = nn::DeviceChoice::kAuto;
    runtime.intra_op_threads = options.threads;
    AZ_ASSIGN_OR_RETURN(network, nn::NetworkEvaluator<G>::Load(options.model, runtime));
  }
  mcts::SearchOptions search;
  search.root_noise = false;
  search.reuse_tree = false;
  search.virtual_loss = mcts::VirtualLoss::kLoss;
  search.max_batch = options.batch;
  search.fpu_base = options.fpu_base >= 0 ? options.fpu_base : (network ? 1.0f : 0.0f);
  // Each expansion adds up to kMaxMoves children; a little room beyond the playouts asked for.
  const std::uint64_t nodes =
      (static_cast<std::uint64_t>(options.simulations) + 2) * G::kMaxMoves + 1024;
  search.max_nodes = static_cast<std::uint32_t>(std::min<std::uint64_t>(nodes, 1u << 24));
  AZ_ASSIGN_OR_RETURN(mcts::Search<G> made, mcts::Search<G>::Create(search, G::NewGame(0)));
  return std::unique_ptr<Analyser>(new GameAnalyser<G>(options, std::move(network), std::move(made)));
}

}  // namespace

Result<std::unique_ptr<Analyser>> CreateAnalyser(const AnalyseOptions& options) {
  AZ_ASSIGN_OR_RETURN(const games::GameInfo* game, games::FindGame(options.game));
  if (options.simulations < 0 || options.simulations > 10'000'000) {
    return InvalidArgument("--simulations " + std::to_string(options.simulations) +
                           " is not in 0..10000000");
  }
  if (options.threads < 1 || options.batch < 1 || options.batch > 1024) {
    return InvalidArgument("--threads must be >= 1 and --batch in 1..1024");
  }
  return games::VisitGame(game->id, [&]<games::GameDefinition G>() { return Make<G>(options); });
}

int AnalyseStream(Analyser& analyser, std::istream& in, std::ostream& out) {
  int errors = 0;
  std::string line;
  while (std::getline(in, line)) {
    const std::string answer = analyser.AnalyseLine(line);
    if (answer.starts_with("error")) ++errors;
    out << answer << '\n' << std::flush;
  }
  return errors;
}

}  // namespace az::analyse
