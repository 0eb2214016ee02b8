#pragma once

// A stored, solver-referenced benchmark: positions of a game with the exact solver's value of every
// move, written once by `az-score --generate` and scored with no solving at run time
// (docs/analyse.md, docs/learning.md). The sets that ship are in services/score/data/.
//
// The file format, version 1 (text, one record a line, '\n' line ends):
//
//   az-score-positions 1 game=connect4 positions=300 seed=1 strong-from=8 trivial=excluded
//     bands=8-11,12-19,20-30                                    (one line, wrapped here)
//   # comment lines (starting with '#') and empty lines are ignored
//   44536271 band=8-11 source=strong values=-1,-1,0,1,0,-1,x
//
// - The header (the first line): the magic `az-score-positions`, the version, then key=value
//   fields, every one required and no other: `game` (a registered game with a solver),
//   `positions` (how many position lines follow), `seed` and `strong-from` (how the set was made),
//   `trivial` (`excluded`: no position where every move keeps the value, which any player scores;
//   `included`: positions as play reached them), `bands` (the bands of plies, comma-separated
//   `A-B`, ascending and disjoint).
// - A position line: four fields separated by one space. The position in the game's move text (the
//   moves from the start, docs/games.md: Connect Four's column digits); `band=A-B`, one of the
//   header's bands holding the position's ply; `source=random|strong|mixed`, the play that reached
//   it; `values=`, one entry per policy action (Connect Four: a column, left to right), the
//   solver's value of playing it for the side to move: `1` win, `0` draw, `-1` loss, `x` not
//   playable (a full column). The game goes on in the position, and no position appears twice.
//
// Reading checks every line against the game's rules (a legal move sequence, a game still going
// on, `x` exactly on the unplayable actions, no trivial position when they are excluded) but not
// the values against the solver: that is what the set spares. A reader of version 1 refuses any
// other version.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"

namespace az::score {

inline constexpr std::string_view kPositionSetMagic = "az-score-positions";
inline constexpr int kPositionSetVersion = 1;

// How a stored position was reached (GenerateOptions says how each plays).
inline constexpr std::string_view kSourceNames[] = {"random", "strong", "mixed"};
inline constexpr int kSources = 3;

// An action's value in `StoredPosition::values` when the action is not playable (`x`).
inline constexpr int kUnplayable = -2;

struct PlyBand {
  int min_ply = 0;
  int max_ply = 0;
  friend bool operator==(const PlyBand&, const PlyBand&) = default;
};

struct StoredPosition {
  std::string moves;        // the game's position text: the moves from the start
  int ply = 0;              // moves played
  int band = 0;             // index into PositionSet::bands
  int source = 0;           // index into kSourceNames
  std::vector<int> values;  // per policy action: 1, 0, -1, or kUnplayable
  friend bool operator==(const StoredPosition&, const StoredPosition&) = default;
};

struct PositionSet {
  std::string game;
  std::uint64_t seed = 0;
  int strong_from = 0;
  bool trivial_included = false;
  std::vector<PlyBand> bands;
  std::vector<StoredPosition> positions;
  // Free text written as '#' lines after the header (not read back).
  std::vector<std::string> comments;
};

// Parses a set in the format above. `origin` names it in errors, which are INVALID_ARGUMENT and
// say "<origin>:<line>: <what is wrong>" for the first bad line (the header is line 1).
Result<PositionSet> ParsePositionSet(std::string_view text, std::string_view origin);
// Reads and parses a file: NOT_FOUND when it cannot be opened, else ParsePositionSet's errors.
Result<PositionSet> ReadPositionSet(const std::string& path);

// The set in the format above; ParsePositionSet reads it back equal (comments aside).
std::string FormatPositionSet(const PositionSet& set);
// Writes the set to `path` (through a temporary file renamed over it). INTERNAL when it cannot.
Status WritePositionSet(const PositionSet& set, const std::string& path);

// The path of a set that ships with the source: services/score/data/<game>-<name>.txt, from the
// source directory compiled in (AZ_SCORE_DATA_DIR). Sets shipped today: connect4-small (the
// default for Connect Four) and connect4-full.
std::string ShippedSetPath(std::string_view game, std::string_view name);

struct GenerateOptions {
  std::string game = "connect4";  // a registered game with a solver
  // Total positions, split evenly over every (band, source) pair, the first pairs taking the rest.
  int positions = 300;
  std::vector<PlyBand> bands = {{8, 11}, {12, 19}, {20, 30}};
  // The sources' play, moves chosen with a PRNG seeded from `seed`:
  //   random  uniformly random legal moves up to the position's ply;
  //   strong  careful random moves (none that ends the game or lets the opponent win at once) to
  //           ply `strong_from`, then value-keeping moves: random among the moves the solver says
  //           keep the value, careful ones preferred (so the loser does not blunder at once and the
  //           winner keeps the game going);
  //   mixed   uniformly random moves to a ply drawn between `strong_from` + 1 and the position's
  //           ply - 1 (`strong_from` when there is no room), then value-keeping moves as `strong`.
  // `strong_from` is where solving becomes cheap enough to do for every move of a line (Connect
  // Four: about a second a position at ply 8, several seconds at 6, tens at 4).
  int strong_from = 8;
  // Keep positions where every legal move keeps the value (any player scores them, so they only
  // dilute the figures); by default they are drawn again.
  bool include_trivial = false;
  std::uint64_t seed = 1;
  // (band, source) pairs made at once, one solver each (Connect Four's: 64 MiB). The set does not
  // depend on it.
  int threads = 1;
};

// Called after each position is added (from one thread at a time): positions done, positions
// asked for.
using GenerateProgress = std::function<void(int done, int total)>;

// Builds a set: for each band and source its share of positions, at plies drawn uniformly in the
// band, the game going on, not trivial (unless included), no position twice (a position reached by
// another move order counts as the same), each solved (every move's value). Deterministic given the
// options. INVALID_ARGUMENT for an unknown game, one without a solver or options out of range;
// FAILED_PRECONDITION when a band and source run out of new positions (a thousand tries a
// position).
Result<PositionSet> GeneratePositionSet(const GenerateOptions& options,
                                        const GenerateProgress& progress = {});

// "8-11,12-19" into bands, and back. INVALID_ARGUMENT for a malformed list, a band with
// min > max or a negative ply, or bands not ascending and disjoint.
Result<std::vector<PlyBand>> ParseBands(std::string_view text);
std::string BandsText(const std::vector<PlyBand>& bands);

}  // namespace az::score
