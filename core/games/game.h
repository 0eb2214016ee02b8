#pragma once

// What a game is, for everything in the pipeline. Two concepts:
//
// `Game`: the rules, which the search (core/mcts) is written against. A game is a traits type with
// static functions over a copyable state, so that a game's own types (e.g. az::chess::Position)
// model it through a thin adapter without being changed, and the search calls it with no virtual
// call.
//
// `GameDefinition`: a Game plus everything else the services need to know, all in the game's own
// folder (core/games/<game>/): its name and wire id, the network input it is encoded into and the
// network shape that suits it, the self-play defaults, the training sample (building, outcome,
// validation of bytes from another process, the policy and value targets), its symmetries, and the
// text forms of positions and moves. A solver is optional (`Solvable`). The services are generic
// over GameDefinition and find a game by name or id through core/games/registry.h.
//
//   struct MyGame {
//     // Rules (Game).
//     using State = ...;   // a position, plus whatever history its rules need (repetitions)
//     using Move = ...;    // trivially copyable
//     using Record = ...;  // compact, trivially copyable: what crosses a process boundary
//     static constexpr int kMaxMoves = ...;    // upper bound on the legal moves of any state
//     static constexpr int kPolicySize = ...;  // the network's policy head size
//     static int LegalMoves(const State&, Move* out);  // writes <= kMaxMoves, returns the count
//     static GameOutcome Outcome(const State&, int num_legal_moves);
//     static void Apply(State&, Move);                 // the move must be legal
//     static int PolicyIndex(const State&, Move);      // in [0, kPolicySize)
//     static std::uint16_t PackMove(Move);             // 16 bits: what a search node stores
//     static Move UnpackMove(const State&, std::uint16_t);  // inverse of PackMove in that state
//     static Record ToRecord(const State&);
//     static void Undo(State&, Move);  // takes back `move`, the last move played
//     // Optional: how the search judges a state below its root, when that differs from Outcome
//     // (chess: a repetition there is a draw). Without it the search uses Outcome everywhere.
//     static GameOutcome TreeOutcome(const State&, int num_legal_moves);
//
//     // Identity, network, self-play (GameDefinition).
//     static constexpr std::string_view kName = "mygame";  // the --game flag value
//     static constexpr std::uint8_t kId = ...;  // on the wire and on disk; unique, never reused
//     static constexpr InputShape kInput = {...};  // what Encode writes
//     static constexpr NetShape kNet = {...};      // the default network for a fresh start
//     static constexpr PlayDefaults kPlay = {...};
//     static void Encode(const Record&, std::span<float> out);  // kInput.floats() floats
//     static Status ValidateRecord(const Record&);  // a record from another process: reachable?
//     static State NewGame(int max_plies);  // the start; max_plies: where a game is cut (a draw)
//     static int Ply(const State&);
//
//     // The training sample: trivially copyable, fixed size, starting with a magic and a version.
//     using Sample = ...;
//     static Result<Sample> MakeSample(const State&, const SearchSummary<Move>&, Provenance);
//     static void SetOutcome(std::span<Sample>, const State& final_state, int final_value);
//     static Status ValidateSample(const Sample&);  // everything, legality included
//     static std::uint32_t SampleModelVersion(const Sample&);
//     static float SampleZ(const Sample&);          // outcome, side to move's view
//     static void SetSampleZ(Sample&, float z);     // replaces it (a blended target), in [-1, 1]
//     static std::array<float, 3> SampleRootWdl(const Sample&);  // the search root's W, D, L
//     static bool SampleOffPolicy(const Sample&);  // z is not its value (Provenance::off_policy)
//     static const Record& SampleRecord(const Sample&);
//     static void AppendPolicy(const Sample&, std::vector<PolicyTarget>& out);  // weight > 0 only
//
//     // Symmetries: kSymmetries maps of the board (0 is the identity) under which the rules, and so
//     // the values, are unchanged. TransformSample maps record and policy together.
//     static constexpr int kSymmetries = ...;
//     static Sample TransformSample(const Sample&, int symmetry);
//
//     // Text: positions and moves as users and tools (az-analyse) write them.
//     static Result<State> ParsePosition(std::string_view text);
//     static Result<Move> ParseMove(const State&, std::string_view text);  // a legal move
//     static std::string MoveText(const State&, Move);
//     static std::string PositionText(const State&);  // the inverse of ParsePosition
//   };

#include <array>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/base/status.h"

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

// How an encoder lays out one position's floats.
enum class InputLayout : std::uint8_t {
  kNhwc,  // dst[(row * width + col) * planes + plane]: the chess encoder
  kNchw,  // dst[(plane * height + row) * width + col]: planar encoders (the small games)
};

// The network input a game's Encode writes.
struct InputShape {
  int planes = 0;
  int height = 0;
  int width = 0;
  InputLayout layout = InputLayout::kNchw;
  constexpr int floats() const { return planes * height * width; }
};

// The default residual network for a fresh start (docs/nn.md names the parts).
struct NetShape {
  int blocks = 0;
  int filters = 0;
  int policy_channels = 2;
  int value_channels = 1;
  int value_hidden = 256;
  // The policy head's form. -1: dense, a linear layer from every cell's policy features to every
  // action. k >= 0, for games whose actions are the board's columns (policy size = board width):
  // a logit per cell, and a column's logit is the one at the cell that input plane k marks in that
  // column (Connect Four: the cell its stone lands in), so a move is judged where it is played.
  int policy_cell_plane = -1;
};

// Self-play defaults, used when a flag is left at its "game default" value (docs/selfplay.md).
struct PlayDefaults {
  int simulations = 0;
  int temperature_plies = 0;  // tau 1 for the first N plies, then the most visited move
  float dirichlet_alpha = 0;  // about 10 / (typical legal moves), as AlphaZero scales it
  int max_plies = 0;          // a game cut here is a draw
  // Uniformly random legal moves at a game's start, a count in [min, max] drawn per game; they
  // are not recorded as samples. 0, 0: none.
  int random_opening_plies_min = 0;
  int random_opening_plies_max = 0;
  // Resignation: a side whose root value stays below -resign_value for resign_plies consecutive
  // plies loses; resign_playthrough_fraction of the games are never adjudicated (to count false
  // positives). 0: off.
  float resign_value = 0;
  int resign_plies = 1;
  float resign_playthrough_fraction = 0;
  // Draw adjudication: |root value| < draw_adjudicate_value for draw_adjudicate_plies consecutive
  // plies, all at ply >= draw_adjudicate_min_ply, ends the game drawn. 0: off.
  float draw_adjudicate_value = 0;
  int draw_adjudicate_plies = 1;
  int draw_adjudicate_min_ply = 0;
  // The search's contempt for draws below its root (mcts::SearchOptions::draw_score). 0: none.
  float draw_score = 0;
};

// Who made a sample, and how.
struct Provenance {
  std::uint64_t game_id = 0;
  std::uint32_t model_version = 0;
  // The move played from this position was not the search's (a random opening ply searched only
  // for its policy target): the game's outcome is not this position's value under the network's
  // play, so the learner's value target is the search root's WDL alone (the sample's off-policy
  // flag, SampleOffPolicy).
  bool off_policy = false;
};

// What the search says about a root: a weight (visit count, or any non-negative number; only
// ratios matter) per legal move that has one, the root's WDL (side to move's view, summing to 1)
// and its soft (risk-adjusted) value in [-1, 1].
template <typename Move>
struct MoveWeight {
  Move move;
  float weight = 0;
};
template <typename Move>
struct SearchSummary {
  std::span<const MoveWeight<Move>> moves;
  std::array<float, 3> root_wdl = {0.0f, 1.0f, 0.0f};
  float soft_value = 0.0f;
};

// One entry of a policy target: a policy index and its probability.
struct PolicyTarget {
  std::int32_t action = 0;
  float weight = 0;
};

template <typename G>
concept Game = std::copyable<typename G::State> && std::is_trivially_copyable_v<typename G::Move> &&
    std::is_trivially_copyable_v<typename G::Record> &&
    std::default_initializable<typename G::Record> && requires {
  requires G::kMaxMoves > 0 && G::kPolicySize > 0;
} && requires(const typename G::State& state, typename G::State& mutable_state,
              typename G::Move move, typename G::Move* out, int num_legal, std::uint16_t packed) {
  { G::LegalMoves(state, out) } -> std::same_as<int>;
  { G::Outcome(state, num_legal) } -> std::same_as<GameOutcome>;
  { G::Apply(mutable_state, move) } -> std::same_as<void>;
  { G::PolicyIndex(state, move) } -> std::same_as<int>;
  { G::PackMove(move) } -> std::same_as<std::uint16_t>;
  { G::UnpackMove(state, packed) } -> std::same_as<typename G::Move>;
  { G::ToRecord(state) } -> std::same_as<typename G::Record>;
  { G::Undo(mutable_state, move) } -> std::same_as<void>;
};

// How the search judges a state below its root: G::TreeOutcome when the game defines it,
// G::Outcome otherwise. The root, where the real game stands, is always judged by G::Outcome.
template <Game G>
GameOutcome TreeOutcome(const typename G::State& state, int num_legal_moves) {
  if constexpr (requires { G::TreeOutcome(state, num_legal_moves); }) {
    return G::TreeOutcome(state, num_legal_moves);
  } else {
    return G::Outcome(state, num_legal_moves);
  }
}

template <typename G>
concept GameDefinition = Game<G> && std::is_trivially_copyable_v<typename G::Sample> &&
    requires {
  { G::kName } -> std::convertible_to<std::string_view>;
  { G::kId } -> std::convertible_to<std::uint8_t>;
  { G::kInput } -> std::convertible_to<InputShape>;
  { G::kNet } -> std::convertible_to<NetShape>;
  { G::kPlay } -> std::convertible_to<PlayDefaults>;
  requires G::kSymmetries >= 1;
} && requires(const typename G::State& state, const typename G::Record& record,
              const typename G::Sample& sample, typename G::Sample& mutable_sample,
              std::span<typename G::Sample> samples, std::span<float> floats,
              const SearchSummary<typename G::Move>& summary, typename G::Move move,
              std::vector<PolicyTarget>& targets, std::string_view text) {
  { G::Encode(record, floats) } -> std::same_as<void>;
  { G::ValidateRecord(record) } -> std::same_as<Status>;
  { G::NewGame(0) } -> std::same_as<typename G::State>;
  { G::Ply(state) } -> std::same_as<int>;
  { G::MakeSample(state, summary, Provenance{}) } -> std::same_as<Result<typename G::Sample>>;
  { G::SetOutcome(samples, state, 0) } -> std::same_as<void>;
  { G::ValidateSample(sample) } -> std::same_as<Status>;
  { G::SampleModelVersion(sample) } -> std::same_as<std::uint32_t>;
  { G::SampleZ(sample) } -> std::same_as<float>;
  { G::SetSampleZ(mutable_sample, 0.0f) } -> std::same_as<void>;
  { G::SampleRootWdl(sample) } -> std::same_as<std::array<float, 3>>;
  { G::SampleOffPolicy(sample) } -> std::same_as<bool>;
  { G::SampleRecord(sample) } -> std::same_as<const typename G::Record&>;
  { G::AppendPolicy(sample, targets) } -> std::same_as<void>;
  { G::TransformSample(sample, 0) } -> std::same_as<typename G::Sample>;
  { G::ParsePosition(text) } -> std::same_as<Result<typename G::State>>;
  { G::ParseMove(state, text) } -> std::same_as<Result<typename G::Move>>;
  { G::MoveText(state, move) } -> std::same_as<std::string>;
  { G::PositionText(state) } -> std::same_as<std::string>;
};

// A game with an exact solver (tests and the learning benchmark use it): Solve gives the value of
// a position for its side to move, +1 win, 0 draw, -1 loss, with perfect play. A game small
// enough that every reachable position can be listed (a few thousand) also says
// `static constexpr bool kEnumerable = true;`: the solver benchmark then scores all of them.
template <typename G>
concept Solvable = GameDefinition<G> && requires(const typename G::State& state) {
  { G::Solve(state) } -> std::same_as<int>;
};

}  // namespace az::games
