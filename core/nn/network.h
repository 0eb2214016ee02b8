#pragma once

// The network for inference behind a torch-free facade: services include this header without
// LibTorch's. Owns the model on its device (CPU, or CUDA with fp16 autocast when available), in
// eval mode. Not thread-safe: one Forward, LoadWeights or SaveWeights at a time (the evaluator's
// batching thread); hot-swap weights between batches with LoadWeights.

#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/nn/net_config.h"
#include "core/nn/sample.h"

namespace az::nn {

// The logit given to illegal moves: far below any real logit, and representable in fp16 (whose
// largest finite magnitude is 65504), so masking stays finite under autocast.
inline constexpr float kIllegalLogit = -1e4f;

struct NetworkOptions {
  NetConfig net;
  RuntimeOptions runtime;
};

// A batch's input: either a caller's buffer of n positions in RuntimeOptions::input_layout, or an
// encoder callback that writes each position straight into the batch tensor (one of the two).
struct BatchInput {
  int n = 0;
  const float* data = nullptr;
  EncodeFn encode;
};

// Where Forward writes; each pointer is optional (null: not produced).
struct ForwardOutputs {
  float* policy_logits = nullptr;  // n x policy_size; masked with kIllegalLogit when legal is given
  float* priors = nullptr;  // legal.actions.size() floats: softmax over each position's legal
                            // actions, in the order `legal` lists them; needs `legal`
  float* wdl = nullptr;     // n x 3 probabilities (win, draw, loss), side to move's view
  float* value = nullptr;   // n: P(win) - P(loss)
};

struct NetworkImpl;  // defined in network.cc

class Network {
 public:
  // A freshly initialised network (seeded by runtime.seed). INVALID_ARGUMENT for a bad config,
  // FAILED_PRECONDITION when CUDA is requested but missing. Sets the intra-op thread count.
  static Result<std::unique_ptr<Network>> Create(const NetworkOptions& options);

  // A network of the shapes stored in `path`, with its weights. Errors as LoadWeights.
  static Result<std::unique_ptr<Network>> FromFile(const std::string& path,
                                                   const RuntimeOptions& runtime);

  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Runs the batch. INVALID_ARGUMENT for a malformed input or legal-move list; RESOURCE_EXHAUSTED
  // or INTERNAL if LibTorch fails (e.g. out of GPU memory). Blocks until the outputs are written.
  Status Forward(const BatchInput& input, const ForwardOutputs& out,
                 const LegalMovesView* legal = nullptr);

  // Replaces the weights with those in a weights file or checkpoint of the same shapes. NOT_FOUND,
  // DATA_LOSS (truncated, corrupt, not a weights file), FAILED_PRECONDITION (other shapes or format
  // version; the message names both). On error the current weights stay.
  Status LoadWeights(const std::string& path);

  // Writes the current weights atomically, tagged with `model_version`.
  Status SaveWeights(const std::string& path, std::uint64_t model_version) const;

  const NetConfig& config() const;
  // The model_version of the last file loaded (0 for a fresh network).
  std::uint64_t model_version() const;
  std::string DeviceName() const;  // "cpu" or "cuda:0"
  bool UsesFp16() const;
  // True when forward passes run under CPU bf16 autocast (RuntimeOptions::cpu_bf16 on the CPU).
  bool UsesBf16() const;

 private:
  explicit Network(std::unique_ptr<NetworkImpl> impl);
  std::unique_ptr<NetworkImpl> impl_;
};

}  // namespace az::nn
