#pragma once

// The training sample of a small board game whose policy index is a cell or column (Connect Four,
// tic-tac-toe): one searched position of a self-play game with a dense policy target, the same
// idea as the chess sample (core/sample/chess_sample.h) without its sparse list. Trivially
// copyable, versioned, little-endian:
//
//   [0]  magic, version, reserved0 (0)
//   [8]  game_id, [16] model_version (the network that searched it), [20] ply (stones on board)
//   [24] z, the game's outcome from the side to move's view (+1 win, 0 draw, -1 loss)
//   [28] the search root's WDL, [40] its soft (risk-adjusted) value, [44] flags (kDenseHasOutcome,
//   kDenseOffPolicy)
//   [48] the game's position record
//   then one 16-bit fixed-point visit probability per action (value / 65535; 0 for an illegal
//   action; summing to 65535), then zero bytes up to a multiple of 8 (at least 2).
//
// Dense rather than sparse: a handful of entries take fewer bytes than a count plus (index,
// probability) pairs, and an entry's index is its action, so the learner needs no decoding.
//
// The functions are templates over the game G (a GameDefinition whose Sample is a DenseSample)
// that also provides:
//   static constexpr std::string_view kSampleName;     // "connect four sample": error prefix
//   static Result<State> StateFromRecord(const Record&);  // InvalidArgument: not reachable
//   static bool IsActionLegal(const State&, int action);
//   static Record TransformRecord(const Record&, int symmetry);
//   static int TransformAction(int action, int symmetry);

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "core/base/check.h"
#include "core/base/status.h"
#include "core/games/game.h"
#include "core/sample/sample_builder.h"

namespace az::games {

inline constexpr std::uint32_t kDenseHasOutcome = 1;  // z was set from the finished game
// The move played from the position was not the search's (game.h's Provenance): z is
// not its value; the learner trains the value on the root WDL alone.
inline constexpr std::uint32_t kDenseOffPolicy = 2;

template <typename Record, int kActions, std::uint32_t kMagic, std::uint16_t kVersion>
struct DenseSample {
  static constexpr std::uint32_t kSampleMagic = kMagic;
  static constexpr std::uint16_t kSampleVersion = kVersion;
  static constexpr int kNumActions = kActions;
  static constexpr std::size_t kPolicyEnd = 48 + sizeof(Record) + 2 * kActions;
  static constexpr std::size_t kTailBytes = (kPolicyEnd + 2 + 7) / 8 * 8 - kPolicyEnd;

  std::uint32_t magic = kMagic;        // [0]
  std::uint16_t version = kVersion;    // [4]
  std::uint16_t reserved0 = 0;         // [6] always 0
  std::uint64_t game_id = 0;           // [8]
  std::uint32_t model_version = 0;     // [16] the network version the search used
  std::uint32_t ply = 0;               // [20] stones on the board
  float z = 0.0f;                      // [24] outcome, side to move's view
  std::array<float, 3> root_wdl = {};  // [28] search root win/draw/loss
  float soft_value = 0.0f;             // [40] search root risk-adjusted value
  std::uint32_t flags = 0;             // [44] kDenseHasOutcome, kDenseOffPolicy
  Record position;                     // [48]
  // Visit probability * 65535 per action; 0 for an illegal one.
  std::array<std::uint16_t, kActions> policy = {};
  std::array<std::uint8_t, kTailBytes> reserved1 = {};  // always 0
};

namespace dense_internal {

inline constexpr float kWdlTolerance = 1e-3f;
inline constexpr float kSoftValueSlack = 1e-3f;
// How far the 16-bit policy may sum from 65535 (a producer other than MakeDenseSample may round
// differently); the same 1% the chess sample allows.
inline constexpr float kPolicyTolerance = 0.01f;

inline std::string Str(double v) { return std::to_string(v); }
inline bool InRange(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }

inline Status CheckWdl(const std::array<float, 3>& wdl, std::string_view what) {
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

}  // namespace dense_internal

// The sample of `state`: its record, the move weights as probabilities (quantized so that the
// 16-bit values sum to exactly 65535), the root WDL (renormalised) and soft value, provenance and
// ply; z is 0 and kDenseHasOutcome unset until SetDenseOutcome. Errors, with nothing built:
// FailedPrecondition when the game is already over; InvalidArgument when a weight is negative or
// not finite, a move is illegal, every weight is 0, the WDL has a negative or non-finite entry or
// does not sum to 1 within 1e-3, or the soft value is not within [-1, 1] (values within 1e-3
// outside are clamped).
template <typename G>
Result<typename G::Sample> MakeDenseSample(const typename G::State& state,
                                           const SearchSummary<typename G::Move>& search,
                                           Provenance provenance) {
  using namespace dense_internal;
  using Sample = typename G::Sample;
  constexpr int kActions = Sample::kNumActions;
  const std::string who = std::string(G::kSampleName) + ": ";
  typename G::Move moves[G::kMaxMoves];
  if (IsTerminal(G::Outcome(state, G::LegalMoves(state, moves)))) {
    return FailedPrecondition(who + "the game is over in\n" + G::PositionText(state));
  }
  std::array<double, kActions> weights = {};
  double total = 0.0;
  for (const MoveWeight<typename G::Move>& entry : search.moves) {
    const int action = G::PolicyIndex(state, entry.move);
    if (!std::isfinite(entry.weight) || entry.weight < 0.0f) {
      return InvalidArgument(who + "move " + G::MoveText(state, entry.move) + " has weight " +
                             Str(entry.weight));
    }
    if (entry.weight > 0.0f && !G::IsActionLegal(state, action)) {
      return InvalidArgument(who + "move " + G::MoveText(state, entry.move) +
                             " is illegal but has weight " + Str(entry.weight));
    }
    weights[action] += entry.weight;
    total += entry.weight;
  }
  if (!(total > 0.0)) return InvalidArgument(who + "every move has weight 0");
  for (float v : search.root_wdl) {
    if (!std::isfinite(v) || v < 0.0f) {
      return InvalidArgument(who + "root WDL entry " + Str(v) + " is negative or not finite");
    }
  }
  const float wdl_sum = search.root_wdl[0] + search.root_wdl[1] + search.root_wdl[2];
  if (std::fabs(wdl_sum - 1.0f) > kWdlTolerance) {
    return InvalidArgument(who + "root WDL sums to " + Str(wdl_sum) + ", not 1");
  }
  const float soft = search.soft_value;
  if (!std::isfinite(soft) || std::fabs(soft) > 1.0f + kSoftValueSlack) {
    return InvalidArgument(who + "soft value " + Str(soft) + " is not in [-1, 1]");
  }
  for (double& w : weights) w /= total;
  Sample sample;
  sample::QuantizeProbabilities(weights, sample.policy);
  sample.game_id = provenance.game_id;
  sample.model_version = provenance.model_version;
  if (provenance.off_policy) sample.flags |= kDenseOffPolicy;
  sample.ply = static_cast<std::uint32_t>(G::Ply(state));
  for (int k = 0; k < 3; ++k) sample.root_wdl[k] = search.root_wdl[k] / wdl_sum;
  sample.soft_value = std::clamp(soft, -1.0f, 1.0f);
  sample.position = G::ToRecord(state);
  return sample;
}

// Sets z from the finished game: `final_value` is the outcome for the side to move in the final
// position (-1: it lost; 0: a draw), `final_ply` that position's ply. A sample at ply p gets
// final_value when p has the final position's parity, else its negation; marks kDenseHasOutcome.
// Checked: final_value in {-1, 0, 1}, ply <= final_ply.
template <typename Sample>
void SetDenseOutcome(std::span<Sample> samples, int final_value, std::uint32_t final_ply) {
  AZ_CHECK(final_value >= -1 && final_value <= 1, "SetDenseOutcome: value not in {-1, 0, 1}");
  for (Sample& sample : samples) {
    AZ_CHECK(sample.ply <= final_ply, "SetDenseOutcome: the sample is after the game's end");
    // An int, so that a draw is +0.0f for either side, byte for byte.
    const int z = (final_ply - sample.ply) % 2 == 0 ? final_value : -final_value;
    sample.z = static_cast<float>(z);
    sample.flags |= kDenseHasOutcome;
  }
}

// Checks a sample that came from elsewhere (another process, a file) before anything uses it:
// magic (DataLoss), version, reserved bytes zero, the record (a reachable position) with ply equal
// to its stone count and the game not over, the policy zero on illegal actions and summing to 65535
// within 1%, z, root WDL and soft value finite and in range, the WDL summing to 1 within 1e-3, the
// outcome set and no unknown flag. InvalidArgument naming the field otherwise. Well under a
// microsecond.
template <typename G>
Status ValidateDenseSample(const typename G::Sample& s) {
  using namespace dense_internal;
  using Sample = typename G::Sample;
  const std::string name(G::kSampleName);
  if (s.magic != Sample::kSampleMagic) {
    return DataLoss(name + ": bad magic " + std::to_string(s.magic) + " (not a sample)");
  }
  const auto error = [&name](const std::string& what) {
    return InvalidArgument(name + ": " + what);
  };
  if (s.version != Sample::kSampleVersion) {
    return error("version " + std::to_string(s.version) + ", this build reads version " +
                 std::to_string(Sample::kSampleVersion));
  }
  if (s.reserved0 != 0 ||
      std::any_of(s.reserved1.begin(), s.reserved1.end(), [](std::uint8_t b) { return b != 0; })) {
    return error("reserved bytes are not zero");
  }
  Result<typename G::State> state = G::StateFromRecord(s.position);
  if (!state.ok()) return state.status().WithContext(name);
  if (static_cast<std::uint32_t>(G::Ply(*state)) != s.ply) {
    return error("ply " + std::to_string(s.ply) + " but the board holds " +
                 std::to_string(G::Ply(*state)) + " stones");
  }
  typename G::Move moves[G::kMaxMoves];
  if (IsTerminal(G::Outcome(*state, G::LegalMoves(*state, moves)))) {
    return error("the position is already decided: a sample needs a move to play");
  }
  std::uint32_t sum = 0;
  for (int action = 0; action < Sample::kNumActions; ++action) {
    if (s.policy[action] != 0 && !G::IsActionLegal(*state, action)) {
      return error("action " + std::to_string(action + 1) + " is illegal but has probability " +
                   Str(s.policy[action] / 65535.0));
    }
    sum += s.policy[action];
  }
  if (std::fabs(static_cast<float>(sum) / 65535.0f - 1.0f) > kPolicyTolerance) {
    return error("policy probabilities sum to " + Str(sum / 65535.0) + ", not 1");
  }
  if (!InRange(s.z, -1.0f, 1.0f)) return error("z " + Str(s.z) + " is not in [-1, 1]");
  AZ_RETURN_IF_ERROR(CheckWdl(s.root_wdl, "root WDL").WithContext(name));
  if (!InRange(s.soft_value, -1.0f, 1.0f)) {
    return error("soft value " + Str(s.soft_value) + " is not in [-1, 1]");
  }
  if ((s.flags & ~(kDenseHasOutcome | kDenseOffPolicy)) != 0) {
    return error("unknown flags " + std::to_string(s.flags));
  }
  if ((s.flags & kDenseHasOutcome) == 0) return error("the game outcome z was never set");
  return Status::Ok();
}

// The policy target: the actions with a positive probability.
template <typename Sample>
void AppendDensePolicy(const Sample& s, std::vector<PolicyTarget>& out) {
  for (int action = 0; action < Sample::kNumActions; ++action) {
    if (s.policy[action] > 0) out.push_back({action, s.policy[action] / 65535.0f});
  }
}

// The sample under a symmetry of the board: record and policy mapped together, the rest kept.
template <typename G>
typename G::Sample TransformDenseSample(const typename G::Sample& s, int symmetry) {
  AZ_CHECK(symmetry >= 0 && symmetry < G::kSymmetries, "TransformDenseSample: bad symmetry");
  typename G::Sample out = s;
  out.position = G::TransformRecord(s.position, symmetry);
  for (int action = 0; action < G::Sample::kNumActions; ++action) {
    out.policy[G::TransformAction(action, symmetry)] = s.policy[action];
  }
  return out;
}

// The sample members of a GameDefinition whose Sample is a DenseSample, written once: a game
// inherits them (struct MyGame : DenseSampleGame<MyGame, MySample> { ... }) and adds the board
// queries listed at the top of this file. Templates where G's own types appear, so that the base
// can be instantiated while G is still being defined.
template <typename G, typename SampleT>
struct DenseSampleGame {
  using Sample = SampleT;

  template <typename State, typename Summary>
  static Result<Sample> MakeSample(const State& state, const Summary& search,
                                   Provenance provenance) {
    return MakeDenseSample<G>(state, search, provenance);
  }
  template <typename State>
  static void SetOutcome(std::span<Sample> samples, const State& final_state, int final_value) {
    SetDenseOutcome(samples, final_value, static_cast<std::uint32_t>(G::Ply(final_state)));
  }
  static Status ValidateSample(const Sample& s) { return ValidateDenseSample<G>(s); }
  static std::uint32_t SampleModelVersion(const Sample& s) { return s.model_version; }
  static float SampleZ(const Sample& s) { return s.z; }
  static void SetSampleZ(Sample& s, float z) { s.z = std::clamp(z, -1.0f, 1.0f); }
  static std::array<float, 3> SampleRootWdl(const Sample& s) { return s.root_wdl; }
  static bool SampleOffPolicy(const Sample& s) { return (s.flags & kDenseOffPolicy) != 0; }
  static const auto& SampleRecord(const Sample& s) { return s.position; }
  static void AppendPolicy(const Sample& s, std::vector<PolicyTarget>& out) {
    AppendDensePolicy(s, out);
  }
  static Sample TransformSample(const Sample& s, int symmetry) {
    return TransformDenseSample<G>(s, symmetry);
  }
};

}  // namespace az::games
