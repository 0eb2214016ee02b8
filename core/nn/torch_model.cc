#include "core/nn/torch_model.h"

#include <torch/nn/functional/activation.h>

#include <string>

#include "core/base/check.h"

namespace az::nn {

ConvBnImpl::ConvBnImpl(int in_channels, int out_channels, int kernel) {
  // No conv bias: BatchNorm's beta does its job.
  conv_ = register_module(
      "conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in_channels, out_channels, kernel)
                                    .padding(kernel / 2)
                                    .bias(false)));
  bn_ = register_module("bn", torch::nn::BatchNorm2d(out_channels));
}

torch::Tensor ConvBnImpl::forward(const torch::Tensor& x) { return bn_(conv_(x)); }

ResidualBlockImpl::ResidualBlockImpl(int filters) {
  first_ = register_module("first", ConvBn(filters, filters, 3));
  second_ = register_module("second", ConvBn(filters, filters, 3));
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor y = torch::relu(first_(x));
  y = second_(y);
  return torch::relu(y + x);
}

AzNetImpl::AzNetImpl(const NetConfig& config) : config_(config) {
  AZ_CHECK(config.Validate().ok(), config.Validate().ToString());
  const int squares = config.board_height * config.board_width;
  input_ = register_module("input", ConvBn(config.input_planes, config.filters, 3));
  tower_ = register_module("tower", torch::nn::ModuleList());
  for (int i = 0; i < config.blocks; ++i) tower_->push_back(ResidualBlock(config.filters));
  policy_conv_ = register_module("policy_conv", ConvBn(config.filters, config.policy_channels, 1));
  // A cell-read head (NetConfig::policy_cell_plane) maps each cell's channels to one logit; the
  // dense head maps every cell's channels to every action.
  policy_fc_ = register_module(
      "policy_fc", config.policy_cell_plane >= 0
                       ? torch::nn::Linear(config.policy_channels, 1)
                       : torch::nn::Linear(config.policy_channels * squares, config.policy_size));
  value_conv_ = register_module("value_conv", ConvBn(config.filters, config.value_channels, 1));
  value_fc1_ = register_module(
      "value_fc1", torch::nn::Linear(config.value_channels * squares, config.value_hidden));
  value_fc2_ = register_module("value_fc2", torch::nn::Linear(config.value_hidden, 3));
}

std::pair<torch::Tensor, torch::Tensor> AzNetImpl::Logits(const torch::Tensor& x) {
  AZ_CHECK(x.dim() == 4 && x.size(1) == config_.input_planes && x.size(2) == config_.board_height &&
               x.size(3) == config_.board_width,
           "input batch shape does not match the network config " + config_.ToString());
  torch::Tensor h = torch::relu(input_(x));
  for (const auto& block : *tower_) h = block->as<ResidualBlockImpl>()->forward(h);
  // flatten() follows the logical NCHW order whatever the memory format, so the linear layers see
  // the same feature order for channels-last and contiguous tensors (and in the weights file).
  torch::Tensor v = torch::relu(value_conv_(h)).flatten(1);
  v = torch::relu(value_fc1_(v));
  torch::Tensor p = torch::relu(policy_conv_(h));
  if (config_.policy_cell_plane >= 0) {
    // [n, H, W] logits, one per cell; a column's is the sum over the cells the plane marks in it.
    const torch::Tensor cells = policy_fc_(p.permute({0, 2, 3, 1})).squeeze(-1);
    return {(cells * x.select(1, config_.policy_cell_plane)).sum(1), value_fc2_(v)};
  }
  return {policy_fc_(p.flatten(1)), value_fc2_(v)};
}

NetOutput AzNetImpl::forward(const torch::Tensor& x, const torch::Tensor& legal_mask) {
  auto [policy_logits, wdl_logits] = Logits(x);
  if (legal_mask.defined()) {
    AZ_CHECK(
        legal_mask.scalar_type() == torch::kBool && legal_mask.sizes() == policy_logits.sizes(),
        "legal mask must be bool [n, policy_size]");
    policy_logits = policy_logits.masked_fill(legal_mask.logical_not(), kIllegalLogit);
  }
  NetOutput out;
  // Softmax in float32 even under fp16 autocast: priors feed MCTS and must sum to 1.
  out.policy = torch::softmax(policy_logits.to(torch::kFloat), 1);
  out.value = ValueFromWdlLogits(wdl_logits);
  out.policy_logits = std::move(policy_logits);
  out.wdl_logits = std::move(wdl_logits);
  return out;
}

torch::Tensor ValueFromWdlLogits(const torch::Tensor& wdl_logits) {
  const torch::Tensor wdl = torch::softmax(wdl_logits.to(torch::kFloat), 1);
  return wdl.select(1, 0) - wdl.select(1, 2);
}

void SetMemoryFormat(torch::nn::Module& module, bool channels_last) {
  const auto format =
      channels_last ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous;
  torch::NoGradGuard no_grad;
  for (torch::Tensor& t : module.parameters()) {
    if (t.dim() == 4) t.set_data(t.contiguous(format));
  }
  for (torch::Tensor& t : module.buffers()) {
    if (t.dim() == 4) t.set_data(t.contiguous(format));
  }
}

AzNet MakeModel(const NetConfig& net, const torch::Device& device, bool channels_last) {
  AzNet model(net);
  model->to(device);
  SetMemoryFormat(*model, channels_last);
  return model;
}

void DeepenInto(AzNetImpl& deeper, AzNetImpl& shallow) {
  NetConfig same_but_depth = deeper.config();
  same_but_depth.blocks = shallow.config().blocks;
  AZ_CHECK(same_but_depth == shallow.config() && deeper.config().blocks > shallow.config().blocks,
           "DeepenInto: " + deeper.config().ToString() + " is not a deeper " +
               shallow.config().ToString());
  torch::NoGradGuard no_grad;
  auto params = deeper.named_parameters();
  for (const auto& p : shallow.named_parameters()) params[p.key()].copy_(p.value());
  auto buffers = deeper.named_buffers();
  for (const auto& b : shallow.named_buffers()) buffers[b.key()].copy_(b.value());
  for (int i = shallow.config().blocks; i < deeper.config().blocks; ++i) {
    const std::string bn = "tower." + std::to_string(i) + ".second.bn.";
    params[bn + "weight"].zero_();
    params[bn + "bias"].zero_();
  }
}

ParameterGroups SplitForWeightDecay(torch::nn::Module& module) {
  ParameterGroups groups;
  for (const auto& named : module.named_modules()) {
    torch::nn::Module& m = *named.value();
    const bool has_decayed_weight =
        m.as<torch::nn::Conv2dImpl>() != nullptr || m.as<torch::nn::LinearImpl>() != nullptr;
    for (const auto& param : m.named_parameters(/*recurse=*/false)) {
      if (has_decayed_weight && param.key() == "weight") {
        groups.decay.push_back(param.value());
      } else {
        groups.no_decay.push_back(param.value());
      }
    }
  }
  return groups;
}

}  // namespace az::nn
