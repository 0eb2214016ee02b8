#pragma once

// Game: a position plus the history that the rules and the network input need: every earlier
// position of this game, the moves, and each position's repetition count. Play/Undo are cheap
// (a copy-make and a short hash scan, no allocation once the history has grown), so a search can
// replay moves from its root on one Game; copying a Game copies its whole history (144 bytes a
// ply), which is fine per game but not per simulation.
//
// Game-end rules, checked in this order by Outcome():
//   checkmate (the side to move loses), stalemate (draw), insufficient material (draw: no pawns,
//   rooks or queens, and either at most one minor piece or only bishops all on one square colour),
//   threefold repetition (draw: the current position occurred three times, same placement, side,
//   castling rights and legal en-passant square), fifty-move rule (draw: 100 plies without a
//   capture or pawn move), and the caller's length cut-off (draw, EndReason::kMaxLength).
// Threefold and fifty-move end the game as soon as they hold, as self-play engines do, rather than
// waiting for a claim.

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/chess/position.h"
#include "core/chess/types.h"

namespace az::chess {

enum class GameResult : std::uint8_t { kOngoing, kWhiteWins, kBlackWins, kDraw };

enum class EndReason : std::uint8_t {
  kNone,
  kCheckmate,
  kStalemate,
  kInsufficientMaterial,
  kThreefoldRepetition,
  kFiftyMoveRule,
  kMaxLength,
};

struct GameOutcome {
  GameResult result = GameResult::kOngoing;
  EndReason reason = EndReason::kNone;

  bool is_terminal() const { return result != GameResult::kOngoing; }
  friend bool operator==(const GameOutcome&, const GameOutcome&) = default;
};

// "ongoing", "white wins", "black wins", "draw"; "none", "checkmate", "stalemate", ...
std::string_view ToString(GameResult result);
std::string_view ToString(EndReason reason);

// True when neither side can ever mate (see the rule in the comment at the top).
bool HasInsufficientMaterial(const Position& position);

struct GameOptions {
  // Draw by EndReason::kMaxLength once this many plies have been played in this Game (plies
  // before its start position do not count). 0 means no limit.
  int max_plies = 0;
};

class Game {
 public:
  // From the standard start position, or from `start`.
  explicit Game(GameOptions options = {});
  explicit Game(const Position& start, GameOptions options = {});
  // From a FEN; the errors are those of Position::FromFen.
  static Result<Game> FromFen(std::string_view fen, GameOptions options = {});

  const Position& position() const { return positions_.back(); }
  const GameOptions& options() const { return options_; }
  // Plies played since the start position.
  int ply() const { return static_cast<int>(moves_.size()); }
  // The moves played, oldest first.
  const std::vector<Move>& moves() const { return moves_; }

  // The position `plies_ago` plies back (0 = current). Requires 0 <= plies_ago <= ply().
  const Position& PositionAt(int plies_ago) const;
  // How many times the position `plies_ago` back had occurred in this game up to and including
  // that ply: 1 the first time, 3 at a threefold repetition. Requires 0 <= plies_ago <= ply().
  int RepetitionCount(int plies_ago = 0) const;

  // Plays a legal move of the current position (from GenerateLegalMoves). An illegal move is a bug
  // (checked only as far as "a piece of the side to move stands on its from-square").
  void Play(Move m);
  // Parses a UCI move against the current position and plays it; InvalidArgument (and no change)
  // when it is malformed or illegal.
  Status PlayUci(std::string_view uci);
  // Takes back the last move. Requires ply() > 0.
  void Undo();

  MoveList LegalMoves() const;
  // Whether and how the game has ended (see the rules above). Generates moves to detect mate.
  GameOutcome Outcome() const;
  // The same, given the current position's legal move count (when the caller generated them
  // already, as a search expanding a node does).
  GameOutcome Outcome(int legal_move_count) const;

 private:
  GameOptions options_;
  std::vector<Position> positions_;        // positions_[0] is the start, back() is current
  std::vector<std::uint8_t> repetitions_;  // per position, saturating at 255
  std::vector<Move> moves_;                // moves_[i] leads from positions_[i] to [i + 1]
};

}  // namespace az::chess
