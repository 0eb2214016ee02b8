#pragma once

// The chess training sample: one searched position of a self-play game, as it travels through the
// sample ring, sits in the replay store and reaches the learner. 1160 bytes, trivially copyable,
// versioned (the first sketch was 49,940 bytes of raw floats):
//
//   the compact position record (240 bytes, expands to the 122 input planes),
//   the policy target: every legal move's index and its visit probability as 16-bit fixed point
//     (probability = value / 65535), in increasing index order, so it doubles as the legal mask,
//   z, the game's outcome from the side to move's view (+1 win, 0 draw, -1 loss),
//   the search root's WDL and its soft (risk-adjusted) value,
//   provenance: the model version that searched it, the game id and the ply.
//
// Build samples with MakeSample and SetOutcome (core/sample/sample_builder.h). Bytes that come from
// another process go through ValidateSample before anything reads them.
//
// Layout (little-endian, offsets in brackets, pinned by tests/sample/chess_sample_test.cc; bump
// kSampleVersion on any change, and on a change of kRecordVersion).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "core/base/status.h"
#include "core/encoding/move_index.h"
#include "core/encoding/position_record.h"

namespace az::sample {

inline constexpr int kMaxPolicyEntries = 218;  // the most legal moves of any chess position
inline constexpr std::uint32_t kSampleMagic = 0x53435A41;  // "AZCS" in little-endian bytes
inline constexpr std::uint16_t kSampleVersion = 1;
inline constexpr float kProbabilityScale = 65535.0f;
// How far the policy's probabilities may sum from 1 (rounding by a producer other than MakeSample)
// and how far the root WDL may.
inline constexpr float kPolicySumTolerance = 0.01f;
inline constexpr float kWdlSumTolerance = 1e-3f;

// Bits of ChessSample::flags.
inline constexpr std::uint32_t kHasOutcome = 1;  // z was set from the finished game
// The move played from the position was not the search's (sample_builder.h's Provenance, from
// core/games/game.h's): z is not its value; the learner trains the value on the root WDL alone.
inline constexpr std::uint32_t kOffPolicy = 2;

struct PolicyEntry {
  std::uint16_t index;        // encoding::MoveToIndex of a legal move, < kPolicySize
  std::uint16_t probability;  // visit probability * 65535, rounded
};
static_assert(sizeof(PolicyEntry) == 4 && std::is_trivially_copyable_v<PolicyEntry>);

struct ChessSample {
  std::uint32_t magic = kSampleMagic;      // [0]
  std::uint16_t version = kSampleVersion;  // [4]
  std::uint16_t num_moves = 0;             // [6] policy entries in use, 1..218
  std::uint64_t game_id = 0;               // [8]
  std::uint32_t model_version = 0;         // [16] the network version the search used
  std::uint32_t ply = 0;                   // [20] plies played in the game before this position
  float z = 0.0f;                          // [24] outcome, side to move's view, in [-1, 1]
  std::array<float, 3> root_wdl = {};      // [28] search root win/draw/loss, side to move's view
  float soft_value = 0.0f;                 // [40] search root risk-adjusted value, in [-1, 1]
  std::uint32_t flags = 0;                 // [44] kHasOutcome, kOffPolicy
  encoding::PositionRecord position;       // [48]
  PolicyEntry policy[kMaxPolicyEntries] = {};  // [288] entries past num_moves are zero
};
static_assert(sizeof(ChessSample) == 1160 && alignof(ChessSample) == 8);
static_assert(std::is_trivially_copyable_v<ChessSample> && std::is_standard_layout_v<ChessSample>);
static_assert(offsetof(ChessSample, position) == 48 && offsetof(ChessSample, policy) == 288);

// The entries in use.
inline std::span<const PolicyEntry> Policy(const ChessSample& sample) {
  return {sample.policy, std::min<std::size_t>(sample.num_moves, kMaxPolicyEntries)};
}
inline float Probability(PolicyEntry entry) { return entry.probability / kProbabilityScale; }

// Checks a sample that came from elsewhere (another process, a file) before anything uses it:
// magic (DataLoss), version, the position record (encoding::ValidateRecord), num_moves in 1..218,
// indices below kPolicySize and strictly increasing (so no duplicates), probabilities summing to 1
// within kPolicySumTolerance, unused entries zero, z, root WDL and soft value finite and in range,
// root WDL summing to 1 within kWdlSumTolerance, the outcome set (kHasOutcome), no unknown flag,
// and history_count = min(ply, 8). InvalidArgument otherwise, naming the field. Reads nothing
// outside the struct; a few hundred nanoseconds. It does not generate moves: see
// CheckPolicyIsLegal for that.
Status ValidateSample(const ChessSample& sample);

// Checks that the policy lists exactly the legal moves of the sample's position (about a
// microsecond: rebuilds the position and generates its moves). InvalidArgument naming the first
// index that is not a legal move, or the count when moves are missing.
Status CheckPolicyIsLegal(const ChessSample& sample);

// Writes the dense policy target: kPolicySize floats to `out` (checked to hold that many), the
// probability at each listed index and 0 elsewhere. No allocation.
void ExpandPolicy(const ChessSample& sample, std::span<float> out);

}  // namespace az::sample
