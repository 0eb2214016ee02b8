#include "core/sample/chess_sample.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/chess/movegen.h"

namespace az::sample {
namespace {

std::string Str(double v) { return std::to_string(v); }

bool InRange(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }

}  // namespace

Status ValidateSample(const ChessSample& s) {
  if (s.magic != kSampleMagic) {
    return DataLoss("chess sample: bad magic " + std::to_string(s.magic) + " (not a sample)");
  }
  const auto error = [](const std::string& what) {
    return InvalidArgument("chess sample: " + what);
  };
  if (s.version != kSampleVersion) {
    return error("version " + std::to_string(s.version) + ", this build reads version " +
                 std::to_string(kSampleVersion));
  }
  AZ_RETURN_IF_ERROR(encoding::ValidateRecord(s.position).WithContext("chess sample"));
  if (s.num_moves < 1 || s.num_moves > kMaxPolicyEntries) {
    return error("num_moves " + std::to_string(s.num_moves) + " is not in 1.." +
                 std::to_string(kMaxPolicyEntries));
  }
  std::uint32_t sum = 0;
  for (int i = 0; i < s.num_moves; ++i) {
    const PolicyEntry e = s.policy[i];
    if (e.index >= encoding::kPolicySize) {
      return error("policy entry " + std::to_string(i) + " has index " + std::to_string(e.index) +
                   " >= " + std::to_string(encoding::kPolicySize));
    }
    if (i > 0 && e.index <= s.policy[i - 1].index) {
      return error("policy indices are not strictly increasing at entry " + std::to_string(i) +
                   " (" + std::to_string(s.policy[i - 1].index) + ", " + std::to_string(e.index) +
                   ")");
    }
    sum += e.probability;
  }
  const float total = static_cast<float>(sum) / kProbabilityScale;
  if (std::fabs(total - 1.0f) > kPolicySumTolerance) {
    return error("policy probabilities sum to " + Str(total) + ", not 1");
  }
  for (int i = s.num_moves; i < kMaxPolicyEntries; ++i) {
    if (s.policy[i].index != 0 || s.policy[i].probability != 0) {
      return error("policy entry " + std::to_string(i) + " past num_moves " +
                   std::to_string(s.num_moves) + " is not zero");
    }
  }
  if (!InRange(s.z, -1.0f, 1.0f)) return error("z " + Str(s.z) + " is not in [-1, 1]");
  float wdl_sum = 0.0f;
  for (float v : s.root_wdl) {
    if (!InRange(v, 0.0f, 1.0f)) return error("root WDL entry " + Str(v) + " is not in [0, 1]");
    wdl_sum += v;
  }
  if (std::fabs(wdl_sum - 1.0f) > kWdlSumTolerance) {
    return error("root WDL sums to " + Str(wdl_sum) + ", not 1");
  }
  if (!InRange(s.soft_value, -1.0f, 1.0f)) {
    return error("soft value " + Str(s.soft_value) + " is not in [-1, 1]");
  }
  if ((s.flags & ~(kHasOutcome | kOffPolicy)) != 0) {
    return error("unknown flags " + std::to_string(s.flags));
  }
  if ((s.flags & kHasOutcome) == 0) return error("the game outcome z was never set");
  const std::uint32_t expected_history = std::min<std::uint32_t>(s.ply, encoding::kHistoryLength);
  if (s.position.history_count != expected_history) {
    return error("history_count " + std::to_string(s.position.history_count) +
                 " does not match ply " + std::to_string(s.ply));
  }
  return Status::Ok();
}

Status CheckPolicyIsLegal(const ChessSample& sample) {
  AZ_ASSIGN_OR_RETURN(const chess::Position position, encoding::RecordToPosition(sample.position));
  const chess::MoveList moves = chess::LegalMoves(position);
  bool legal[encoding::kPolicySize] = {};
  for (const chess::Move m : moves) legal[encoding::MoveToIndex(position, m)] = true;
  for (const PolicyEntry e : Policy(sample)) {
    if (e.index >= encoding::kPolicySize || !legal[e.index]) {
      return InvalidArgument("chess sample: policy index " + std::to_string(e.index) +
                             " is not a legal move in " + position.ToFen());
    }
  }
  if (sample.num_moves != moves.size()) {
    return InvalidArgument("chess sample: the policy lists " + std::to_string(sample.num_moves) +
                           " moves, the position has " + std::to_string(moves.size()));
  }
  return Status::Ok();
}

void ExpandPolicy(const ChessSample& sample, std::span<float> out) {
  AZ_CHECK(out.size() >= static_cast<std::size_t>(encoding::kPolicySize),
           "ExpandPolicy: the output holds fewer than kPolicySize floats");
  std::fill_n(out.data(), encoding::kPolicySize, 0.0f);
  for (const PolicyEntry e : Policy(sample)) {
    AZ_CHECK(e.index < encoding::kPolicySize, "ExpandPolicy on an unvalidated sample");
    out[e.index] = Probability(e);
  }
}

}  // namespace az::sample
