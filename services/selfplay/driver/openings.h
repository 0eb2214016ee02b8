#pragma once

// Where a self-play game starts (docs/selfplay.md, "Openings"): a position drawn uniformly from an
// opening book (when one is given), then a number of uniformly random legal moves drawn per game.
// Neither is searched, so neither is recorded as a training sample: the first sample is the first
// position the search plays from (a forced random move is no policy target).
//
// An opening book is a text file, one position per line in the game's position text
// (GameDefinition::ParsePosition: chess a FEN or "startpos moves e2e4 ..."; Connect Four the
// columns played, "4453"); '#' starts a comment to the end of the line, and blank lines are
// skipped. Reading it checks only the file; OpeningPositions parses every line for a game and
// names the first bad one as "FILE:LINE: what is wrong".

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/games/game.h"
#include "core/games/tactics.h"
#include "core/mcts/random.h"

namespace az::selfplay {

struct OpeningBookLine {
  int line = 0;  // 1-based, in the source
  std::string text;
};

struct OpeningBook {
  std::string source;  // the file it came from, for messages
  std::vector<OpeningBookLine> lines;
  bool empty() const { return lines.empty(); }
};

// The book in `text` (what a file holds), named `source` in messages. InvalidArgument when it
// holds no position.
Result<OpeningBook> ParseOpeningBook(std::string_view text, std::string source);
// The book in the file `path`: NotFound when it cannot be opened, else as ParseOpeningBook.
Result<OpeningBook> ReadOpeningBook(const std::string& path);

// Every position of `book` as G's states, in order. InvalidArgument "SOURCE:LINE: ..." for the
// first line that G::ParsePosition refuses, or whose game is already over.
template <games::GameDefinition G>
Result<std::vector<typename G::State>> OpeningPositions(const OpeningBook& book) {
  std::vector<typename G::State> states;
  states.reserve(book.lines.size());
  std::vector<typename G::Move> moves(G::kMaxMoves);
  for (const OpeningBookLine& line : book.lines) {
    const std::string where = book.source + ":" + std::to_string(line.line);
    Result<typename G::State> state = G::ParsePosition(line.text);
    if (!state.ok()) return state.status().WithContext(where);
    if (games::IsTerminal(G::Outcome(*state, G::LegalMoves(*state, moves.data())))) {
      return InvalidArgument(where + ": the game is already over in '" + line.text + "'");
    }
    states.push_back(std::move(state).value());
  }
  return states;
}

// One uniformly random legal move of `state` that does not end the game (a random mate or
// stalemate would leave nothing to search), or nothing when every move would (or the game is
// over). `careful`: drawn among the moves that do not hand the opponent a win at once
// (games::Careful) where there are any, so that a random ply does not decide the game by a
// blunder (a balanced opening, as KataGo's); where every move does, among all that do not end the
// game. `state` is left as it was.
template <games::GameDefinition G>
std::optional<typename G::Move> RandomPly(typename G::State& state, mcts::Rng& rng,
                                          bool careful = false) {
  typename G::Move moves[G::kMaxMoves];
  typename G::Move replies[G::kMaxMoves];
  int count = G::LegalMoves(state, moves);
  if (games::IsTerminal(G::Outcome(state, count))) return std::nullopt;
  if (careful) {
    typename G::Move safe[G::kMaxMoves];
    int safe_count = 0;
    for (int i = 0; i < count; ++i) {
      if (games::Careful<G>(state, moves[i])) safe[safe_count++] = moves[i];
    }
    if (safe_count > 0) return safe[static_cast<int>(rng.Uniform() * safe_count)];
  }
  while (count > 0) {
    const int pick = static_cast<int>(rng.Uniform() * count);
    const typename G::Move move = moves[pick];
    G::Apply(state, move);
    const bool ends = games::IsTerminal(G::Outcome(state, G::LegalMoves(state, replies)));
    G::Undo(state, move);
    if (!ends) return move;
    moves[pick] = moves[--count];  // drawn without replacement among the rest
  }
  return std::nullopt;
}

// Plays up to `plies` RandomPly moves on `state`; stops early when there is none. Returns the
// number of plies played.
template <games::GameDefinition G>
int PlayRandomPlies(typename G::State& state, int plies, mcts::Rng& rng, bool careful = false) {
  int played = 0;
  for (; played < plies; ++played) {
    const std::optional<typename G::Move> move = RandomPly<G>(state, rng, careful);
    if (!move) break;
    G::Apply(state, *move);
  }
  return played;
}

}  // namespace az::selfplay
