#include "services/arena/players.h"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "core/games/connect_four_encoder.h"
#include "core/mcts/search.h"
#include "core/nn/network.h"

namespace az::arena {
namespace {

using games::ConnectFour;
using games::ConnectFourPosition;
using games::kConnectFourWidth;

int RandomColumn(const ConnectFourPosition& position, std::uint32_t allowed, mcts::Rng& rng) {
  std::array<int, kConnectFourWidth> columns{};
  int n = 0;
  for (int c = 0; c < kConnectFourWidth; ++c) {
    if (position.CanPlay(c) && (allowed >> c & 1)) columns[n++] = c;
  }
  if (n == 0) return -1;
  return columns[rng.Next() % static_cast<std::uint64_t>(n)];
}

std::uint32_t PlayableColumns(const ConnectFourPosition& position) {
  std::uint32_t mask = 0;
  for (int c = 0; c < kConnectFourWidth; ++c) {
    if (position.CanPlay(c)) mask |= 1u << c;
  }
  return mask;
}

class RandomPlayer final : public Player {
 public:
  Result<int> Choose(const ConnectFourPosition& position, mcts::Rng& rng) override {
    return RandomColumn(position, ~0u, rng);
  }
  const std::string& name() const override { return name_; }

 private:
  std::string name_ = "random";
};

class OneStepPlayer final : public Player {
 public:
  Result<int> Choose(const ConnectFourPosition& position, mcts::Rng& rng) override {
    if (const std::uint32_t wins = WinningColumns(position)) {
      return RandomColumn(position, wins, rng);
    }
    // The opponent's wins if it were to move now: each must be blocked (two cannot both be).
    const std::uint32_t threats = OpponentWins(position);
    if (threats != 0) return RandomColumn(position, threats, rng);
    // Avoid a column whose next cell up would give the opponent a win.
    std::uint32_t safe = 0;
    for (int c = 0; c < kConnectFourWidth; ++c) {
      if (!position.CanPlay(c)) continue;
      ConnectFourPosition next = position;
      next.Play(c);
      if (WinningColumns(next) == 0) safe |= 1u << c;
    }
    return RandomColumn(position, safe != 0 ? safe : PlayableColumns(position), rng);
  }
  const std::string& name() const override { return name_; }

 private:
  // Columns where the opponent would connect four if it moved next: flip the sides by looking at
  // the record from the opponent's view.
  static std::uint32_t OpponentWins(const ConnectFourPosition& position) {
    const games::ConnectFourRecord record = position.ToRecord();
    std::uint32_t wins = 0;
    for (int c = 0; c < kConnectFourWidth; ++c) {
      if (!position.CanPlay(c)) continue;
      // The cell a stone dropped into column c lands on.
      const std::uint64_t all = record.own | record.opponent;
      const std::uint64_t column = ConnectFourPosition::ColumnMask(c);
      const std::uint64_t cell = (all & column) + ConnectFourPosition::BottomBit(c);
      if (ConnectFourPosition::HasFour(record.opponent | (cell & column))) wins |= 1u << c;
    }
    return wins;
  }
  std::string name_ = "onestep";
};

// Evaluates Connect Four leaves with a network, for the search.
class NetworkEvaluator {
 public:
  explicit NetworkEvaluator(nn::Network& network) : network_(network) {}

  Status Evaluate(std::span<const mcts::Leaf<ConnectFour>> leaves,
                  std::span<mcts::LeafEval> evals) {
    const int n = static_cast<int>(leaves.size());
    offsets_.assign(1, 0);
    actions_.clear();
    for (const auto& leaf : leaves) {
      for (std::uint16_t index : leaf.policy_indices) actions_.push_back(index);
      offsets_.push_back(static_cast<std::int32_t>(actions_.size()));
    }
    priors_.resize(actions_.size());
    wdl_.resize(static_cast<std::size_t>(n) * 3);
    nn::BatchInput input;
    input.n = n;
    input.encode = [&leaves](int i, float* dst) {
      games::EncodeConnectFour(*leaves[i].record,
                               {dst, static_cast<std::size_t>(games::kConnectFourInputSize)});
    };
    const nn::LegalMovesView legal{offsets_, actions_};
    AZ_RETURN_IF_ERROR(
        network_.Forward(input, {.priors = priors_.data(), .wdl = wdl_.data()}, &legal));
    for (int i = 0; i < n; ++i) {
      for (std::size_t m = 0; m < evals[i].priors.size(); ++m) {
        evals[i].priors[m] = priors_[offsets_[i] + m];
      }
      evals[i].SetWdl(wdl_[3 * i], wdl_[3 * i + 1], wdl_[3 * i + 2]);
    }
    return Status::Ok();
  }

 private:
  nn::Network& network_;
  std::vector<std::int32_t> offsets_;
  std::vector<std::int32_t> actions_;
  std::vector<float> priors_;
  std::vector<float> wdl_;
};

class NetworkPlayer final : public Player {
 public:
  NetworkPlayer(std::string name, std::unique_ptr<nn::Network> network, int simulations,
                mcts::Search<ConnectFour> search)
      : name_(std::move(name)),
        network_(std::move(network)),
        evaluator_(*network_),
        simulations_(simulations),
        search_(std::move(search)) {}

  Result<int> Choose(const ConnectFourPosition& position, mcts::Rng&) override {
    if (simulations_ == 0) return RawPolicy(position);
    search_.SetRoot(position);
    AZ_RETURN_IF_ERROR(search_.Run(evaluator_, simulations_));
    return static_cast<int>(search_.BestMove().column);
  }
  const std::string& name() const override { return name_; }

 private:
  Result<int> RawPolicy(const ConnectFourPosition& position) {
    std::vector<std::int32_t> actions;
    for (int c = 0; c < kConnectFourWidth; ++c) {
      if (position.CanPlay(c)) actions.push_back(c);
    }
    const std::vector<std::int32_t> offsets = {0, static_cast<std::int32_t>(actions.size())};
    std::vector<float> priors(actions.size());
    const games::ConnectFourRecord record = position.ToRecord();
    nn::BatchInput input;
    input.n = 1;
    input.encode = [&record](int, float* dst) {
      games::EncodeConnectFour(record,
                               {dst, static_cast<std::size_t>(games::kConnectFourInputSize)});
    };
    const nn::LegalMovesView legal{offsets, actions};
    AZ_RETURN_IF_ERROR(network_->Forward(input, {.priors = priors.data()}, &legal));
    return actions[std::max_element(priors.begin(), priors.end()) - priors.begin()];
  }

  std::string name_;
  std::unique_ptr<nn::Network> network_;
  NetworkEvaluator evaluator_;
  int simulations_;
  mcts::Search<ConnectFour> search_;
};

}  // namespace

std::uint32_t WinningColumns(const ConnectFourPosition& position) {
  std::uint32_t wins = 0;
  for (int c = 0; c < kConnectFourWidth; ++c) {
    if (position.CanPlay(c) && position.IsWinningMove(c)) wins |= 1u << c;
  }
  return wins;
}

Result<std::unique_ptr<Player>> MakePlayer(const std::string& spec, const PlayerOptions& options) {
  if (spec == "random") return std::unique_ptr<Player>(new RandomPlayer());
  if (spec == "onestep") return std::unique_ptr<Player>(new OneStepPlayer());
  nn::RuntimeOptions runtime;
  runtime.device = nn::DeviceChoice::kCpu;
  runtime.intra_op_threads = options.threads;
  runtime.input_layout = nn::InputLayout::kNchw;
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<nn::Network> network, nn::Network::FromFile(spec, runtime));
  const nn::NetConfig& net = network->config();
  if (net.input_planes != games::kConnectFourPlanes ||
      net.board_height != games::kConnectFourHeight ||
      net.board_width != games::kConnectFourWidth || net.policy_size != kConnectFourWidth) {
    return FailedPrecondition(spec + " is not a Connect Four network: " + net.ToString());
  }
  mcts::SearchOptions search;
  search.max_batch = 8;
  search.virtual_loss = mcts::VirtualLoss::kLoss;
  search.reuse_tree = false;
  search.max_nodes = 1u << 16;
  AZ_ASSIGN_OR_RETURN(mcts::Search<ConnectFour> made,
                      mcts::Search<ConnectFour>::Create(search, ConnectFourPosition()));
  return std::unique_ptr<Player>(
      new NetworkPlayer(spec, std::move(network), options.simulations, std::move(made)));
}

}  // namespace az::arena
