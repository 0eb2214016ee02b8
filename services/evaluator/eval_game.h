#pragma once

// What the evaluator needs to know about a game: its network's input (planes, board, policy size,
// the encoder's layout), the default network for a fresh start, and the encoder that writes a
// record straight into the batch tensor.

#include <span>
#include <string>

#include "core/base/status.h"
#include "core/encoding/move_index.h"
#include "core/encoding/planes.h"
#include "core/games/chess.h"
#include "core/games/connect_four.h"
#include "core/games/connect_four_encoder.h"
#include "core/nn/net_config.h"

namespace az::evaluator {

template <typename G>
struct EvalGame;

template <>
struct EvalGame<games::Chess> {
  static constexpr nn::InputLayout kInputLayout = nn::InputLayout::kNhwc;
  static nn::NetConfig DefaultNet() { return nn::NetConfig::ChessSmall(); }
  static bool Fits(const nn::NetConfig& net) {
    return net.input_planes == encoding::kNumPlanes && net.board_height == 8 &&
           net.board_width == 8 && net.policy_size == encoding::kPolicySize;
  }
  static void Encode(const encoding::PositionRecord& record, float* dst) {
    encoding::EncodePlanes(record, std::span<float>(dst, encoding::kInputFloats));
  }
};

template <>
struct EvalGame<games::ConnectFour> {
  static constexpr nn::InputLayout kInputLayout = nn::InputLayout::kNchw;
  static nn::NetConfig DefaultNet() { return nn::NetConfig::ConnectFour(); }
  static bool Fits(const nn::NetConfig& net) {
    return net.input_planes == games::kConnectFourPlanes &&
           net.board_height == games::kConnectFourHeight &&
           net.board_width == games::kConnectFourWidth &&
           net.policy_size == games::kConnectFourWidth;
  }
  static void Encode(const games::ConnectFourRecord& record, float* dst) {
    games::EncodeConnectFour(record, std::span<float>(dst, games::kConnectFourInputSize));
  }
};

}  // namespace az::evaluator
