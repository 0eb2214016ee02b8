#pragma once

// A chess evaluator backed by a network from core/nn, in process: encodes each leaf's record into
// the 122 planes, runs one forward pass per batch, and hands back the softmax over the leaf's legal
// moves and the WDL head. Models mcts::BatchEvaluator<games::Chess>. Not thread-safe (the network
// is not).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/games/chess.h"
#include "core/mcts/evaluator.h"
#include "core/nn/net_config.h"
#include "core/nn/network.h"

namespace az::search_tool {

class NetworkEvaluator {
 public:
  // Loads the weights file at `path`. NOT_FOUND / DATA_LOSS / FAILED_PRECONDITION as
  // nn::Network::FromFile; FAILED_PRECONDITION when the network is not a chess network (122 planes
  // of 8x8 in, 4672 policy outputs).
  static Result<std::unique_ptr<NetworkEvaluator>> Load(const std::string& path,
                                                        const nn::RuntimeOptions& runtime);

  // One forward pass over the batch; blocks until it is done. The network's errors are returned.
  Status Evaluate(std::span<const mcts::Leaf<games::Chess>> leaves,
                  std::span<mcts::LeafEval> evals);

  const nn::Network& network() const { return *network_; }

 private:
  explicit NetworkEvaluator(std::unique_ptr<nn::Network> network);

  std::unique_ptr<nn::Network> network_;
  std::vector<std::int32_t> offsets_;
  std::vector<std::int32_t> actions_;
  std::vector<float> priors_;
  std::vector<float> wdl_;
};

static_assert(mcts::BatchEvaluator<NetworkEvaluator, games::Chess>);

}  // namespace az::search_tool
