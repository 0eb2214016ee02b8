#include "core/nn/torch_mirror.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <string>

#include "core/base/check.h"

namespace az::nn {

namespace {

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}
bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Halves of dimension `dim` swapped: channel a becomes channel (a + size / 2) mod size.
torch::Tensor SwapHalves(const torch::Tensor& t, std::int64_t dim) {
  return torch::roll(t, {t.size(dim) / 2}, {dim});
}

// How a tensor of AzNet maps under the mirror, by its name in named_parameters() or
// named_buffers(); every name is classified, so a new layer cannot go untied unnoticed.
torch::Tensor Mirrored(const std::string& name, const torch::Tensor& t, const NetConfig& net) {
  const bool tower_conv = (StartsWith(name, "tower.") && EndsWith(name, ".conv.weight"));
  const bool tower_bn = (StartsWith(name, "tower.") || StartsWith(name, "input.")) &&
                        name.find(".bn.") != std::string::npos;
  if (name == "input.conv.weight") return SwapHalves(t.flip({3}), 0);  // planes are their own
  if (tower_conv) return SwapHalves(SwapHalves(t.flip({3}), 0), 1);
  if (tower_bn) return SwapHalves(t, 0);
  // The heads' 1x1 convolutions read a regular tower and give channels that are their own mirror.
  if (name == "policy_conv.conv.weight" || name == "value_conv.conv.weight") {
    return SwapHalves(t.flip({3}), 1);
  }
  if (name == "value_fc1.weight") {
    const torch::Tensor planes =
        t.reshape({t.size(0), net.value_channels, net.board_height, net.board_width});
    return SwapHalves(planes.flip({3}), 0).reshape(t.sizes());
  }
  if (name == "value_fc1.bias") return SwapHalves(t, 0);
  if (name == "value_fc2.weight") return SwapHalves(t, 1);
  // Unconstrained: the heads' BatchNorms (self-mirrored channels), the cell-read policy map (one
  // cell's channels to its logit) and the WDL biases.
  AZ_CHECK(StartsWith(name, "policy_conv.bn.") || StartsWith(name, "value_conv.bn.") ||
               StartsWith(name, "policy_fc.") || name == "value_fc2.bias",
           "ProjectMirrorEquivariant: no mirror rule for " + name);
  return t;
}

void Project(const std::string& name, torch::Tensor& t, const NetConfig& net) {
  if (!t.is_floating_point()) return;  // BatchNorm's batch counter
  const torch::Tensor mirrored = Mirrored(name, t, net);
  if (!mirrored.is_same(t)) t.copy_((t + mirrored) * 0.5);
}

}  // namespace

void ProjectMirrorEquivariant(AzNetImpl& model) {
  const NetConfig& net = model.config();
  AZ_CHECK(CheckMirrorable(net).ok(), CheckMirrorable(net).ToString());
  torch::NoGradGuard no_grad;
  for (auto& p : model.named_parameters()) Project(p.key(), p.value(), net);
  for (auto& b : model.named_buffers()) Project(b.key(), b.value(), net);
}

}  // namespace az::nn
