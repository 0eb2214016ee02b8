#pragma once

// `Chess`: everything the pipeline knows about chess (core/games/game.h's GameDefinition), a thin
// adapter over the chess engine libraries it is built from:
//
//   rules        core/chess: bitboards, legal moves, Zobrist, repetitions, every draw rule. The
//                state is a chess::Game (the position with its history, which repetitions and the
//                history planes need). Every game end of chess::Game::Outcome (mate, stalemate,
//                insufficient material, threefold repetition, the fifty-move rule, the game's
//                max_plies) is terminal: mate a loss for the side to move, the rest draws.
//                Inside the search (TreeOutcome, below the root) a position that occurred before,
//                on the search path or earlier in the game, is a draw already: a twofold
//                repetition, as engines score it (replaying a cycle gains nothing, and a side
//                that can force one can force the threefold). The game itself goes on until the
//                threefold.
//   record       core/encoding/position_record.h: the 240-byte PositionRecord
//   encoding     core/encoding/planes.h: 122 planes of 8x8, channels last
//   policy       core/encoding/move_index.h: 4672 entries (MoveToIndex)
//   sample       core/sample/chess_sample.h: the 1160-byte ChessSample, sparse policy
//   symmetries   1 (castling and pawns break the board's symmetries)
//   network      6 blocks x 64 filters (nn::NetConfig::ChessFull is the GPU size)
//   text         a position is a FEN, or "startpos [moves <uci> ...]" (also "fen <FEN> [moves
//                ...]"); a move is UCI ("e2e4", "e7e8q")

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/chess/game.h"
#include "core/chess/types.h"
#include "core/encoding/move_index.h"
#include "core/encoding/planes.h"
#include "core/encoding/position_record.h"
#include "core/games/game.h"
#include "core/sample/chess_sample.h"

namespace az::games {

struct Chess {
  // Rules.
  using State = chess::Game;
  using Move = chess::Move;
  using Record = encoding::PositionRecord;
  static constexpr int kMaxMoves = chess::kMaxMoves;
  static constexpr int kPolicySize = encoding::kPolicySize;

  static int LegalMoves(const State& state, Move* out);
  static GameOutcome Outcome(const State& state, int num_legal_moves);
  // Outcome, with a repetition (the current position's second occurrence) a draw as well.
  static GameOutcome TreeOutcome(const State& state, int num_legal_moves);
  // The side to move's material minus the opponent's, in pawns (pawn 1, knight and bishop 3, rook
  // 5, queen 9): self-play's material adjudication (a training rule, off unless configured).
  static int MaterialBalance(const State& state);
  static void Apply(State& state, Move move) { state.Play(move); }
  static void Undo(State& state, Move) { state.Undo(); }
  static int PolicyIndex(const State& state, Move move) {
    return encoding::MoveToIndex(state.position(), move);
  }
  static std::uint16_t PackMove(Move move) { return move.raw(); }
  static Move UnpackMove(const State&, std::uint16_t packed) { return Move::FromRaw(packed); }
  static Record ToRecord(const State& state) { return encoding::MakeRecord(state); }

  // Identity, network, self-play.
  static constexpr std::string_view kName = "chess";
  static constexpr std::uint8_t kId = 1;
  static constexpr InputShape kInput = {encoding::kNumPlanes, 8, 8, InputLayout::kNhwc};
  static constexpr NetShape kNet = {.blocks = 6, .filters = 64};
  // Openings: 4-8 random plies from the start. Resignation at a value below -0.9 for 6 plies in
  // a row (both sides' searches agree for 3 moves each), 10% of games played through to count
  // false positives; draw adjudication only for long games (|value| < 0.05 for 40 plies from ply
  // 240 on), well short of the 512-ply cut-off. Draws below the search root are worth -0.1 to
  // the side that plays into them: without it a young network, which values every position near
  // 0, found nothing better than an exact-0 repetition, and 99.7% of self-play games were drawn
  // by repetition within 15 plies (docs/learning.md).
  static constexpr PlayDefaults kPlay = {.simulations = 100,
                                         .temperature_plies = 30,
                                         .dirichlet_alpha = 0.3f,
                                         .max_plies = 512,
                                         .random_opening_plies_min = 4,
                                         .random_opening_plies_max = 8,
                                         .resign_value = 0.9f,
                                         .resign_plies = 6,
                                         .resign_playthrough_fraction = 0.1f,
                                         .draw_adjudicate_value = 0.05f,
                                         .draw_adjudicate_plies = 40,
                                         .draw_adjudicate_min_ply = 240,
                                         .draw_score = 0.1f};
  static void Encode(const Record& record, std::span<float> out) {
    encoding::EncodePlanes(record, out);
  }
  // DataLoss for a bad magic, InvalidArgument naming what is wrong (encoding::ValidateRecord).
  static Status ValidateRecord(const Record& record) { return encoding::ValidateRecord(record); }
  // The start position; the game is drawn (chess::EndReason::kMaxLength) at max_plies, which the
  // search sees as a terminal draw.
  static State NewGame(int max_plies) { return chess::Game(chess::GameOptions{max_plies}); }
  static int Ply(const State& state) { return state.ply(); }

  // The sample.
  using Sample = sample::ChessSample;
  static Result<Sample> MakeSample(const State& state, const SearchSummary<Move>& search,
                                   Provenance provenance);
  // `final_value`: the outcome for the side to move in `final_state` (-1 lost, 0 draw).
  static void SetOutcome(std::span<Sample> samples, const State& final_state, int final_value);
  // sample::ValidateSample and sample::CheckPolicyIsLegal (about a microsecond).
  static Status ValidateSample(const Sample& s);
  static std::uint32_t SampleModelVersion(const Sample& s) { return s.model_version; }
  static float SampleZ(const Sample& s) { return s.z; }
  static void SetSampleZ(Sample& s, float z) { s.z = std::clamp(z, -1.0f, 1.0f); }
  static std::array<float, 3> SampleRootWdl(const Sample& s) { return s.root_wdl; }
  static bool SampleOffPolicy(const Sample& s) { return (s.flags & sample::kOffPolicy) != 0; }
  static const Record& SampleRecord(const Sample& s) { return s.position; }
  static void AppendPolicy(const Sample& s, std::vector<PolicyTarget>& out);

  static constexpr int kSymmetries = 1;
  static Sample TransformSample(const Sample& s, int) { return s; }

  // Text.
  static Result<State> ParsePosition(std::string_view text);
  static Result<Move> ParseMove(const State& state, std::string_view text);
  static std::string MoveText(const State& state, Move move);
  // The current position's FEN.
  static std::string PositionText(const State& state);
};

static_assert(GameDefinition<Chess>);

}  // namespace az::games
