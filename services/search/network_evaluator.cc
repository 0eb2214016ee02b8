#include "services/search/network_evaluator.h"

#include <utility>

#include "core/encoding/planes.h"

namespace az::search_tool {

NetworkEvaluator::NetworkEvaluator(std::unique_ptr<nn::Network> network)
    : network_(std::move(network)) {}

Result<std::unique_ptr<NetworkEvaluator>> NetworkEvaluator::Load(
    const std::string& path, const nn::RuntimeOptions& runtime) {
  nn::RuntimeOptions options = runtime;
  options.input_layout = nn::InputLayout::kNhwc;  // the chess encoder's layout
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<nn::Network> network, nn::Network::FromFile(path, options));
  const nn::NetConfig& config = network->config();
  if (config.input_planes != encoding::kNumPlanes || config.board_height != 8 ||
      config.board_width != 8 || config.policy_size != encoding::kPolicySize) {
    return FailedPrecondition("model " + path + " is not a chess network: " + config.ToString());
  }
  return std::unique_ptr<NetworkEvaluator>(new NetworkEvaluator(std::move(network)));
}

Status NetworkEvaluator::Evaluate(std::span<const mcts::Leaf<games::Chess>> leaves,
                                  std::span<mcts::LeafEval> evals) {
  AZ_CHECK(leaves.size() == evals.size());
  const int n = static_cast<int>(leaves.size());
  offsets_.assign(1, 0);
  actions_.clear();
  for (const mcts::Leaf<games::Chess>& leaf : leaves) {
    for (std::uint16_t index : leaf.policy_indices) actions_.push_back(index);
    offsets_.push_back(static_cast<std::int32_t>(actions_.size()));
  }
  priors_.resize(actions_.size());
  wdl_.resize(static_cast<std::size_t>(n) * 3);
  nn::BatchInput input;
  input.n = n;
  input.encode = [&leaves](int i, float* dst) {
    encoding::EncodePlanes(*leaves[i].record, std::span<float>(dst, encoding::kInputFloats));
  };
  nn::ForwardOutputs outputs;
  outputs.priors = priors_.data();
  outputs.wdl = wdl_.data();
  const nn::LegalMovesView legal{offsets_, actions_};
  AZ_RETURN_IF_ERROR(network_->Forward(input, outputs, &legal));
  for (int i = 0; i < n; ++i) {
    std::span<float> priors = evals[i].priors;
    for (std::size_t m = 0; m < priors.size(); ++m) priors[m] = priors_[offsets_[i] + m];
    evals[i].SetWdl(wdl_[3 * i], wdl_[3 * i + 1], wdl_[3 * i + 2]);
  }
  return Status::Ok();
}

}  // namespace az::search_tool
