#pragma once

// The Connect Four training sample: one searched position of a self-play game, the same idea as
// the chess sample (core/sample/chess_sample.h) for the small game the pipeline first learns on.
// 80 bytes, trivially copyable, versioned:
//
//   the position record (core/games/connect_four.h: the side to move's and the opponent's stones),
//   the policy target, dense: one 16-bit fixed-point visit probability per column (probability =
//     value / 65535; exactly 0 for a full column, summing to 65535),
//   z, the game's outcome from the side to move's view (+1 win, 0 draw, -1 loss),
//   the search root's WDL and its soft (risk-adjusted) value,
//   provenance: the model version that searched it, the game id and the ply.
//
// Dense rather than sparse: 7 entries take 14 bytes, less than a count plus (index, probability)
// pairs, and the index of an entry is its column, so the learner needs no decoding.
//
// Layout (little-endian, offsets in brackets, pinned by tests/sample/connect_four_sample_test.cc;
// bump kConnectFourSampleVersion on any change).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "core/base/status.h"
#include "core/games/connect_four.h"

namespace az::sample {

inline constexpr std::uint32_t kConnectFourSampleMagic = 0x34435A41;  // "AZC4" little-endian
inline constexpr std::uint16_t kConnectFourSampleVersion = 1;

// Bits of ConnectFourSample::flags (the same meaning as the chess sample's).
inline constexpr std::uint32_t kConnectFourHasOutcome = 1;  // z was set from the finished game

struct ConnectFourSample {
  std::uint32_t magic = kConnectFourSampleMagic;      // [0]
  std::uint16_t version = kConnectFourSampleVersion;  // [4]
  std::uint16_t reserved0 = 0;                        // [6] always 0
  std::uint64_t game_id = 0;                          // [8]
  std::uint32_t model_version = 0;                    // [16] the network version the search used
  std::uint32_t ply = 0;                              // [20] stones on the board
  float z = 0.0f;                                     // [24] outcome, side to move's view
  std::array<float, 3> root_wdl = {};                 // [28] search root win/draw/loss
  float soft_value = 0.0f;                            // [40] search root risk-adjusted value
  std::uint32_t flags = 0;                            // [44] kConnectFourHasOutcome
  games::ConnectFourRecord position;                  // [48] own stones, opponent's stones
  // [64] visit probability * 65535 per column, left to right; 0 for a full column.
  std::array<std::uint16_t, games::kConnectFourWidth> policy = {};
  std::uint16_t reserved1 = 0;  // [78] always 0
};
static_assert(sizeof(ConnectFourSample) == 80 && alignof(ConnectFourSample) == 8);
static_assert(std::is_trivially_copyable_v<ConnectFourSample> &&
              std::is_standard_layout_v<ConnectFourSample>);
static_assert(offsetof(ConnectFourSample, position) == 48 &&
              offsetof(ConnectFourSample, policy) == 64);

// What the search says about the root.
struct ConnectFourSearchSummary {
  // Visit count (or any non-negative weight; only ratios matter) per column. Full columns must have
  // weight 0; at least one weight must be positive.
  std::array<float, games::kConnectFourWidth> column_weights = {};
  std::array<float, 3> root_wdl = {0.0f, 1.0f, 0.0f};  // side to move's view, summing to 1
  float soft_value = 0.0f;                             // in [-1, 1]
};

// The sample of `position`: its record, the column weights as probabilities (quantized so that
// the 16-bit values sum to exactly 65535), the root WDL (renormalised) and soft value, provenance
// and ply; z is 0 and kConnectFourHasOutcome unset until SetOutcome. Errors, with nothing built:
// FailedPrecondition when the game is already over (four in a row or a full board);
// InvalidArgument when a weight is negative or not finite, a full column has weight, every weight
// is 0, the WDL has a negative or non-finite entry or does not sum to 1 within 1e-3, or the soft
// value is not within [-1, 1] (values within 1e-3 outside are clamped).
Result<ConnectFourSample> MakeConnectFourSample(const games::ConnectFourPosition& position,
                                                const ConnectFourSearchSummary& search,
                                                std::uint64_t game_id, std::uint32_t model_version);

// Sets z from the finished game: `final_value` is the outcome for the side to move in the final
// position (-1: it lost, i.e. the last move connected four; 0: a draw), `final_ply` that position's
// ply. A sample at ply p gets final_value when p has the final position's parity, else its
// negation; marks kConnectFourHasOutcome. Checked: final_value in {-1, 0, 1}, ply <= final_ply.
void SetConnectFourOutcome(ConnectFourSample& sample, int final_value, std::uint32_t final_ply);
void SetConnectFourOutcome(std::span<ConnectFourSample> samples, int final_value,
                           std::uint32_t final_ply);

// Checks a sample that came from elsewhere (another process, a file) before anything uses it:
// magic (DataLoss), version, reserved bytes zero, the record (a reachable position:
// ConnectFourPosition::FromRecord) with ply equal to its stone count and the game not over, the
// policy zero on full columns and summing to 65535 within 1%, z, root WDL and soft value finite and
// in range, the WDL summing to 1 within 1e-3, the outcome set and no unknown flag. InvalidArgument
// naming the field otherwise. Well under a microsecond.
Status ValidateConnectFourSample(const ConnectFourSample& sample);

// The dense policy target: 7 floats, the probability of each column.
std::array<float, games::kConnectFourWidth> ConnectFourPolicy(const ConnectFourSample& sample);

}  // namespace az::sample
