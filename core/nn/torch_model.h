#pragma once

// The residual policy/WDL-value network as a LibTorch module, for code that runs torch itself (the
// evaluator, the learner, tests). Everything else uses the torch-free facades in core/nn/network.h
// and core/nn/trainer.h. Link `az_nn_torch` to include this header.

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <vector>

#include "core/nn/net_config.h"
#include "core/nn/network.h"  // kIllegalLogit

namespace az::nn {

struct NetOutput {
  torch::Tensor policy;         // [n, policy_size] float32 probabilities; illegal moves ~0
  torch::Tensor value;          // [n] float32, P(win) - P(loss)
  torch::Tensor policy_logits;  // [n, policy_size], illegal moves set to kIllegalLogit
  torch::Tensor wdl_logits;     // [n, 3] (win, draw, loss)
};

// Conv (no bias) + BatchNorm, the building block of the tower and the heads.
class ConvBnImpl : public torch::nn::Module {
 public:
  ConvBnImpl(int in_channels, int out_channels, int kernel);
  torch::Tensor forward(const torch::Tensor& x);  // conv, then BN; no activation

 private:
  torch::nn::Conv2d conv_{nullptr};
  torch::nn::BatchNorm2d bn_{nullptr};
};
TORCH_MODULE(ConvBn);

class ResidualBlockImpl : public torch::nn::Module {
 public:
  explicit ResidualBlockImpl(int filters);
  torch::Tensor forward(const torch::Tensor& x);  // relu(x + bn(conv(relu(bn(conv(x))))))

 private:
  ConvBn first_{nullptr};
  ConvBn second_{nullptr};
};
TORCH_MODULE(ResidualBlock);

class AzNetImpl : public torch::nn::Module {
 public:
  // `config` must be valid (checked). Weights are initialised from torch's global generator.
  explicit AzNetImpl(const NetConfig& config);

  // x: [n, input_planes, board_height, board_width] float (any memory format; channels-last is the
  // fast one on CPU, see docs/nn.md). legal_mask: undefined, or bool [n, policy_size] with true for
  // legal moves. Works under fp16 autocast: logits may be half, policy and value are float32.
  NetOutput forward(const torch::Tensor& x, const torch::Tensor& legal_mask = {});

  // The two heads' raw logits (policy [n, policy_size], WDL [n, 3]) without softmax or masking:
  // what training needs.
  std::pair<torch::Tensor, torch::Tensor> Logits(const torch::Tensor& x);

  const NetConfig& config() const { return config_; }

 private:
  NetConfig config_;
  ConvBn input_{nullptr};
  torch::nn::ModuleList tower_{nullptr};
  ConvBn policy_conv_{nullptr};
  torch::nn::Linear policy_fc_{nullptr};
  ConvBn value_conv_{nullptr};
  torch::nn::Linear value_fc1_{nullptr};
  torch::nn::Linear value_fc2_{nullptr};
};
TORCH_MODULE(AzNet);

// A fresh AzNet for `net` on `device`, its 4-D tensors in channels-last memory when asked.
AzNet MakeModel(const NetConfig& net, const torch::Device& device, bool channels_last);

// Copies `shallow`'s parameters and buffers into `deeper`, a network of the same shapes but more
// residual blocks, and makes `deeper`'s extra blocks (those after shallow's last) identities: their
// second BatchNorm's scale and shift are zeroed, so each adds nothing to its input (which is a
// ReLU's output) and `deeper` computes what `shallow` did, in train and eval mode alike (Goyal et
// al.'s zero-initialised residuals). Their first convolutions keep their fresh initialisation, so
// gradients reach them as soon as the zeroed scales move.
void DeepenInto(AzNetImpl& deeper, AzNetImpl& shallow);

// Moves every 4-D parameter and buffer to channels-last memory (or back to contiguous NCHW). The
// tensors keep their identity, so an optimizer holding them stays valid.
void SetMemoryFormat(torch::nn::Module& module, bool channels_last);

// Weight decay applies to convolution and linear weights only, never to BatchNorm parameters or
// biases (decaying BN's gamma/beta only fights the normalisation).
struct ParameterGroups {
  std::vector<torch::Tensor> decay;
  std::vector<torch::Tensor> no_decay;
};
ParameterGroups SplitForWeightDecay(torch::nn::Module& module);

// Value from WDL logits: softmax, then P(win) - P(loss), in float32.
torch::Tensor ValueFromWdlLogits(const torch::Tensor& wdl_logits);

}  // namespace az::nn
