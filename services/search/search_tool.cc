#include "services/search/search_tool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/uci.h"
#include "core/games/chess/chess.h"
#include "core/mcts/fake_evaluators.h"
#include "core/mcts/search.h"
#include "core/nn/network_evaluator.h"

namespace az::search_tool {
namespace {

std::string Fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value + 0.0);  // + 0.0: no "-0.0000"
  return text;
}

template <typename E>
Status SearchAndPrint(mcts::Search<games::Chess>& search, E& evaluator, int simulations,
                      std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  AZ_RETURN_IF_ERROR(search.Run(evaluator, simulations));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const mcts::Wdl wdl = search.RootWdl();
  out << "info simulations " << search.RootChildVisits() << " time_ms " << Fixed(seconds * 1000, 1)
      << " sims_per_second "
      << static_cast<long long>(seconds > 0 ? search.stats().playouts / seconds : 0) << " value "
      << Fixed(search.RootValue(), 4) << " wdl " << Fixed(wdl.win, 4) << " " << Fixed(wdl.draw, 4)
      << " " << Fixed(wdl.loss, 4) << " soft_value " << Fixed(search.SoftValue(), 4) << "\n";

  std::vector<mcts::ChildStats<chess::Move>> children = search.RootChildren();
  std::stable_sort(children.begin(), children.end(),
                   [](const auto& a, const auto& b) { return a.visits > b.visits; });
  for (const auto& child : children) {
    out << chess::MoveToUci(child.move) << " visits " << child.visits << " policy "
        << Fixed(child.policy, 4) << " prior " << Fixed(child.prior, 4) << " q "
        << Fixed(child.q, 4) << "\n";
  }
  out << "bestmove " << chess::MoveToUci(search.BestMove()) << std::endl;
  return Status::Ok();
}

}  // namespace

Status RunSearchTool(const SearchToolOptions& options, std::ostream& out) {
  if (options.simulations < 1) return InvalidArgument("--simulations must be at least 1");
  AZ_ASSIGN_OR_RETURN(chess::Game game, chess::Game::FromFen(options.fen));

  const chess::GameOutcome outcome = game.Outcome();
  if (outcome.is_terminal()) {
    out << "info terminal " << chess::ToString(outcome.reason) << "\n"
        << "bestmove 0000" << std::endl;
    return Status::Ok();
  }

  const bool with_model = !options.model_path.empty();
  mcts::SearchOptions search_options;
  search_options.fpu_base = options.fpu_base.value_or(with_model ? 1.0f : 0.0f);
  search_options.risk_beta = options.risk_beta;
  search_options.virtual_loss = options.virtual_loss;
  search_options.max_batch = options.batch;
  search_options.max_nodes = 1u << 26;
  AZ_ASSIGN_OR_RETURN(mcts::Search<games::Chess> search,
                      mcts::Search<games::Chess>::Create(search_options, game));

  if (!with_model) {
    out << "info evaluator uniform fpu_base " << Fixed(search_options.fpu_base, 2) << "\n";
    mcts::UniformEvaluator<games::Chess> evaluator;
    return SearchAndPrint(search, evaluator, options.simulations, out);
  }
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kAuto;
  runtime.intra_op_threads = options.threads;
  AZ_ASSIGN_OR_RETURN(auto evaluator,
                      nn::NetworkEvaluator<games::Chess>::Load(options.model_path, runtime));
  out << "info evaluator network " << evaluator->network().config().ToString() << " device "
      << evaluator->network().DeviceName() << " model_version "
      << evaluator->network().model_version() << " fpu_base " << Fixed(search_options.fpu_base, 2)
      << "\n";
  return SearchAndPrint(search, *evaluator, options.simulations, out);
}

}  // namespace az::search_tool
