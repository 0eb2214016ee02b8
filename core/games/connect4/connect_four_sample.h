#pragma once

// The Connect Four training sample: a DenseSample (core/games/dense_sample.h) of the 16-byte
// position record and 7 column probabilities, 80 bytes. The layout is pinned by
// tests/games/connect_four_sample_test.cc; bump the version on any change.

#include <cstdint>

#include "core/games/connect4/connect_four_position.h"
#include "core/games/dense_sample.h"

namespace az::sample {

inline constexpr std::uint32_t kConnectFourSampleMagic = 0x34435A41;  // "AZC4" little-endian
inline constexpr std::uint16_t kConnectFourSampleVersion = 1;
inline constexpr std::uint32_t kConnectFourHasOutcome = games::kDenseHasOutcome;

using ConnectFourSample = games::DenseSample<games::ConnectFourRecord, games::kConnectFourWidth,
                                             kConnectFourSampleMagic, kConnectFourSampleVersion>;
static_assert(sizeof(ConnectFourSample) == 80 && alignof(ConnectFourSample) == 8);
static_assert(std::is_trivially_copyable_v<ConnectFourSample> &&
              std::is_standard_layout_v<ConnectFourSample>);
static_assert(offsetof(ConnectFourSample, position) == 48 &&
              offsetof(ConnectFourSample, policy) == 64);

// What the search says about the root, by column (the form tests and tools find handy).
struct ConnectFourSearchSummary {
  // Visit count (or any non-negative weight; only ratios matter) per column. Full columns must have
  // weight 0; at least one weight must be positive.
  std::array<float, games::kConnectFourWidth> column_weights = {};
  std::array<float, 3> root_wdl = {0.0f, 1.0f, 0.0f};  // side to move's view, summing to 1
  float soft_value = 0.0f;                             // in [-1, 1]
};

// games::MakeDenseSample for Connect Four, with the errors it lists.
Result<ConnectFourSample> MakeConnectFourSample(const games::ConnectFourPosition& position,
                                                const ConnectFourSearchSummary& search,
                                                std::uint64_t game_id, std::uint32_t model_version);
// games::SetDenseOutcome.
void SetConnectFourOutcome(ConnectFourSample& sample, int final_value, std::uint32_t final_ply);
void SetConnectFourOutcome(std::span<ConnectFourSample> samples, int final_value,
                           std::uint32_t final_ply);
// games::ValidateDenseSample for Connect Four.
Status ValidateConnectFourSample(const ConnectFourSample& sample);
// The dense policy target: 7 floats, the probability of each column.
std::array<float, games::kConnectFourWidth> ConnectFourPolicy(const ConnectFourSample& sample);

}  // namespace az::sample
