#pragma once

// Ending self-play games early on the search's own judgement (docs/selfplay.md, "Adjudication"),
// for any game. After each search the engine shows one game's Adjudicator the root value (the mean
// of the root's playouts, for its side to move, in [-1, 1]):
//
//   resignation  the value, seen from one side, stays below -resign_value for resign_plies
//                consecutive plies (both sides' searches agree: the loser's value below -v on its
//                moves, the winner's above +v on its own): that side loses.
//   draw         |value| < draw_value for draw_plies consecutive plies, each at ply >=
//                draw_min_ply: a draw.
//
// A `playthrough` game (resign_playthrough_fraction of them, drawn per game) is never adjudicated
// but remembers the first verdict it would have had, so that the engine can count false
// positives: a would-be resigner that did not lose, a would-be draw that was decided.

#include "core/base/status.h"

namespace az::selfplay {

struct AdjudicationOptions {
  float resign_value = 0.0f;                 // (0, 1]; 0: no resignation
  int resign_plies = 1;                      // >= 1
  float resign_playthrough_fraction = 0.0f;  // [0, 1]: games never adjudicated (either kind)
  float draw_value = 0.0f;                   // (0, 1]; 0: no draw adjudication
  int draw_plies = 1;                        // >= 1
  int draw_min_ply = 0;                      // >= 0
  // Trust: a kind of verdict is carried out only once at least `min_evidence` games played to
  // the end showed it would have fired, with at most `max_false_positives` of them wrong. Until
  // then its verdicts are withheld, and the games they were withheld in are played out and count
  // as evidence too (AlphaZero kept resignation's false positives under 5% the same way).
  // max_false_positives 1: every verdict is carried out from the start.
  float max_false_positives = 1.0f;  // [0, 1]
  int min_evidence = 20;             // >= 1

  bool resign_on() const { return resign_value > 0.0f; }
  bool draw_on() const { return draw_value > 0.0f; }
  // InvalidArgument naming the option out of range.
  Status Validate() const;
};

enum class Verdict { kNone, kResign, kDraw };

class Adjudicator {
 public:
  Adjudicator() = default;  // adjudicates nothing
  Adjudicator(const AdjudicationOptions& options, bool playthrough)
      : options_(options), playthrough_(playthrough) {}

  // The verdict after the search at `ply` whose root value for its side to move is `value`:
  // kResign (resigner_parity() says who), kDraw, or kNone. Always kNone in a playthrough game.
  // Plies must come in order, one call each.
  Verdict Observe(int ply, double value);

  bool playthrough() const { return playthrough_; }
  // ply % 2 of the side that resigned, or in a playthrough game would have (-1: none).
  int resigner_parity() const { return resigner_parity_; }
  // In a playthrough game: whether a draw would have been adjudicated.
  bool would_draw() const { return would_draw_; }

 private:
  AdjudicationOptions options_;
  bool playthrough_ = false;
  int losing_parity_ = -1;  // the side of the current run below -resign_value
  int losing_run_ = 0;
  int drawn_run_ = 0;
  int resigner_parity_ = -1;
  bool would_draw_ = false;
};

}  // namespace az::selfplay
