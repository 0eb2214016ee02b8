#include "services/uci/engine_evaluator.h"

#include <bit>
#include <utility>

#include "core/mcts/fake_evaluators.h"
#include "core/nn/network_evaluator.h"

namespace az::uci {
namespace {

// NetworkEvaluator models BatchEvaluator by a template; the engine picks its evaluator at run
// time, so it goes behind the virtual interface here (one virtual call per batch).
class NetworkAdapter final : public ChessEvaluator {
 public:
  explicit NetworkAdapter(std::unique_ptr<nn::NetworkEvaluator<games::Chess>> network)
      : network_(std::move(network)) {}
  Status Evaluate(std::span<const mcts::Leaf<games::Chess>> leaves,
                  std::span<mcts::LeafEval> evals) override {
    return network_->Evaluate(leaves, evals);
  }
  nn::NetworkEvaluator<games::Chess>& network() { return *network_; }

 private:
  std::unique_ptr<nn::NetworkEvaluator<games::Chess>> network_;
};

}  // namespace

std::uint64_t CacheEntriesFor(std::uint64_t requested) {
  if (requested < 2) return 0;
  return std::bit_floor(std::min(requested, evaluator::kMaxCacheSize));
}

Result<std::unique_ptr<CachedEvaluator>> CachedEvaluator::Create(
    std::unique_ptr<ChessEvaluator> inner, std::uint64_t entries) {
  AZ_CHECK(inner != nullptr, "CachedEvaluator needs an evaluator to wrap");
  AZ_ASSIGN_OR_RETURN(evaluator::EvalCache<games::Chess> cache,
                      evaluator::EvalCache<games::Chess>::Create(CacheEntriesFor(entries)));
  return std::unique_ptr<CachedEvaluator>(new CachedEvaluator(std::move(inner), std::move(cache)));
}

Status CachedEvaluator::Evaluate(std::span<const mcts::Leaf<games::Chess>> leaves,
                                 std::span<mcts::LeafEval> evals) {
  AZ_CHECK(leaves.size() == evals.size(), "CachedEvaluator: leaves and evals differ in size");
  miss_leaves_.clear();
  miss_evals_.clear();
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (cache_.Lookup(*leaves[i].record, leaves[i].policy_indices, evals[i].priors.data(),
                      evals[i].wdl.data())) {
      continue;
    }
    miss_leaves_.push_back(leaves[i]);
    miss_evals_.push_back(evals[i]);  // a copy of the spans: the answer lands in the search
  }
  if (miss_leaves_.empty()) return Status::Ok();
  AZ_RETURN_IF_ERROR(inner_->Evaluate(miss_leaves_, miss_evals_));
  for (std::size_t i = 0; i < miss_leaves_.size(); ++i) {
    cache_.Insert(*miss_leaves_[i].record, miss_leaves_[i].policy_indices,
                  std::span<const float>(miss_evals_[i].priors),
                  std::span<const float, 3>(miss_evals_[i].wdl));
  }
  return Status::Ok();
}

Result<LoadedEvaluator> LoadChessEvaluator(const EvaluatorSettings& settings) {
  LoadedEvaluator loaded;
  if (settings.model == "uniform") {
    loaded.evaluator = std::make_unique<mcts::UniformEvaluator<games::Chess>>();
    loaded.description = "uniform (no network: every legal move alike, value 0)";
    return loaded;
  }
  if (settings.threads < 1 || settings.threads > 256) {
    return InvalidArgument("threads must be within [1, 256], got " +
                           std::to_string(settings.threads));
  }
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kAuto;
  runtime.intra_op_threads = settings.threads;
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<nn::NetworkEvaluator<games::Chess>> network,
                      nn::NetworkEvaluator<games::Chess>::Load(settings.model, runtime));
  loaded.is_network = true;
  loaded.description = "network " + network->network().config().ToString() + " model_version " +
                       std::to_string(network->network().model_version()) + " device " +
                       network->network().DeviceName() + " from " + settings.model;
  auto adapter = std::make_unique<NetworkAdapter>(std::move(network));
  const std::uint64_t entries = CacheEntriesFor(settings.cache_entries);
  if (entries == 0) {
    loaded.evaluator = std::move(adapter);
    loaded.description += ", nn cache off";
    return loaded;
  }
  AZ_ASSIGN_OR_RETURN(loaded.evaluator, CachedEvaluator::Create(std::move(adapter), entries));
  loaded.description += ", nn cache " + std::to_string(entries) + " entries";
  return loaded;
}

}  // namespace az::uci
