#pragma once

// The optimizer the trainer uses: Adam (or AdamW), or SGD with Nesterov momentum
// (TrainerOptions::optimizer), with two parameter groups, weight decay on convolution and linear
// weights only (SplitForWeightDecay), none on BatchNorm parameters and biases.

#include <torch/optim/optimizer.h>

#include <memory>

#include "core/nn/torch_model.h"
#include "core/nn/trainer.h"

namespace az::nn {

// Group 0: decayed parameters (weight_decay = options.weight_decay); group 1: the rest (0).
// `options` must be valid (checked).
std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const TrainerOptions& options,
                                                       torch::nn::Module& model);

// The weight decay a parameter group applies (Adam, AdamW or SGD options).
double GroupWeightDecay(const torch::optim::OptimizerParamGroup& group);

}  // namespace az::nn
