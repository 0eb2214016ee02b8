#pragma once

// The one adapter from a network (core/nn's torch-free Network facade) to the search: encodes each
// leaf's record with the game's encoder straight into the batch tensor, runs one forward pass per
// batch, and hands back the softmax over each leaf's legal moves and the WDL head. Models
// mcts::BatchEvaluator<G>; the evaluator service, az-search, az-arena and az-analyse all use it.
// Not thread-safe (the network is not): one per thread.
//
//   AZ_ASSIGN_OR_RETURN(auto evaluator, nn::NetworkEvaluator<games::ConnectFour>::Load(path, {}));
//   mcts::Search<games::ConnectFour> search(options);
//   search.Run(state, 400, *evaluator);

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/base/status.h"
#include "core/games/game.h"
#include "core/games/registry.h"
#include "core/mcts/evaluator.h"
#include "core/nn/game_network.h"
#include "core/nn/network.h"

namespace az::nn {

// One forward pass of `network` over `records` of game G, each encoded with G::Encode straight into
// the batch tensor; writes the softmax over each position's legal policy indices (`legal`, CSR)
// into `priors` (legal.actions.size() floats) and the WDL into `wdl` (3 per record). The network
// must have been created with G's input layout. The evaluator service's batches come this way;
// NetworkEvaluator below is the same for a search's leaves.
template <games::GameDefinition G>
Status ForwardRecords(Network& network, std::span<const typename G::Record> records,
                      const LegalMovesView& legal, float* priors, float* wdl) {
  BatchInput input;
  input.n = static_cast<int>(records.size());
  input.encode = [records](int i, float* dst) {
    G::Encode(records[static_cast<std::size_t>(i)], std::span<float>(dst, G::kInput.floats()));
  };
  ForwardOutputs outputs;
  outputs.priors = priors;
  outputs.wdl = wdl;
  return network.Forward(input, outputs, &legal);
}

template <games::GameDefinition G>
class NetworkEvaluator {
 public:
  // Loads the weights file at `path`. NOT_FOUND / DATA_LOSS / FAILED_PRECONDITION as
  // Network::FromFile; FAILED_PRECONDITION when the network does not fit the game.
  static Result<std::unique_ptr<NetworkEvaluator>> Load(const std::string& path,
                                                        const RuntimeOptions& runtime) {
    RuntimeOptions options = runtime;
    options.input_layout = ToInputLayout(G::kInput.layout);
    AZ_ASSIGN_OR_RETURN(std::unique_ptr<Network> network, Network::FromFile(path, options));
    return Wrap(std::move(network), path);
  }

  // A freshly initialised network of the game's default shape (seeded by runtime.seed): what a
  // run starts from, and a stand-in for "no model yet".
  static Result<std::unique_ptr<NetworkEvaluator>> Fresh(const RuntimeOptions& runtime) {
    RuntimeOptions options = runtime;
    options.input_layout = ToInputLayout(G::kInput.layout);
    AZ_ASSIGN_OR_RETURN(std::unique_ptr<Network> network,
                        Network::Create({DefaultNetConfig<G>(), options}));
    return Wrap(std::move(network), "a fresh network");
  }

  // One forward pass over the batch; blocks until it is done. The network's errors are returned.
  Status Evaluate(std::span<const mcts::Leaf<G>> leaves, std::span<mcts::LeafEval> evals) {
    AZ_CHECK(leaves.size() == evals.size(), "NetworkEvaluator: leaves and evals differ in size");
    const int n = static_cast<int>(leaves.size());
    offsets_.assign(1, 0);
    actions_.clear();
    for (const mcts::Leaf<G>& leaf : leaves) {
      for (std::uint16_t index : leaf.policy_indices) actions_.push_back(index);
      offsets_.push_back(static_cast<std::int32_t>(actions_.size()));
    }
    priors_.resize(actions_.size());
    wdl_.resize(static_cast<std::size_t>(n) * 3);
    records_.clear();
    for (const mcts::Leaf<G>& leaf : leaves) records_.push_back(*leaf.record);
    const LegalMovesView legal{offsets_, actions_};
    AZ_RETURN_IF_ERROR(
        ForwardRecords<G>(*network_, records_, legal, priors_.data(), wdl_.data()));
    for (int i = 0; i < n; ++i) {
      std::span<float> priors = evals[i].priors;
      for (std::size_t m = 0; m < priors.size(); ++m) priors[m] = priors_[offsets_[i] + m];
      evals[i].SetWdl(wdl_[3 * i], wdl_[3 * i + 1], wdl_[3 * i + 2]);
    }
    return Status::Ok();
  }

  // The raw policy's choice in `state` (a state where the game goes on): the legal move with the
  // highest prior, with that prior and the network's value (P(win) - P(loss)) for the side to move.
  struct RawChoice {
    typename G::Move move;
    float prior = 0;
    float value = 0;
  };
  Result<RawChoice> BestRawMove(const typename G::State& state) {
    typename G::Move moves[G::kMaxMoves];
    const int count = G::LegalMoves(state, moves);
    if (count == 0) return FailedPrecondition("BestRawMove: no legal move");
    std::uint16_t indices[G::kMaxMoves];
    for (int i = 0; i < count; ++i) {
      indices[i] = static_cast<std::uint16_t>(G::PolicyIndex(state, moves[i]));
    }
    const typename G::Record record = G::ToRecord(state);
    const mcts::Leaf<G> leaf{&record, {moves, static_cast<std::size_t>(count)},
                             {indices, static_cast<std::size_t>(count)}};
    std::vector<float> priors(static_cast<std::size_t>(count));
    std::array<float, 3> wdl{};
    mcts::LeafEval eval{priors, std::span<float, 3>(wdl)};
    AZ_RETURN_IF_ERROR(Evaluate({&leaf, 1}, {&eval, 1}));
    int best = 0;
    for (int i = 1; i < count; ++i) {
      if (priors[i] > priors[best]) best = i;
    }
    return RawChoice{moves[best], priors[best], wdl[0] - wdl[2]};
  }

  Network& network() { return *network_; }
  const Network& network() const { return *network_; }

 private:
  explicit NetworkEvaluator(std::unique_ptr<Network> network) : network_(std::move(network)) {}

  static Result<std::unique_ptr<NetworkEvaluator>> Wrap(std::unique_ptr<Network> network,
                                                        const std::string& what) {
    const GameInfo* game = games::FindGameById(G::kId);
    AZ_CHECK(game != nullptr, "NetworkEvaluator: unregistered game");
    if (!NetFitsGame(network->config(), *game)) {
      return FailedPrecondition(what + " is not a " + std::string(G::kName) +
                                " network: " + network->config().ToString());
    }
    return std::unique_ptr<NetworkEvaluator>(new NetworkEvaluator(std::move(network)));
  }

  using GameInfo = games::GameInfo;
  std::unique_ptr<Network> network_;
  std::vector<typename G::Record> records_;
  std::vector<std::int32_t> offsets_;
  std::vector<std::int32_t> actions_;
  std::vector<float> priors_;
  std::vector<float> wdl_;
};

}  // namespace az::nn
