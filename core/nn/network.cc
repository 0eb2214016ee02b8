#include "core/nn/network.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <cstring>

#include "core/nn/torch_batch.h"
#include "core/nn/torch_model.h"
#include "core/nn/torch_runtime.h"
#include "core/nn/torch_weights.h"

namespace az::nn {

struct NetworkImpl {
  NetworkOptions options;
  torch::Device device{torch::kCPU};
  AzNet model{nullptr};
  std::uint64_t model_version = 0;
};

namespace {

void CopyOut(const torch::Tensor& t, float* dst) {
  const torch::Tensor cpu = t.to(torch::kCPU, torch::kFloat).contiguous();
  std::memcpy(dst, cpu.data_ptr<float>(), static_cast<std::size_t>(cpu.numel()) * sizeof(float));
}

}  // namespace

Network::Network(std::unique_ptr<NetworkImpl> impl) : impl_(std::move(impl)) {}
Network::~Network() = default;

Result<std::unique_ptr<Network>> Network::Create(const NetworkOptions& options) {
  AZ_RETURN_IF_ERROR(options.net.Validate());
  AZ_RETURN_IF_ERROR(options.runtime.Validate());
  auto impl = std::make_unique<NetworkImpl>();
  impl->options = options;
  AZ_ASSIGN_OR_RETURN(impl->device, SelectDevice(options.runtime.device));
  try {
    SetUpTensorProcess(options.runtime);
    impl->model = MakeModel(options.net, impl->device, options.runtime.channels_last);
    impl->model->eval();
  } catch (const std::exception& e) {
    return TorchErrorStatus("creating the network", e);
  }
  return std::unique_ptr<Network>(new Network(std::move(impl)));
}

Result<std::unique_ptr<Network>> Network::FromFile(const std::string& path,
                                                   const RuntimeOptions& runtime) {
  AZ_ASSIGN_OR_RETURN(WeightsFileInfo info, ReadWeightsFileInfo(path));
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<Network> network,
                      Create(NetworkOptions{.net = info.net, .runtime = runtime}));
  AZ_RETURN_IF_ERROR(network->LoadWeights(path));
  return network;
}

Status Network::Forward(const BatchInput& input, const ForwardOutputs& out,
                        const LegalMovesView* legal) {
  const NetConfig& net = impl_->options.net;
  const RuntimeOptions& runtime = impl_->options.runtime;
  if (input.n <= 0) return InvalidArgument("forward: the batch is empty");
  if ((input.data != nullptr) == static_cast<bool>(input.encode)) {
    return InvalidArgument("forward: give either an input buffer or an encoder, not both or none");
  }
  if (out.priors != nullptr && legal == nullptr) {
    return InvalidArgument("forward: priors over legal moves need the legal-move lists");
  }
  try {
    const bool cuda = impl_->device.is_cuda();
    torch::Tensor x;
    if (input.data != nullptr) {
      x = WrapInput(input.data, input.n, net, runtime.input_layout);
    } else {
      x = NewInputTensor(net, input.n, runtime.input_layout, /*pinned=*/cuda);
      FillInput(x, input.n, input.encode);
    }
    torch::Tensor mask;
    if (legal != nullptr) {
      AZ_ASSIGN_OR_RETURN(mask, LegalMask(*legal, input.n, net.policy_size));
      mask = mask.to(impl_->device, /*non_blocking=*/cuda);
    }
    x = x.to(impl_->device, /*non_blocking=*/cuda)
            .contiguous(runtime.channels_last ? torch::MemoryFormat::ChannelsLast
                                              : torch::MemoryFormat::Contiguous);
    c10::InferenceMode inference;
    AutocastScope autocast(AutocastFor(impl_->device, runtime));
    NetOutput result = impl_->model->forward(x, mask);
    if (out.policy_logits != nullptr) CopyOut(result.policy_logits, out.policy_logits);
    if (out.priors != nullptr) {
      const torch::Tensor policy = result.policy.to(torch::kCPU, torch::kFloat).contiguous();
      const float* p = policy.data_ptr<float>();
      for (int i = 0; i < input.n; ++i) {
        const float* row = p + static_cast<std::int64_t>(i) * net.policy_size;
        for (std::int32_t k = legal->offsets[i]; k < legal->offsets[i + 1]; ++k) {
          out.priors[k] = row[legal->actions[k]];
        }
      }
    }
    if (out.wdl != nullptr)
      CopyOut(torch::softmax(result.wdl_logits.to(torch::kFloat), 1), out.wdl);
    if (out.value != nullptr) CopyOut(result.value, out.value);
  } catch (const std::exception& e) {
    return TorchErrorStatus("forward pass", e);
  }
  return Status::Ok();
}

Status Network::LoadWeights(const std::string& path) {
  AZ_ASSIGN_OR_RETURN(WeightsFileInfo info, LoadModelWeights(path, *impl_->model));
  impl_->model_version = info.model_version;
  return Status::Ok();
}

Status Network::SaveWeights(const std::string& path, std::uint64_t model_version) const {
  return SaveModelWeights(path, *impl_->model, model_version, 0);
}

const NetConfig& Network::config() const { return impl_->options.net; }
std::uint64_t Network::model_version() const { return impl_->model_version; }
std::string Network::DeviceName() const { return impl_->device.str(); }
bool Network::UsesFp16() const { return az::nn::UsesFp16(impl_->device, impl_->options.runtime); }
bool Network::UsesBf16() const { return az::nn::UsesBf16(impl_->device, impl_->options.runtime); }

}  // namespace az::nn
