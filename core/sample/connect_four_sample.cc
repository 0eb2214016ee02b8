#include "core/sample/connect_four_sample.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/sample/sample_builder.h"

namespace az::sample {
namespace {

constexpr int kWidth = games::kConnectFourWidth;
constexpr float kWdlTolerance = 1e-3f;
constexpr float kSoftValueSlack = 1e-3f;
// How far the 16-bit policy may sum from 65535 (a producer other than MakeConnectFourSample may
// round differently); the same 1% the chess sample allows.
constexpr float kPolicyTolerance = 0.01f;

std::string Str(double v) { return std::to_string(v); }

bool InRange(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }

Status CheckWdl(const std::array<float, 3>& wdl, std::string_view what) {
  float sum = 0.0f;
  for (float v : wdl) {
    if (!InRange(v, 0.0f, 1.0f + kWdlTolerance)) {
      return InvalidArgument(std::string(what) + " entry " + Str(v) + " is not in [0, 1]");
    }
    sum += v;
  }
  if (std::fabs(sum - 1.0f) > kWdlTolerance) {
    return InvalidArgument(std::string(what) + " sums to " + Str(sum) + ", not 1");
  }
  return Status::Ok();
}

}  // namespace

Result<ConnectFourSample> MakeConnectFourSample(const games::ConnectFourPosition& position,
                                                const ConnectFourSearchSummary& search,
                                                std::uint64_t game_id,
                                                std::uint32_t model_version) {
  if (position.LastMoverWon() || position.BoardFull()) {
    return FailedPrecondition("MakeConnectFourSample: the game is over in\n" + position.ToString());
  }
  double total = 0.0;
  for (int column = 0; column < kWidth; ++column) {
    const float w = search.column_weights[column];
    if (!std::isfinite(w) || w < 0.0f) {
      return InvalidArgument("MakeConnectFourSample: column " + std::to_string(column + 1) +
                             " has weight " + Str(w));
    }
    if (w > 0.0f && !position.CanPlay(column)) {
      return InvalidArgument("MakeConnectFourSample: column " + std::to_string(column + 1) +
                             " is full but has weight " + Str(w));
    }
    total += w;
  }
  if (!(total > 0.0)) return InvalidArgument("MakeConnectFourSample: every column has weight 0");
  for (float v : search.root_wdl) {
    if (!std::isfinite(v) || v < 0.0f) {
      return InvalidArgument("MakeConnectFourSample: root WDL entry " + Str(v) +
                             " is negative or not finite");
    }
  }
  const float wdl_sum = search.root_wdl[0] + search.root_wdl[1] + search.root_wdl[2];
  if (std::fabs(wdl_sum - 1.0f) > kWdlTolerance) {
    return InvalidArgument("MakeConnectFourSample: root WDL sums to " + Str(wdl_sum) + ", not 1");
  }
  const float soft = search.soft_value;
  if (!std::isfinite(soft) || std::fabs(soft) > 1.0f + kSoftValueSlack) {
    return InvalidArgument("MakeConnectFourSample: soft value " + Str(soft) + " is not in [-1, 1]");
  }

  double probabilities[kWidth];
  for (int column = 0; column < kWidth; ++column) {
    probabilities[column] = search.column_weights[column] / total;
  }
  ConnectFourSample sample;
  QuantizeProbabilities(probabilities, sample.policy);
  sample.game_id = game_id;
  sample.model_version = model_version;
  sample.ply = static_cast<std::uint32_t>(position.moves_played());
  for (int k = 0; k < 3; ++k) sample.root_wdl[k] = search.root_wdl[k] / wdl_sum;
  sample.soft_value = std::clamp(soft, -1.0f, 1.0f);
  sample.position = position.ToRecord();
  return sample;
}

void SetConnectFourOutcome(ConnectFourSample& sample, int final_value, std::uint32_t final_ply) {
  AZ_CHECK(final_value >= -1 && final_value <= 1, "SetConnectFourOutcome: value not in {-1, 0, 1}");
  AZ_CHECK(sample.ply <= final_ply, "SetConnectFourOutcome: the sample is after the game's end");
  // An int, so that a draw is +0.0f for either side, byte for byte.
  const int z = (final_ply - sample.ply) % 2 == 0 ? final_value : -final_value;
  sample.z = static_cast<float>(z);
  sample.flags |= kConnectFourHasOutcome;
}

void SetConnectFourOutcome(std::span<ConnectFourSample> samples, int final_value,
                           std::uint32_t final_ply) {
  for (ConnectFourSample& s : samples) SetConnectFourOutcome(s, final_value, final_ply);
}

Status ValidateConnectFourSample(const ConnectFourSample& s) {
  if (s.magic != kConnectFourSampleMagic) {
    return DataLoss("connect four sample: bad magic " + std::to_string(s.magic) +
                    " (not a sample)");
  }
  const auto error = [](const std::string& what) {
    return InvalidArgument("connect four sample: " + what);
  };
  if (s.version != kConnectFourSampleVersion) {
    return error("version " + std::to_string(s.version) + ", this build reads version " +
                 std::to_string(kConnectFourSampleVersion));
  }
  if (s.reserved0 != 0 || s.reserved1 != 0) return error("reserved bytes are not zero");
  Result<games::ConnectFourPosition> position = games::ConnectFourPosition::FromRecord(s.position);
  if (!position.ok()) return position.status().WithContext("connect four sample");
  if (static_cast<std::uint32_t>(position->moves_played()) != s.ply) {
    return error("ply " + std::to_string(s.ply) + " but the board holds " +
                 std::to_string(position->moves_played()) + " stones");
  }
  if (position->LastMoverWon() || position->BoardFull() ||
      games::ConnectFourPosition::HasFour(s.position.own)) {
    return error("the position is already decided: a sample needs a move to play");
  }
  std::uint32_t sum = 0;
  for (int column = 0; column < kWidth; ++column) {
    if (s.policy[column] != 0 && !position->CanPlay(column)) {
      return error("column " + std::to_string(column + 1) + " is full but has probability " +
                   Str(s.policy[column] / 65535.0));
    }
    sum += s.policy[column];
  }
  if (std::fabs(static_cast<float>(sum) / 65535.0f - 1.0f) > kPolicyTolerance) {
    return error("policy probabilities sum to " + Str(sum / 65535.0) + ", not 1");
  }
  if (!InRange(s.z, -1.0f, 1.0f)) return error("z " + Str(s.z) + " is not in [-1, 1]");
  AZ_RETURN_IF_ERROR(CheckWdl(s.root_wdl, "root WDL").WithContext("connect four sample"));
  if (!InRange(s.soft_value, -1.0f, 1.0f)) {
    return error("soft value " + Str(s.soft_value) + " is not in [-1, 1]");
  }
  if ((s.flags & ~kConnectFourHasOutcome) != 0) {
    return error("unknown flags " + std::to_string(s.flags));
  }
  if ((s.flags & kConnectFourHasOutcome) == 0) return error("the game outcome z was never set");
  return Status::Ok();
}

std::array<float, games::kConnectFourWidth> ConnectFourPolicy(const ConnectFourSample& sample) {
  std::array<float, kWidth> out;
  for (int column = 0; column < kWidth; ++column) out[column] = sample.policy[column] / 65535.0f;
  return out;
}

}  // namespace az::sample
