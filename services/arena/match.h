#pragma once

// An in-process match between two players of one game (services/arena/players.h), on az-match's
// match loop and statistics (services/match/match_loop.h): `games` games, each opening played
// twice with the colours swapped, so that neither player profits from moving first or from a
// lucky opening. An opening is a position of the book (when one is given; the book is taken in
// an order shuffled by the seed) followed by `opening_plies` uniformly random plies that never
// end the game, the same for both games of a pair. Deterministic for a seed (the players' own
// randomness included).

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/games/game.h"
#include "core/mcts/random.h"
#include "services/arena/players.h"
#include "services/match/match_loop.h"
#include "services/selfplay/driver/openings.h"

namespace az::arena {

struct MatchOptions {
  int games = 100;        // rounded up to an even number
  int opening_plies = 2;  // uniformly random moves before the players take over
  std::uint64_t seed = 1;
  int max_plies = 0;  // a game longer than this (from its opening) is a draw; 0: the game's default
  std::optional<match::SprtConfig> sprt;  // stop once it decides
};

// +1 when the player to move in `opening` won, -1 when the other one did, 0 for a draw (the game's
// own rules, or max_plies plies played). A player's illegal move is a bug (checked).
template <games::GameDefinition G>
Result<int> PlayGame(Player<G>& first, Player<G>& second, const typename G::State& opening,
                     int max_plies, mcts::Rng& rng) {
  typename G::State state = opening;
  typename G::Move moves[G::kMaxMoves];
  for (int ply = 0;; ++ply) {
    const int count = G::LegalMoves(state, moves);
    const games::GameOutcome outcome = G::Outcome(state, count);
    if (games::IsTerminal(outcome)) {
      // The outcome is for the side to move now: the first player when ply is even.
      const int value = static_cast<int>(games::OutcomeValue(outcome));
      return ply % 2 == 0 ? value : -value;
    }
    if (ply >= max_plies) return 0;
    Player<G>& mover = ply % 2 == 0 ? first : second;
    AZ_ASSIGN_OR_RETURN(typename G::Move move, mover.Choose(state, rng));
    AZ_CHECK(std::find(moves, moves + count, move) != moves + count,
             mover.name() + " chose an illegal move");
    G::Apply(state, move);
  }
}

// The openings of a match, one per pair of games: book position order[pair % size] (the book
// shuffled once by the seed; the game's start without a book), then `plies` random plies from a
// generator seeded by the pair, so both games of a pair start alike. Keeps a view of `book`.
template <games::GameDefinition G>
class PairOpenings {
 public:
  PairOpenings(std::span<const typename G::State> book, int plies, std::uint64_t seed,
               int max_plies)
      : book_(book),
        order_(std::max<std::size_t>(book.size(), 1)),
        plies_(plies),
        seed_(seed),
        max_plies_(max_plies) {
    std::iota(order_.begin(), order_.end(), 0);
    mcts::Rng shuffle(seed);
    for (std::size_t i = order_.size(); i > 1; --i) {
      std::swap(order_[i - 1], order_[shuffle.Next() % i]);
    }
  }

  typename G::State ForPair(int pair) const {
    typename G::State state = book_.empty()
                                  ? G::NewGame(max_plies_)
                                  : book_[order_[static_cast<std::size_t>(pair) % order_.size()]];
    mcts::Rng rng(seed_ * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(pair) + 1);
    selfplay::PlayRandomPlies<G>(state, plies_, rng);
    return state;
  }

 private:
  std::span<const typename G::State> book_;
  std::vector<std::size_t> order_;
  int plies_;
  std::uint64_t seed_;
  int max_plies_;
};

// Plays the match from the game's start, or from `book` positions when it is not empty.
// `progress` is called after each game. Errors of the players (a network failing).
template <games::GameDefinition G>
Result<match::MatchReport> PlayMatch(Player<G>& a, Player<G>& b, const MatchOptions& options,
                                     std::span<const typename G::State> book = {},
                                     const match::Progress& progress = {}) {
  AZ_CHECK(options.games >= 1 && options.opening_plies >= 0 && options.max_plies >= 0);
  const int max_plies = options.max_plies > 0 ? options.max_plies : G::kPlay.max_plies;
  mcts::Rng rng(options.seed);  // the players' own randomness
  const PairOpenings<G> openings(book, options.opening_plies, options.seed, max_plies);
  const match::MatchSettings settings{
      .a = a.name(), .b = b.name(), .games = options.games, .sprt = options.sprt};
  return match::RunMatch(
      settings,
      [&](int game, bool a_first) -> Result<match::GameSummary> {
        const typename G::State opening = openings.ForPair(game / 2);
        AZ_ASSIGN_OR_RETURN(int outcome,
                            PlayGame<G>(a_first ? a : b, a_first ? b : a, opening, max_plies, rng));
        return match::GameSummary{.a_score = a_first ? outcome : -outcome};
      },
      progress);
}

}  // namespace az::arena
