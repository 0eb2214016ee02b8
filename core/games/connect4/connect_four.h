#pragma once

// `ConnectFour`: everything the pipeline knows about Connect Four (core/games/game.h's
// GameDefinition), a small game that a tiny network learns on two CPU cores in minutes, so the
// whole pipeline can show it learns before it is pointed at chess. The parts, all in this folder:
//
//   rules        connect_four_position.h: the 6x7 bitboard; a move is a column, 0..6
//   record       ConnectFourRecord: the side to move's stones and the opponent's, 16 bytes
//   encoding     connect_four_encoder.h: 7 planes of 6x7 (own, opponent, ones, playable cells,
//                own and opponent winning cells, side to move is first), planar
//   policy       7 entries, the index of a move is its column
//   sample       connect_four_sample.h: an 80-byte DenseSample
//   symmetries   2: the identity and the left-right mirror
//   network      3 blocks x 32 filters, policy head 8 channels, value head 32 channels -> 64
//   text         a position is its moves from the empty board as column digits 1-7 ("4453"), or
//                "start"; a move is a column digit
//   solver       connect_four_solver.h: exact win/draw/loss of any position

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/games/connect4/connect_four_encoder.h"
#include "core/games/connect4/connect_four_position.h"
#include "core/games/connect4/connect_four_sample.h"
#include "core/games/dense_sample.h"
#include "core/games/game.h"

namespace az::games {

struct ConnectFour : DenseSampleGame<ConnectFour, sample::ConnectFourSample> {
  // Rules.
  using State = ConnectFourPosition;
  using Move = ConnectFourMove;
  using Record = ConnectFourRecord;
  static constexpr int kMaxMoves = kConnectFourWidth;
  static constexpr int kPolicySize = kConnectFourWidth;

  // Playable columns, left to right (also after a win: Outcome() is what says the game is over).
  static int LegalMoves(const State& state, Move* out) {
    int count = 0;
    for (int column = 0; column < kConnectFourWidth; ++column) {
      if (state.CanPlay(column)) out[count++] = Move{static_cast<std::uint8_t>(column)};
    }
    return count;
  }
  static GameOutcome Outcome(const State& state, int num_legal_moves) {
    if (state.LastMoverWon()) return GameOutcome::kLoss;
    return num_legal_moves == 0 ? GameOutcome::kDraw : GameOutcome::kOngoing;
  }
  static void Apply(State& state, Move move) { state.Play(move.column); }
  static void Undo(State& state, Move move) { state.Undo(move.column); }
  static int PolicyIndex(const State&, Move move) { return move.column; }
  static std::uint16_t PackMove(Move move) { return move.column; }
  static Move UnpackMove(const State&, std::uint16_t packed) {
    return Move{static_cast<std::uint8_t>(packed)};
  }
  static Record ToRecord(const State& state) { return state.ToRecord(); }

  // Identity, network, self-play.
  static constexpr std::string_view kName = "connect4";
  static constexpr std::uint8_t kId = 2;
  static constexpr InputShape kInput = {kConnectFourPlanes, kConnectFourHeight, kConnectFourWidth,
                                        InputLayout::kNchw};
  // Three residual blocks: on two CPU cores the network's arithmetic sets how many games and
  // learner steps a run gets, and 3x32 learned as much as 4x32 or more within 30 minutes (docs/
  // learning.md, "A smaller network for two cores"). Heads wider than AlphaZero's 2 and 1
  // channels: a value read from one number per cell is the bottleneck of this small network
  // (about a point more at 10 minutes, for 3% more arithmetic). The policy is read at each
  // column's landing cell (NetShape::policy_cell_plane): a move's logit comes from the features
  // of the cell it fills, not from a dense layer that must find that cell among the column's six
  // (docs/learning.md, "A policy read where the stone lands").
  static constexpr NetShape kNet = {.blocks = 3,
                                    .filters = 32,
                                    .policy_channels = 8,
                                    .value_channels = 32,
                                    .value_hidden = 64,
                                    .policy_cell_plane = kConnectFourLandingPlane};
  static constexpr PlayDefaults kPlay = {.simulations = 64,
                                         .temperature_plies = 8,
                                         .dirichlet_alpha = 1.0f,
                                         .max_plies = kConnectFourCells};
  static void Encode(const Record& record, std::span<float> out) {
    EncodeConnectFour(record, out);
  }
  static Status ValidateRecord(const Record& record) {
    return ConnectFourPosition::FromRecord(record).status();
  }
  // The empty board; a game is never longer than the 42 cells.
  static State NewGame(int) { return {}; }
  static int Ply(const State& state) { return state.moves_played(); }

  // The sample: a DenseSample, its members from DenseSampleGame; these are the board queries.
  static constexpr std::string_view kSampleName = "connect four sample";
  // A reachable position where the game goes on, or InvalidArgument saying why not.
  static Result<State> StateFromRecord(const Record& record);
  static bool IsActionLegal(const State& state, int action) { return state.CanPlay(action); }

  // Symmetries: 0 the identity, 1 the left-right mirror.
  static constexpr int kSymmetries = 2;
  static Record TransformRecord(const Record& record, int symmetry);
  static int TransformAction(int column, int symmetry) {
    return symmetry == 0 ? column : kConnectFourWidth - 1 - column;
  }

  // Text.
  static Result<State> ParsePosition(std::string_view text);
  static Result<Move> ParseMove(const State& state, std::string_view text);
  static std::string MoveText(const State&, Move move) {
    return std::string(1, static_cast<char>('1' + move.column));
  }
  // Six lines, top row first: 'X' first player, 'O' second, '.' empty.
  static std::string PositionText(const State& state) { return state.ToString(); }

  // The exact value for the side to move (connect_four_solver.h; one solver per thread).
  static int Solve(const State& state);
};

static_assert(GameDefinition<ConnectFour>);
static_assert(Solvable<ConnectFour>);

}  // namespace az::games
