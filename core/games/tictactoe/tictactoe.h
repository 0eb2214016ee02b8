#pragma once

// `TicTacToe`: everything the pipeline knows about tic-tac-toe (core/games/game.h's
// GameDefinition), the smallest game it runs: small enough to solve by brute force, so a test can
// demand perfect play after a short run. The parts, all in this folder:
//
//   rules        TicTacToePosition below: 9 cells, X moves first; a move is a cell, 0..8, row by
//                row from the top-left
//   record       TicTacToeRecord: the side to move's marks and the opponent's, 4 bytes
//   encoding     3 planes of 3x3 (own, opponent, ones), planar
//   policy       9 entries, the index of a move is its cell
//   sample       a 72-byte DenseSample (core/games/dense_sample.h)
//   symmetries   8: the rotations and reflections of the square
//   network      2 blocks x 32 filters, value hidden 32
//   text         a position is its moves from the empty board as cell digits 1-9 ("5137"), or
//                "start"; a move is a cell digit
//   solver       exact minimax over every reachable position (5,478 of them), memoised

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/games/dense_sample.h"
#include "core/games/game.h"

namespace az::games {

inline constexpr int kTicTacToeCells = 9;

struct TicTacToeMove {
  std::uint8_t cell = 0;  // 0..8, row by row from the top-left
  friend bool operator==(TicTacToeMove, TicTacToeMove) = default;
};

// Bit i of a mask is cell i.
struct TicTacToeRecord {
  std::uint16_t own = 0;       // the side to move's marks
  std::uint16_t opponent = 0;  // the other side's
  friend bool operator==(const TicTacToeRecord&, const TicTacToeRecord&) = default;
};
static_assert(sizeof(TicTacToeRecord) == 4);

class TicTacToePosition {
 public:
  TicTacToePosition() = default;  // the empty board, X to move

  // Parses cell digits 1-9 ("5137"). InvalidArgument on a non-digit, 0, a taken cell, or a move
  // after the game has ended.
  static Result<TicTacToePosition> FromMoves(std::string_view moves);
  // InvalidArgument when the record is not a position play can reach: marks off the board or
  // overlapping, counts that do not alternate, or both sides with a line.
  static Result<TicTacToePosition> FromRecord(const TicTacToeRecord& record);

  bool CanPlay(int cell) const { return ((own_ | opponent_) >> cell & 1) == 0; }
  void Play(int cell);  // checked: the cell is empty
  void Undo(int cell);  // takes back the last move, which was `cell` (checked: the mover's mark)
  bool LastMoverWon() const { return HasLine(opponent_); }
  bool BoardFull() const { return moves_ == kTicTacToeCells; }
  int moves_played() const { return moves_; }
  int side_to_move() const { return moves_ & 1; }  // 0: X, 1: O
  TicTacToeRecord ToRecord() const { return {own_, opponent_}; }
  // Three lines, top row first: 'X', 'O' or '.'.
  std::string ToString() const;

  static bool HasLine(std::uint16_t marks);
  friend bool operator==(const TicTacToePosition&, const TicTacToePosition&) = default;

 private:
  std::uint16_t own_ = 0;
  std::uint16_t opponent_ = 0;
  int moves_ = 0;
};

inline constexpr std::uint32_t kTicTacToeSampleMagic = 0x33545A41;  // "AZT3" little-endian
using TicTacToeSample =
    DenseSample<TicTacToeRecord, kTicTacToeCells, kTicTacToeSampleMagic, /*version=*/1>;
static_assert(sizeof(TicTacToeSample) == 72 && alignof(TicTacToeSample) == 8);
static_assert(offsetof(TicTacToeSample, position) == 48 &&
              offsetof(TicTacToeSample, policy) == 52);

struct TicTacToe : DenseSampleGame<TicTacToe, TicTacToeSample> {
  // Rules.
  using State = TicTacToePosition;
  using Move = TicTacToeMove;
  using Record = TicTacToeRecord;
  static constexpr int kMaxMoves = kTicTacToeCells;
  static constexpr int kPolicySize = kTicTacToeCells;

  // Empty cells, in order (also after a win: Outcome() is what says the game is over).
  static int LegalMoves(const State& state, Move* out) {
    int count = 0;
    for (int cell = 0; cell < kTicTacToeCells; ++cell) {
      if (state.CanPlay(cell)) out[count++] = Move{static_cast<std::uint8_t>(cell)};
    }
    return count;
  }
  static GameOutcome Outcome(const State& state, int num_legal_moves) {
    if (state.LastMoverWon()) return GameOutcome::kLoss;
    return num_legal_moves == 0 ? GameOutcome::kDraw : GameOutcome::kOngoing;
  }
  static void Apply(State& state, Move move) { state.Play(move.cell); }
  static void Undo(State& state, Move move) { state.Undo(move.cell); }
  static int PolicyIndex(const State&, Move move) { return move.cell; }
  static std::uint16_t PackMove(Move move) { return move.cell; }
  static Move UnpackMove(const State&, std::uint16_t packed) {
    return Move{static_cast<std::uint8_t>(packed)};
  }
  static Record ToRecord(const State& state) { return state.ToRecord(); }

  // Identity, network, self-play.
  static constexpr std::string_view kName = "tictactoe";
  static constexpr std::uint8_t kId = 3;
  static constexpr InputShape kInput = {3, 3, 3, InputLayout::kNchw};
  static constexpr NetShape kNet = {.blocks = 2, .filters = 32, .value_hidden = 32};
  static constexpr PlayDefaults kPlay = {
      .simulations = 32, .temperature_plies = 4, .dirichlet_alpha = 1.0f, .max_plies = 9};
  // Planes own, opponent, ones: out[plane * 9 + cell]. Checked: out holds 27 floats.
  static void Encode(const Record& record, std::span<float> out);
  static Status ValidateRecord(const Record& record) {
    return TicTacToePosition::FromRecord(record).status();
  }
  static State NewGame(int) { return {}; }
  static int Ply(const State& state) { return state.moves_played(); }

  // The sample: a DenseSample, its members from DenseSampleGame; these are the board queries.
  static constexpr std::string_view kSampleName = "tic-tac-toe sample";
  static Result<State> StateFromRecord(const Record& record) {
    return TicTacToePosition::FromRecord(record);
  }
  static bool IsActionLegal(const State& state, int action) { return state.CanPlay(action); }

  // Symmetries of the square: 0 the identity, 1-3 rotations by 90, 180, 270 degrees clockwise,
  // 4-7 those followed by a left-right mirror.
  static constexpr int kSymmetries = 8;
  static int TransformAction(int cell, int symmetry);
  static Record TransformRecord(const Record& record, int symmetry);

  // Text.
  static Result<State> ParsePosition(std::string_view text);
  static Result<Move> ParseMove(const State& state, std::string_view text);
  static std::string MoveText(const State&, Move move) {
    return std::string(1, static_cast<char>('1' + move.cell));
  }
  static std::string PositionText(const State& state) { return state.ToString(); }

  // The exact value for the side to move: +1, 0, -1.
  static int Solve(const State& state);
  static constexpr bool kEnumerable = true;  // 4,520 positions where the game goes on
};

static_assert(GameDefinition<TicTacToe>);
static_assert(Solvable<TicTacToe>);

}  // namespace az::games
