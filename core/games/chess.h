#pragma once

// `Chess`: chess's model of the game concept (core/games/game.h), a thin adapter over az_chess and
// az_encoding. The state is a chess::Game (the position with its history, which repetitions and
// the history planes need); the record is the 240-byte encoding::PositionRecord the network is
// encoded from; the policy index is encoding::MoveToIndex (0..4671). Every game end of
// chess::Game::Outcome (mate, stalemate, insufficient material, threefold repetition, the
// fifty-move rule, the game's max_plies) is terminal: mate a loss for the side to move, the rest
// draws.

#include <cstdint>

#include "core/chess/game.h"
#include "core/chess/types.h"
#include "core/encoding/move_index.h"
#include "core/encoding/position_record.h"
#include "core/games/game.h"

namespace az::games {

struct Chess {
  using State = chess::Game;
  using Move = chess::Move;
  using Record = encoding::PositionRecord;
  static constexpr int kMaxMoves = chess::kMaxMoves;
  static constexpr int kPolicySize = encoding::kPolicySize;

  static int LegalMoves(const State& state, Move* out);
  static GameOutcome Outcome(const State& state, int num_legal_moves);
  static void Apply(State& state, Move move) { state.Play(move); }
  static void Undo(State& state, Move) { state.Undo(); }
  static int PolicyIndex(const State& state, Move move) {
    return encoding::MoveToIndex(state.position(), move);
  }
  static std::uint16_t PackMove(Move move) { return move.raw(); }
  static Move UnpackMove(const State&, std::uint16_t packed) { return Move::FromRaw(packed); }
  static Record ToRecord(const State& state) { return encoding::MakeRecord(state); }
};

static_assert(Game<Chess>);

}  // namespace az::games
