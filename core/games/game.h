#pragma once

// The game concept that the search (core/mcts) is written against. A game is a traits type with
// static functions over a copyable state, so that a game's own types (e.g. az::chess::Position)
// model it through a thin adapter without being changed, and the search calls it with no virtual
// call.
//
//   struct MyGame {
//     using State = ...;   // a position, plus whatever history its rules need (repetitions)
//     using Move = ...;    // trivially copyable
//     using Record = ...;  // compact, trivially copyable: what crosses a process boundary
//     static constexpr int kMaxMoves = ...;   // upper bound on the legal moves of any state
//     static constexpr int kPolicySize = ...; // the network's policy head size
//     static int LegalMoves(const State&, Move* out);       // writes <= kMaxMoves, returns the
//     count static GameOutcome Outcome(const State&, int num_legal_moves); static void
//     Apply(State&, Move);                      // the move must be legal static int
//     PolicyIndex(const State&, Move);           // in [0, kPolicySize) static std::uint16_t
//     PackMove(Move);                  // 16 bits: what a search node stores static Move
//     UnpackMove(const State&, std::uint16_t);  // inverse of PackMove in that state static Record
//     ToRecord(const State&);
//   };

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace az::games {

// The game-theoretic result of a state, from the point of view of the side to move.
enum class GameOutcome : std::uint8_t {
  kOngoing = 0,
  kLoss = 1,  // e.g. checkmated, or the opponent's last move connected four
  kDraw = 2,  // stalemate, every draw rule, a full board
  kWin = 3,   // the side to move has already won (no game here has it; kept for completeness)
};

inline constexpr bool IsTerminal(GameOutcome outcome) { return outcome != GameOutcome::kOngoing; }

// The value of a terminal outcome for the side to move: +1 win, 0 draw, -1 loss.
inline constexpr float OutcomeValue(GameOutcome outcome) {
  switch (outcome) {
    case GameOutcome::kWin: return 1.0f;
    case GameOutcome::kLoss: return -1.0f;
    default: return 0.0f;
  }
}

template <typename G>
concept Game = std::copyable<typename G::State> && std::is_trivially_copyable_v<typename G::Move> &&
    std::is_trivially_copyable_v<typename G::Record> &&
    std::default_initializable<typename G::Record> && requires {
  requires G::kMaxMoves >
  0 && G::kPolicySize > 0;
} && requires(const typename G::State& state, typename G::State& mutable_state,
              typename G::Move move, typename G::Move* out, int num_legal, std::uint16_t packed) {
  { G::LegalMoves(state, out) } -> std::same_as<int>;
  { G::Outcome(state, num_legal) } -> std::same_as<GameOutcome>;
  { G::Apply(mutable_state, move) } -> std::same_as<void>;
  { G::PolicyIndex(state, move) } -> std::same_as<int>;
  { G::PackMove(move) } -> std::same_as<std::uint16_t>;
  { G::UnpackMove(state, packed) } -> std::same_as<typename G::Move>;
  { G::ToRecord(state) } -> std::same_as<typename G::Record>;
};

}  // namespace az::games
