#pragma once

// The text of the UCI protocol, apart from the engine's state: splitting a command line, the
// arguments of `go`, `setoption` and `position`, and the numbers an `info` line reports (centipawns
// and win/draw/loss from the search's Q). Pure functions, so that tests pin every case.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/chess/game.h"

namespace az::uci {

// The first word of `line` and the rest, both without surrounding blanks ("" when absent).
std::pair<std::string_view, std::string_view> SplitCommand(std::string_view line);

// What `go` asked for; an absent field is a limit that was not given.
struct GoLimits {
  std::optional<std::int64_t> white_time_ms;  // wtime (negative values, which some GUIs send
  std::optional<std::int64_t> black_time_ms;  // when a flag fell, count as 0)
  std::optional<std::int64_t> white_increment_ms;
  std::optional<std::int64_t> black_increment_ms;
  std::optional<int> moves_to_go;  // movestogo: moves until the next time control
  std::optional<std::int64_t> move_time_ms;
  std::optional<std::uint64_t> nodes;  // playouts below the root in this search (>= 1)
  std::optional<int> depth;            // the search's average depth to reach (>= 1)
  bool infinite = false;
  // One line per token that was not understood or is not supported (`ponder`, `searchmoves`,
  // `mate`, a keyword without its number): the engine reports each as `info string` and searches
  // with the rest.
  std::vector<std::string> warnings;
};

// Parses the arguments of `go` (the text after the word). Never fails: what it cannot use goes
// to `warnings`.
GoLimits ParseGo(std::string_view arguments);

// `setoption name <name> [value <value>]`: the name may hold spaces ("Move Overhead"); the value
// is the rest of the line ("" when absent, as for a button).
struct OptionSetting {
  std::string name;
  std::string value;
};
// InvalidArgument when `name` or the name itself is missing.
Result<OptionSetting> ParseSetOption(std::string_view arguments);

// A position sent with `position`: the game (start position and moves, so that the network sees
// the history and repetitions count), and what was wrong with it. Follows Stockfish on bad input:
// moves are played up to the first one that is not legal, which is reported in `error` and ends
// the list; a bad FEN or a missing `startpos`/`fen` is an error with no game.
struct PositionCommand {
  std::optional<chess::Game> game;
  std::string error;  // empty when the whole command was used
};
PositionCommand ParsePosition(std::string_view arguments);

// The search's Q (the side to move's expected score, in [-1, 1]) as centipawns, with lc0's
// mapping cp = 90 * tan(1.5637541897 * q): 14 cp per 0.1 of Q near 0, 100 cp at q = 0.54,
// growing steeply towards +-12780 at q = +-1. Q outside [-1, 1] is clamped; symmetric
// (cp(-q) = -cp(q)).
int QToCentipawns(double q);

// Win, draw and loss probabilities as permille that sum to exactly 1000 (UCI's `wdl` field):
// win and loss rounded, draw the rest. Inputs are clamped to [0, 1].
struct WdlPermille {
  int win = 0;
  int draw = 1000;
  int loss = 0;
};
WdlPermille ToPermille(double win, double draw, double loss);

}  // namespace az::uci
