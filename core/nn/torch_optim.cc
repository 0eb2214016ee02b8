#include "core/nn/torch_optim.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

namespace az::nn {
namespace {

// Two groups of one optimizer type: `decay` as configured for the decayed weights, the same options
// without decay for the rest.
template <typename Options, typename Optimizer>
std::unique_ptr<torch::optim::Optimizer> MakeTwoGroups(const Options& decay,
                                                       ParameterGroups groups) {
  Options no_decay = decay;
  no_decay.weight_decay(0.0);
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  param_groups.emplace_back(std::move(groups.decay), std::make_unique<Options>(decay));
  param_groups.emplace_back(std::move(groups.no_decay), std::make_unique<Options>(no_decay));
  return std::make_unique<Optimizer>(std::move(param_groups), decay);
}

template <typename Options, typename Optimizer>
std::unique_ptr<torch::optim::Optimizer> MakeAdam(const TrainerOptions& o, ParameterGroups groups) {
  Options decay(o.learning_rate);
  decay.betas({o.adam_beta1, o.adam_beta2}).eps(o.adam_eps).weight_decay(o.weight_decay);
  return MakeTwoGroups<Options, Optimizer>(decay, std::move(groups));
}

std::unique_ptr<torch::optim::Optimizer> MakeSgd(const TrainerOptions& o, ParameterGroups groups) {
  torch::optim::SGDOptions decay(o.learning_rate);
  decay.momentum(o.momentum).nesterov(o.momentum > 0.0).weight_decay(o.weight_decay);
  return MakeTwoGroups<torch::optim::SGDOptions, torch::optim::SGD>(decay, std::move(groups));
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const TrainerOptions& options,
                                                       torch::nn::Module& model) {
  AZ_CHECK(options.Validate().ok(), options.Validate().ToString());
  ParameterGroups groups = SplitForWeightDecay(model);
  if (options.optimizer == OptimizerKind::kSgd) return MakeSgd(options, std::move(groups));
  if (options.decoupled_weight_decay) {
    return MakeAdam<torch::optim::AdamWOptions, torch::optim::AdamW>(options, std::move(groups));
  }
  return MakeAdam<torch::optim::AdamOptions, torch::optim::Adam>(options, std::move(groups));
}

double GroupWeightDecay(const torch::optim::OptimizerParamGroup& group) {
  const torch::optim::OptimizerOptions& options = group.options();
  if (const auto* adam = dynamic_cast<const torch::optim::AdamOptions*>(&options)) {
    return adam->weight_decay();
  }
  if (const auto* adamw = dynamic_cast<const torch::optim::AdamWOptions*>(&options)) {
    return adamw->weight_decay();
  }
  if (const auto* sgd = dynamic_cast<const torch::optim::SGDOptions*>(&options)) {
    return sgd->weight_decay();
  }
  AZ_CHECK(false, "not an Adam, AdamW or SGD parameter group");
  return 0.0;
}

}  // namespace az::nn
