#include "core/nn/torch_runtime.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/utils.h>
#include <torch/version.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>

namespace az::nn {

Result<torch::Device> SelectDevice(DeviceChoice choice) {
  const bool cuda = torch::cuda::is_available();
  switch (choice) {
    case DeviceChoice::kCpu: return torch::Device(torch::kCPU);
    case DeviceChoice::kAuto:
      return cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    case DeviceChoice::kCuda:
      if (!cuda) {
        return FailedPrecondition(
            "device 'cuda' requested, but LibTorch sees no usable CUDA device (CPU-only LibTorch, "
            "no GPU, or a driver problem)");
      }
      return torch::Device(torch::kCUDA, 0);
  }
  return InvalidArgument("unknown device choice");
}

void SetUpTensorProcess(const RuntimeOptions& runtime) {
  if (runtime.intra_op_threads > 0) at::set_num_threads(runtime.intra_op_threads);
  torch::manual_seed(runtime.seed);
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables != nullptr &&
        std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) {
      return;
    }
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
#endif
}

bool UsesFp16(const torch::Device& device, const RuntimeOptions& runtime) {
  return device.is_cuda() && runtime.cuda_fp16;
}

bool UsesBf16(const torch::Device& device, const RuntimeOptions& runtime) {
  return device.is_cpu() && runtime.cpu_bf16;
}

Autocast AutocastFor(const torch::Device& device, const RuntimeOptions& runtime) {
  if (UsesFp16(device, runtime)) return Autocast::kCudaFp16;
  if (UsesBf16(device, runtime)) return Autocast::kCpuBf16;
  return Autocast::kNone;
}

namespace {

// LibTorch 2.4 made autocast per device type and deprecated the device-specific calls (each call
// logs a warning); Debian's 1.13 has only those.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool CudaAutocastEnabled() { return at::autocast::is_autocast_enabled(at::kCUDA); }
void SetCudaAutocast(bool enabled) { at::autocast::set_autocast_enabled(at::kCUDA, enabled); }
bool CpuAutocastEnabled() { return at::autocast::is_autocast_enabled(at::kCPU); }
void SetCpuAutocast(bool enabled) {
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, enabled);
}
#else
bool CudaAutocastEnabled() { return at::autocast::is_enabled(); }
void SetCudaAutocast(bool enabled) { at::autocast::set_enabled(enabled); }
bool CpuAutocastEnabled() { return at::autocast::is_cpu_enabled(); }
void SetCpuAutocast(bool enabled) {
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(enabled);
}
#endif

}  // namespace

AutocastScope::AutocastScope(Autocast mode) : mode_(mode) {
  switch (mode_) {
    case Autocast::kNone: return;
    case Autocast::kCudaFp16:
      previous_ = CudaAutocastEnabled();
      SetCudaAutocast(true);
      break;
    case Autocast::kCpuBf16:
      previous_ = CpuAutocastEnabled();
      SetCpuAutocast(true);
      break;
  }
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (mode_ == Autocast::kNone) return;
  // As torch.autocast's __exit__: drop the cast-weight cache when the outermost scope ends.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  if (mode_ == Autocast::kCudaFp16) {
    SetCudaAutocast(previous_);
  } else {
    SetCpuAutocast(previous_);
  }
}

Status TorchErrorStatus(std::string_view what, const std::exception& e) {
  std::string message = std::string(what) + ": " + e.what();
  // c10::Error messages carry a long C++ backtrace after the first line; keep the first line.
  if (const auto nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
  if (message.find("out of memory") != std::string::npos) return ResourceExhausted(message);
  return Internal(message);
}

}  // namespace az::nn
