#pragma once

// The link between a game (core/games) and its network: the NetConfig of a game's default network,
// whether a network fits a game, and the input layout of its encoder. Torch-free.

#include "core/games/game.h"
#include "core/games/registry.h"
#include "core/nn/net_config.h"

namespace az::nn {

inline InputLayout ToInputLayout(games::InputLayout layout) {
  return layout == games::InputLayout::kNhwc ? InputLayout::kNhwc : InputLayout::kNchw;
}

// The network of `shape` for a game with this input and policy.
inline NetConfig MakeNetConfig(const games::InputShape& input, int policy_size,
                               const games::NetShape& shape) {
  NetConfig config;
  config.blocks = shape.blocks;
  config.filters = shape.filters;
  config.input_planes = input.planes;
  config.board_height = input.height;
  config.board_width = input.width;
  config.policy_size = policy_size;
  config.policy_channels = shape.policy_channels;
  config.value_channels = shape.value_channels;
  config.value_hidden = shape.value_hidden;
  config.policy_cell_plane = shape.policy_cell_plane;
  return config;
}

// The game's default network (its kNet).
inline NetConfig DefaultNetConfig(const games::GameInfo& game) {
  return MakeNetConfig(game.input, game.policy_size, game.net);
}
template <games::GameDefinition G>
NetConfig DefaultNetConfig() {
  return MakeNetConfig(G::kInput, G::kPolicySize, G::kNet);
}

// True when `net` reads the game's input and writes its policy (the tower may be any size).
inline bool NetFitsGame(const NetConfig& net, const games::GameInfo& game) {
  return net.input_planes == game.input.planes && net.board_height == game.input.height &&
         net.board_width == game.input.width && net.policy_size == game.policy_size;
}

}  // namespace az::nn
