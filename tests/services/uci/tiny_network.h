#pragma once

// A freshly initialised tiny chess network (1 block of 8 filters) saved as a weights file: a real
// model for az-uci's tests that loads and evaluates in milliseconds.

#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/nn/network.h"

namespace az::uci::testing {

inline Status SaveTinyChessNetwork(const std::string& path, std::uint64_t version) {
  nn::NetworkOptions options;
  options.net = nn::NetConfig::ChessSmall();
  options.net.blocks = 1;
  options.net.filters = 8;
  options.net.value_hidden = 16;
  options.runtime.device = nn::DeviceChoice::kCpu;
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<nn::Network> network, nn::Network::Create(options));
  return network->SaveWeights(path, version);
}

}  // namespace az::uci::testing
