#pragma once

// Building training samples in a self-play worker: MakeSample when a move has been searched (the
// outcome is not known yet), SetOutcome on the game's samples once it has ended.
//
//   std::vector<ChessSample> samples;
//   ... after each search:
//   AZ_ASSIGN_OR_RETURN(ChessSample s, MakeSample(game, {root_moves, root_wdl, soft_value},
//                                                {game_id, model_version}));
//   samples.push_back(s);
//   ... when game.Outcome() is terminal:
//   SetOutcome(samples, game.Outcome().result);

#include <array>
#include <cstdint>
#include <span>

#include "core/base/status.h"
#include "core/chess/game.h"
#include "core/chess/types.h"
#include "core/sample/chess_sample.h"

namespace az::sample {

// One root move and its search weight: a visit count or a probability (any scale; only ratios
// matter), >= 0.
struct MoveWeight {
  chess::Move move;
  float weight = 0.0f;
};

// What the search says about the root.
struct SearchSummary {
  // Root moves with their weights. Legal moves left out get probability 0; every move listed must
  // be legal and listed once.
  std::span<const MoveWeight> moves;
  std::array<float, 3> root_wdl = {0.0f, 1.0f, 0.0f};  // side to move's view, summing to 1
  float soft_value = 0.0f;                             // in [-1, 1]
};

struct Provenance {
  std::uint64_t game_id = 0;
  std::uint32_t model_version = 0;
  bool off_policy = false;  // games::Provenance's: sets kOffPolicy
};

// The sample of the game's current position: its record, every legal move with its probability
// (weight / total weight, quantized so that the 16-bit values sum to exactly 65535), the root WDL
// (renormalised) and soft value, provenance and ply; z is 0 and kHasOutcome unset until
// SetOutcome. Errors, with nothing built: FailedPrecondition when the position has no legal move;
// InvalidArgument when a listed move is not legal or is listed twice, a weight is negative or not
// finite, all weights are 0, the WDL has a negative or non-finite entry or does not sum to 1 within
// kWdlSumTolerance, or the soft value is not within [-1, 1] (values within 1e-3 outside are
// clamped). No allocation.
Result<ChessSample> MakeSample(const chess::Game& game, const SearchSummary& search,
                               const Provenance& provenance);

// Sets z from the finished game's result, from the sample's side to move's view (+1 when the side
// to move won, -1 when it lost, 0 for a draw), and marks kHasOutcome. `result` must not be kOngoing
// (checked).
void SetOutcome(ChessSample& sample, chess::GameResult result);
void SetOutcome(std::span<ChessSample> samples, chess::GameResult result);

// Quantizes probabilities (>= 0, summing to about 1) to 16-bit fixed point summing to exactly 65535
// by largest remainder: each value differs from p * 65535 by less than 1. `out` must hold as many
// entries as `probabilities` (checked), at most kMaxPolicyEntries of them.
void QuantizeProbabilities(std::span<const double> probabilities, std::span<std::uint16_t> out);

}  // namespace az::sample
