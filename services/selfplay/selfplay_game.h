#pragma once

// What self-play needs from a game, on top of the search: the game's own definition
// (core/games/game.h's GameDefinition: start, sample, outcome, defaults), plus turning a finished
// search into the sample's summary. Generic: every registered game gets it.

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/games/game.h"
#include "core/games/registry.h"
#include "core/mcts/search.h"

namespace az::selfplay {

// Per-game defaults, used when a flag is left at its "game default" value.
using GameDefaults = games::PlayDefaults;

template <games::GameDefinition G>
struct SelfPlayGame {
  using Sample = typename G::Sample;
  static constexpr GameDefaults kDefaults = G::kPlay;

  // The start; a game reaching max_plies is a draw (the search sees it as terminal).
  static typename G::State NewGame(int max_plies) { return G::NewGame(max_plies); }

  // The sample of the search's root: the search's policy target (the visit distribution, or
  // Gumbel's improved policy), the root's WDL and soft value. `off_policy`: the move played from
  // it will not be the search's (Provenance::off_policy). `improved_wdl`: the root's WDL under the
  // moves the search prefers (Search::ImprovedRootWdl), else over every playout (RootWdl).
  static Result<Sample> MakeSample(const mcts::Search<G>& search, std::uint64_t game_id,
                                   std::uint32_t model_version, bool off_policy = false,
                                   bool improved_wdl = false) {
    thread_local std::vector<games::MoveWeight<typename G::Move>> moves;
    moves.clear();
    for (const auto& child : search.RootChildren()) {
      moves.push_back({child.move, static_cast<float>(child.policy)});
    }
    const mcts::Wdl wdl = improved_wdl ? search.ImprovedRootWdl() : search.RootWdl();
    const games::SearchSummary<typename G::Move> summary{
        moves,
        {static_cast<float>(wdl.win), static_cast<float>(wdl.draw), static_cast<float>(wdl.loss)},
        static_cast<float>(search.SoftValue())};
    return G::MakeSample(search.root_state(), summary, {game_id, model_version, off_policy});
  }

  // `final_value`: the outcome for the side to move in `final_state` (-1 lost, 0 draw).
  static void SetOutcome(std::span<Sample> samples, const typename G::State& final_state,
                         int final_value) {
    G::SetOutcome(samples, final_state, final_value);
  }

  static Status Validate(const Sample& sample) { return G::ValidateSample(sample); }
  static int Ply(const typename G::State& state) { return G::Ply(state); }
};

}  // namespace az::selfplay
