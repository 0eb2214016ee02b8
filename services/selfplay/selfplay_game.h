#pragma once

// What self-play needs to know about a game beyond the search's game concept: how a game starts
// (with its length limit), the training sample it records per move, how the finished game's
// outcome goes into its samples, and the defaults that suit it.

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/status.h"
#include "core/chess/game.h"
#include "core/games/chess.h"
#include "core/games/connect_four.h"
#include "core/mcts/search.h"
#include "core/sample/chess_sample.h"
#include "core/sample/connect_four_sample.h"
#include "core/sample/sample_builder.h"

namespace az::selfplay {

// Per-game defaults, used when a flag is left at its "game default" value.
struct GameDefaults {
  int simulations;
  int temperature_plies;  // tau 1 for the first N plies, then the most visited move
  float dirichlet_alpha;  // about 10 / (typical legal moves), as AlphaZero scales it
  int max_plies;
};

template <typename G>
struct SelfPlayGame;

template <>
struct SelfPlayGame<games::Chess> {
  using Sample = sample::ChessSample;
  static constexpr GameDefaults kDefaults = {
      .simulations = 100, .temperature_plies = 30, .dirichlet_alpha = 0.3f, .max_plies = 512};

  // The start position; the game is drawn (chess::EndReason::kMaxLength) at max_plies, which the
  // search sees as a terminal draw.
  static chess::Game NewGame(int max_plies) { return chess::Game(chess::GameOptions{max_plies}); }

  static Result<Sample> MakeSample(const mcts::Search<games::Chess>& search, std::uint64_t game_id,
                                   std::uint32_t model_version) {
    const auto children = search.RootChildren();
    std::vector<sample::MoveWeight>& moves = Scratch();
    moves.clear();
    for (const auto& child : children) {
      moves.push_back({child.move, static_cast<float>(child.visits)});
    }
    const mcts::Wdl wdl = search.RootWdl();
    const sample::SearchSummary summary{
        moves,
        {static_cast<float>(wdl.win), static_cast<float>(wdl.draw), static_cast<float>(wdl.loss)},
        static_cast<float>(search.SoftValue())};
    return sample::MakeSample(search.root_state(), summary, {game_id, model_version});
  }

  // `final_value`: the outcome for the side to move in `final_state` (-1 lost, 0 draw).
  static void SetOutcome(std::span<Sample> samples, const chess::Game& final_state,
                         int final_value) {
    chess::GameResult result = chess::GameResult::kDraw;
    if (final_value != 0) {
      const bool white_to_move = final_state.position().SideToMove() == chess::kWhite;
      const bool white_won = (final_value > 0) == white_to_move;
      result = white_won ? chess::GameResult::kWhiteWins : chess::GameResult::kBlackWins;
    }
    sample::SetOutcome(samples, result);
  }

  static Status Validate(const Sample& sample) { return sample::ValidateSample(sample); }
  static int Ply(const chess::Game& state) { return state.ply(); }

 private:
  static std::vector<sample::MoveWeight>& Scratch() {
    thread_local std::vector<sample::MoveWeight> moves;
    return moves;
  }
};

template <>
struct SelfPlayGame<games::ConnectFour> {
  using Sample = sample::ConnectFourSample;
  static constexpr GameDefaults kDefaults = {.simulations = 64,
                                             .temperature_plies = 8,
                                             .dirichlet_alpha = 1.0f,
                                             .max_plies = games::kConnectFourCells};

  // The empty board; the engine ends a game at max_plies (at most the 42 cells) as a draw.
  static games::ConnectFourPosition NewGame(int) { return {}; }

  static Result<Sample> MakeSample(const mcts::Search<games::ConnectFour>& search,
                                   std::uint64_t game_id, std::uint32_t model_version) {
    sample::ConnectFourSearchSummary summary;
    for (const auto& child : search.RootChildren()) {
      summary.column_weights[child.move.column] = static_cast<float>(child.visits);
    }
    const mcts::Wdl wdl = search.RootWdl();
    summary.root_wdl = {static_cast<float>(wdl.win), static_cast<float>(wdl.draw),
                        static_cast<float>(wdl.loss)};
    summary.soft_value = static_cast<float>(search.SoftValue());
    return sample::MakeConnectFourSample(search.root_state(), summary, game_id, model_version);
  }

  static void SetOutcome(std::span<Sample> samples, const games::ConnectFourPosition& final_state,
                         int final_value) {
    sample::SetConnectFourOutcome(samples, final_value,
                                  static_cast<std::uint32_t>(final_state.moves_played()));
  }

  static Status Validate(const Sample& sample) { return sample::ValidateConnectFourSample(sample); }
  static int Ply(const games::ConnectFourPosition& state) { return state.moves_played(); }
};

}  // namespace az::selfplay
