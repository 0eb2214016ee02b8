#include "core/sample/sample_builder.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/chess/movegen.h"
#include "core/chess/uci.h"
#include "core/encoding/move_index.h"
#include "core/encoding/position_record.h"

namespace az::sample {
namespace {

constexpr std::uint32_t kScale = 65535;
constexpr float kSoftValueSlack = 1e-3f;

Status CheckRootValues(const SearchSummary& search) {
  float sum = 0.0f;
  for (float v : search.root_wdl) {
    if (!std::isfinite(v) || v < 0.0f) {
      return InvalidArgument("MakeSample: root WDL entry " + std::to_string(v) +
                             " is negative or not finite");
    }
    sum += v;
  }
  if (std::fabs(sum - 1.0f) > kWdlSumTolerance) {
    return InvalidArgument("MakeSample: root WDL sums to " + std::to_string(sum) + ", not 1");
  }
  const float v = search.soft_value;
  if (!std::isfinite(v) || std::fabs(v) > 1.0f + kSoftValueSlack) {
    return InvalidArgument("MakeSample: soft value " + std::to_string(v) + " is not in [-1, 1]");
  }
  return Status::Ok();
}

}  // namespace

void QuantizeProbabilities(std::span<const double> probabilities, std::span<std::uint16_t> out) {
  const int n = static_cast<int>(probabilities.size());
  AZ_CHECK(n <= kMaxPolicyEntries && out.size() >= probabilities.size(),
           "QuantizeProbabilities: too many entries or too small an output");
  if (n == 0) return;
  double fraction[kMaxPolicyEntries];
  std::uint32_t value[kMaxPolicyEntries];
  std::int64_t assigned = 0;
  for (int i = 0; i < n; ++i) {
    const double x = std::clamp(probabilities[i], 0.0, 1.0) * kScale;
    value[i] = static_cast<std::uint32_t>(std::floor(x));
    fraction[i] = x - value[i];
    assigned += value[i];
  }
  // Largest remainder: the units still missing go to the entries that lost the most by rounding
  // down (ties to the lower position), so the values sum to exactly 65535.
  int order[kMaxPolicyEntries];
  std::iota(order, order + n, 0);
  std::stable_sort(order, order + n, [&](int a, int b) { return fraction[a] > fraction[b]; });
  std::int64_t missing = static_cast<std::int64_t>(kScale) - assigned;
  for (int k = 0; missing > 0; k = (k + 1) % n, --missing) ++value[order[k]];
  for (int k = n - 1; missing < 0; k = (k + n - 1) % n) {
    if (value[order[k]] > 0) {
      --value[order[k]];
      ++missing;
    }
  }
  for (int i = 0; i < n; ++i) out[i] = static_cast<std::uint16_t>(std::min(value[i], kScale));
}

Result<ChessSample> MakeSample(const chess::Game& game, const SearchSummary& search,
                               const Provenance& provenance) {
  const chess::Position& position = game.position();
  const chess::MoveList moves = chess::LegalMoves(position);
  if (moves.empty()) {
    return FailedPrecondition("MakeSample: the position has no legal move: " + position.ToFen());
  }
  AZ_RETURN_IF_ERROR(CheckRootValues(search));

  // Weights per legal move, in generator order.
  float weight[chess::kMaxMoves] = {};
  bool listed[chess::kMaxMoves] = {};
  double total = 0.0;
  for (const MoveWeight& mw : search.moves) {
    const chess::Move* it = std::find(moves.begin(), moves.end(), mw.move);
    if (it == moves.end()) {
      return InvalidArgument("MakeSample: " + chess::MoveToUci(mw.move) + " is not legal in " +
                             position.ToFen());
    }
    const int i = static_cast<int>(it - moves.begin());
    if (listed[i]) {
      return InvalidArgument("MakeSample: " + chess::MoveToUci(mw.move) + " is listed twice");
    }
    if (!std::isfinite(mw.weight) || mw.weight < 0.0f) {
      return InvalidArgument("MakeSample: " + chess::MoveToUci(mw.move) + " has weight " +
                             std::to_string(mw.weight));
    }
    listed[i] = true;
    weight[i] = mw.weight;
    total += mw.weight;
  }
  if (!(total > 0.0)) return InvalidArgument("MakeSample: every move has weight 0");

  // Entries in increasing index order.
  struct Slot {
    std::uint16_t index;
    double probability;
  };
  Slot slots[chess::kMaxMoves];
  const int n = moves.size();
  for (int i = 0; i < n; ++i) {
    slots[i] = {static_cast<std::uint16_t>(encoding::MoveToIndex(position, moves[i])),
                weight[i] / total};
  }
  std::sort(slots, slots + n, [](const Slot& a, const Slot& b) { return a.index < b.index; });
  double probabilities[kMaxPolicyEntries];
  std::uint16_t quantized[kMaxPolicyEntries];
  for (int i = 0; i < n; ++i) probabilities[i] = slots[i].probability;
  QuantizeProbabilities(std::span<const double>(probabilities, n),
                        std::span<std::uint16_t>(quantized, n));

  ChessSample sample;
  sample.num_moves = static_cast<std::uint16_t>(n);
  sample.game_id = provenance.game_id;
  sample.model_version = provenance.model_version;
  if (provenance.off_policy) sample.flags |= kOffPolicy;
  sample.ply = static_cast<std::uint32_t>(game.ply());
  const float wdl_sum = search.root_wdl[0] + search.root_wdl[1] + search.root_wdl[2];
  for (int k = 0; k < 3; ++k) sample.root_wdl[k] = search.root_wdl[k] / wdl_sum;
  sample.soft_value = std::clamp(search.soft_value, -1.0f, 1.0f);
  sample.position = encoding::MakeRecord(game);
  for (int i = 0; i < n; ++i) sample.policy[i] = {slots[i].index, quantized[i]};
  return sample;
}

void SetOutcome(ChessSample& sample, chess::GameResult result) {
  AZ_CHECK(result != chess::GameResult::kOngoing, "SetOutcome: the game has not ended");
  int white_view = 0;  // an int, so that a draw is +0.0f for either side, byte for byte
  if (result == chess::GameResult::kWhiteWins) white_view = 1;
  if (result == chess::GameResult::kBlackWins) white_view = -1;
  sample.z =
      static_cast<float>(sample.position.side_to_move == chess::kWhite ? white_view : -white_view);
  sample.flags |= kHasOutcome;
}

void SetOutcome(std::span<ChessSample> samples, chess::GameResult result) {
  for (ChessSample& s : samples) SetOutcome(s, result);
}

}  // namespace az::sample
