#pragma once

// Run-time plumbing shared by the network and the trainer: device choice, thread count, fp16 and
// bf16 autocast, and turning LibTorch exceptions into Status at the one place they are caught.

#include <torch/types.h>

#include <cstdint>
#include <string_view>

#include "core/base/status.h"
#include "core/nn/net_config.h"

namespace az::nn {

// CPU, or CUDA device 0. kCuda without a usable CUDA device is FAILED_PRECONDITION.
Result<torch::Device> SelectDevice(DeviceChoice choice);

// Sets the process up for tensors, as every network and trainer does when it is created (all
// process-wide): RuntimeOptions::intra_op_threads, LibTorch's seed, and malloc set to keep the
// memory that freed tensors leave (once; a no-op off glibc). glibc's malloc serves blocks from
// 128 KiB up (its threshold grows only to the largest block freed so far) with their own mmap and
// gives the heap's free top back to the kernel, so every batch's activations were mapped,
// zero-filled by page faults and unmapped again: a fifth of the learner's and a seventh of the
// evaluator's CPU went to the kernel (docs/PERFORMANCE.md, "Memory the tensors free"). After this,
// blocks under 32 MiB (glibc's maximum) come from the heap and its free top goes back to the kernel
// only past 1 GiB: a process holds its peak working set. A GLIBC_TUNABLES environment variable that
// sets any glibc.malloc key is left to decide instead.
void SetUpTensorProcess(const RuntimeOptions& runtime);

// True when the run uses fp16 autocast: CUDA and RuntimeOptions::cuda_fp16.
bool UsesFp16(const torch::Device& device, const RuntimeOptions& runtime);

// True when the run uses bf16 autocast: the CPU and RuntimeOptions::cpu_bf16.
bool UsesBf16(const torch::Device& device, const RuntimeOptions& runtime);

// The reduced precision a run's forward passes (and training) use.
enum class Autocast : std::uint8_t { kNone, kCudaFp16, kCpuBf16 };
Autocast AutocastFor(const torch::Device& device, const RuntimeOptions& runtime);

// Enables the given autocast for its scope (kNone: a no-op). Nests.
class AutocastScope {
 public:
  explicit AutocastScope(Autocast mode);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  Autocast mode_;
  bool previous_ = false;
};

// INTERNAL (or RESOURCE_EXHAUSTED for out-of-memory) Status for a caught LibTorch exception.
Status TorchErrorStatus(std::string_view what, const std::exception& e);

}  // namespace az::nn
