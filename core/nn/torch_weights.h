#pragma once

// Saving and loading the network's weights, and training checkpoints (model + optimizer + trainer
// state), inside the checked envelope of core/nn/weights_file.h.
//
// Payload: a LibTorch archive. Sub-archive "model" holds the parameters as "p<i>" and the buffers
// (BatchNorm statistics) as "b<i>", in named_parameters()/named_buffers() order, as contiguous CPU
// tensors, so a file does not depend on the device or memory format it was written from. A
// checkpoint adds "optimizer" (torch::optim's own serialisation) and "trainer" (counters). Weights
// can be loaded from either kind of file.

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <string>

#include "core/base/status.h"
#include "core/nn/torch_model.h"
#include "core/nn/weights_file.h"

namespace az::nn {

// Writes `model`'s weights atomically. FAILED_PRECONDITION / NOT_FOUND on I/O errors.
Status SaveModelWeights(const std::string& path, AzNetImpl& model, std::uint64_t model_version,
                        std::uint64_t train_step);

// Loads weights (from a weights file or a checkpoint) into `model`, keeping its device and memory
// format. Errors as ReadWeightsFile, plus FAILED_PRECONDITION when the file is for other shapes
// (the message names both). On error the model is unchanged.
Result<WeightsFileInfo> LoadModelWeights(const std::string& path, AzNetImpl& model);

// What a checkpoint holds besides the model and optimizer.
struct CheckpointState {
  std::uint64_t step = 0;
  std::uint64_t model_version = 0;
  std::uint64_t skipped_nonfinite_loss = 0;
  std::uint64_t skipped_nonfinite_gradient = 0;
  double loss_scale = 1.0;
  std::int64_t scaler_good_steps = 0;
  std::int64_t scaler_overflows = 0;
  double train_seconds = 0.0;  // 0 in checkpoints written before it was kept
};

// Writes model + optimizer + state atomically (a temporary file, fsync, rename), and the weights'
// moving average as the sub-archive "ema" when `ema` is given. The optimizer's family ("adam" for
// Adam and AdamW, whose states are alike, or "sgd") is recorded as "optimizer_kind".
Status SaveCheckpoint(const std::string& path, AzNetImpl& model, torch::optim::Optimizer& optimizer,
                      const CheckpointState& state, AzNetImpl* ema = nullptr);

// Restores a checkpoint written by SaveCheckpoint into a model of the same shapes and an optimizer
// built the same way. Errors as LoadModelWeights; FAILED_PRECONDITION when `path` is a plain
// weights file or its optimizer is of another family (a file without "optimizer_kind" is Adam's,
// as every checkpoint before SGD was); DATA_LOSS when the payload lacks the optimizer or trainer
// state. Shape and checksum errors leave model and optimizer untouched; an error while parsing
// the optimizer state can leave them partly overwritten (core/nn/trainer.h loads into fresh
// copies for that reason). With `ema`, the moving average is read into it, or set to the restored
// weights when the file has none.
Result<CheckpointState> LoadCheckpoint(const std::string& path, AzNetImpl& model,
                                       torch::optim::Optimizer& optimizer,
                                       AzNetImpl* ema = nullptr);

// Copies every parameter and buffer of `src` into `dst` (same shapes; dst keeps its device).
void CopyWeights(AzNetImpl& dst, AzNetImpl& src);

}  // namespace az::nn
