#include "services/arena/players.h"

#include <algorithm>
#include <array>
#include <bit>
#include <vector>

#include "core/mcts/search.h"
#include "core/nn/network_evaluator.h"

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

class NetworkPlayer final : public Player {
 public:
  NetworkPlayer(std::string name, std::unique_ptr<nn::NetworkEvaluator<ConnectFour>> evaluator,
                int simulations, mcts::Search<ConnectFour> search)
      : name_(std::move(name)),
        evaluator_(std::move(evaluator)),
        simulations_(simulations),
        search_(std::move(search)) {}

  Result<int> Choose(const ConnectFourPosition& position, mcts::Rng&) override {
    if (simulations_ == 0) return RawPolicy(position);
    search_.SetRoot(position);
    AZ_RETURN_IF_ERROR(search_.Run(*evaluator_, simulations_));
    return static_cast<int>(search_.BestMove().column);
  }
  const std::string& name() const override { return name_; }

 private:
  Result<int> RawPolicy(const ConnectFourPosition& position) {
    AZ_ASSIGN_OR_RETURN(auto choice, evaluator_->BestRawMove(position));
    return static_cast<int>(choice.move.column);
  }

  std::string name_;
  std::unique_ptr<nn::NetworkEvaluator<ConnectFour>> evaluator_;
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
  AZ_ASSIGN_OR_RETURN(auto evaluator, nn::NetworkEvaluator<ConnectFour>::Load(spec, runtime));
  mcts::SearchOptions search;
  search.max_batch = 8;
  search.virtual_loss = mcts::VirtualLoss::kLoss;
  search.reuse_tree = false;
  search.max_nodes = 1u << 16;
  AZ_ASSIGN_OR_RETURN(mcts::Search<ConnectFour> made,
                      mcts::Search<ConnectFour>::Create(search, ConnectFourPosition()));
  return std::unique_ptr<Player>(
      new NetworkPlayer(spec, std::move(evaluator), options.simulations, std::move(made)));
}

}  // namespace az::arena
