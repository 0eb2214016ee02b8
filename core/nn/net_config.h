#pragma once

// The shapes of the residual policy/value network, and how it runs. Torch-free: services, configs
// and tests include this without paying for LibTorch's headers.
//
// The network (docs/nn.md): an input block (3x3 conv, BN, ReLU), `blocks` residual blocks of
// `filters` channels, a policy head (1x1 conv to `policy_channels`, BN, ReLU, linear to
// `policy_size`; or, with `policy_cell_plane` >= 0, a linear map of each cell's channels to one
// logit, a column's logit being the one at the cell input plane `policy_cell_plane` marks in it)
// and a WDL value head (1x1 conv to `value_channels`, BN, ReLU, linear to `value_hidden`, ReLU,
// linear to 3: win, draw, loss from the side to move's view).

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::nn {

struct NetConfig {
  std::int32_t blocks = 6;
  std::int32_t filters = 64;
  std::int32_t input_planes = 122;
  std::int32_t board_height = 8;
  std::int32_t board_width = 8;
  std::int32_t policy_size = 4672;
  std::int32_t policy_channels = 2;
  std::int32_t value_channels = 1;
  std::int32_t value_hidden = 256;
  // -1: the dense policy head. k in [0, input_planes): actions are columns (policy_size must be
  // board_width) and each column's logit is read at the cell(s) input plane k holds 1 in that
  // column (games::NetShape::policy_cell_plane). A column where the plane is all 0 gets logit 0
  // before the legal-move mask.
  std::int32_t policy_cell_plane = -1;

  // Chess, small enough to train and evaluate on two CPU cores: the game's kNet
  // (core/games/chess/chess.h), which the member defaults above also spell out.
  static NetConfig ChessSmall();
  // Chess at AlphaZero-like size for a GPU: 15 blocks x 192 filters.
  static NetConfig ChessFull();
  // Connect Four: the game's kNet (core/games/connect4/connect_four.h: 7 planes of 6x7, 7 actions).
  static NetConfig ConnectFour();

  // INVALID_ARGUMENT naming the first field out of range (every field must be positive; the
  // ranges are generous but catch a swapped or garbage value).
  Status Validate() const;

  // "6x64, 122 planes 8x8, policy 4672 (2 ch), value 1 ch -> 256 -> 3"; a cell-read policy is
  // "policy 7 (8 ch, read at plane 3)".
  std::string ToString() const;

  std::int64_t InputFloatsPerPosition() const {
    return std::int64_t{input_planes} * board_height * board_width;
  }

  friend bool operator==(const NetConfig&, const NetConfig&) = default;
};

// How a caller's encoder lays out one position's input floats.
enum class InputLayout : std::uint8_t {
  kNhwc,  // dst[(row * width + col) * planes + plane]: the chess encoder; copy-free into the batch
  kNchw,  // dst[(plane * height + row) * width + col]: planar encoders (Connect Four)
};

enum class DeviceChoice : std::uint8_t {
  kAuto,  // CUDA when torch::cuda::is_available(), else CPU
  kCpu,
  kCuda,  // refused with FAILED_PRECONDITION when no CUDA device is usable
};

// Run-time choices that do not change the weights.
struct RuntimeOptions {
  DeviceChoice device = DeviceChoice::kAuto;
  // torch::set_num_threads(): process-wide, set when a Network or Trainer is created. 0 leaves
  // LibTorch's current setting alone.
  int intra_op_threads = 1;
  // Run convolutions on channels-last (NHWC) memory; see docs/nn.md for the measured difference.
  bool channels_last = true;
  // fp16 autocast (with dynamic loss scaling when training). Only ever used on CUDA.
  bool cuda_fp16 = true;
  // bf16 autocast on the CPU (forward passes and training; the loss, the softmaxes and the weights
  // stay fp32). Pays where the CPU has bf16 dot products (AVX512_BF16 or AMX); elsewhere it runs
  // without them (not measured). Services decide it with CpuHasNativeBf16() for "auto".
  bool cpu_bf16 = false;
  // Layout of the floats the encoder callback or a caller's input buffer holds.
  InputLayout input_layout = InputLayout::kNhwc;
  // Seeds the weight initialisation (torch::manual_seed) when a network is created.
  std::uint64_t seed = 0;

  Status Validate() const;
};

// Whether this CPU has bf16 dot products (x86 AVX512_BF16 or AMX-BF16, with the OS keeping the
// AVX-512 state): where RuntimeOptions::cpu_bf16 makes convolutions faster rather than slower.
bool CpuHasNativeBf16();

// A service's `cpu-bf16` key: "on", "off", or "auto" (on exactly when CpuHasNativeBf16()).
bool ResolveCpuBf16(std::string_view choice);

}  // namespace az::nn
