#pragma once

// Torch-free views of what goes into a training batch or an evaluation batch: sparse policy
// targets, value targets, importance weights, legal-move lists and the encoder callback that writes
// a position's input floats straight into the batch tensor's memory.

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>

namespace az::nn {

// One entry of a sparse policy target: an action index and its visit count or probability.
struct PolicyEntry {
  std::int32_t action;
  float weight;
};
static_assert(std::is_trivially_copyable_v<PolicyEntry> && sizeof(PolicyEntry) == 8);

// Value targets are (win, draw, loss) probabilities from the side to move's view.
using Wdl = std::array<float, 3>;

// z in [-1, 1] from the side to move's view: 1 -> (1, 0, 0), 0 -> (0, 1, 0), -1 -> (0, 0, 1);
// values in between split linearly (0.5 -> (0.5, 0.5, 0)).
Wdl WdlFromOutcome(float z);

struct TrainSample {
  // Visit counts or probabilities (>= 0, at least one > 0), normalised to sum 1 when the batch is
  // built. Actions must lie in [0, policy_size). Up to a few hundred entries (218 in chess).
  std::span<const PolicyEntry> policy;
  // Target (win, draw, loss), each >= 0, summing to 1 (within 1e-3).
  Wdl wdl = {0.0f, 1.0f, 0.0f};
  // The prioritized-replay importance weight, > 0 and finite (1 for uniform replay).
  float importance_weight = 1.0f;
};

// Writes position `i` of a batch into `dst`: NetConfig::InputFloatsPerPosition() floats in the
// layout RuntimeOptions::input_layout names. `dst` points into the batch tensor itself.
using EncodeFn = std::function<void(int i, float* dst)>;

// The legal actions of each position of a batch in CSR form: position i's legal actions are
// actions[offsets[i] .. offsets[i + 1]); offsets has n + 1 entries, starting at 0, non-decreasing.
struct LegalMovesView {
  std::span<const std::int32_t> offsets;
  std::span<const std::int32_t> actions;
};

}  // namespace az::nn
