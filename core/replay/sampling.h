#pragma once

// The sampling math of prioritized replay (Schaul et al., 2016): stratified targets over the
// priority mass and importance weights. The records these produce cross process boundaries (the
// daemon sends them to the learner), so they are trivially copyable with a pinned layout.

#include <cstdint>
#include <span>
#include <type_traits>

#include "core/replay/random.h"

namespace az::replay {

// One draw of a sampled batch.
struct SampledSlot {
  std::uint64_t slot;        // index in the store, [0, capacity)
  std::uint64_t generation;  // the slot's insert generation when drawn; echo it in PriorityUpdate
  double probability;        // P(i) = p_i / sum_j p_j at the draw
  double weight;             // (N * P(i))^-beta, divided by the batch's largest, so in (0, 1]
};
static_assert(std::is_trivially_copyable_v<SampledSlot>);
static_assert(sizeof(SampledSlot) == 32 && alignof(SampledSlot) == 8);

// A measured loss for a sampled record. Applied only while the slot still holds `generation`.
struct PriorityUpdate {
  std::uint64_t slot;
  std::uint64_t generation;
  double loss;  // must be finite and >= 0; the priority becomes (loss + epsilon)^alpha
};
static_assert(std::is_trivially_copyable_v<PriorityUpdate>);
static_assert(sizeof(PriorityUpdate) == 24 && alignof(PriorityUpdate) == 8);

// A stored record, named as a draw names it: what ReplayStore::Withdraw takes.
struct RecordKey {
  std::uint64_t slot;
  std::uint64_t generation;
};
static_assert(std::is_trivially_copyable_v<RecordKey>);
static_assert(sizeof(RecordKey) == 16 && alignof(RecordKey) == 8);

// Fills targets[k] with a uniform draw from the k-th of targets.size() equal slices of [0, total):
// [floor(k * total / n), floor((k + 1) * total / n)). The slices partition [0, total) exactly, so
// every target is < total. When total < n some slices are empty and those draws fall back to a
// uniform draw over all of [0, total). total must be > 0.
void StratifiedTargets(std::uint64_t total, Rng& rng, std::span<std::uint64_t> targets);

// Sets each draw's weight to (N * P(i))^-beta normalised so that the batch's largest weight is 1,
// computed as (P_min / P(i))^beta (N cancels). beta = 0 gives exactly 1 for every draw. Every
// probability must be > 0.
void SetImportanceWeights(std::span<SampledSlot> batch, double beta);

}  // namespace az::replay
