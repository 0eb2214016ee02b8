#pragma once

// A match between two players of one game (services/arena/players.h): `games` games, each opening
// played twice with the colours swapped, so that neither player profits from moving first or
// from a lucky opening. An opening is a position of the opening book (when one is given) followed
// by `opening_plies` uniformly random plies that never end the game. Deterministic for a seed (the
// players' own randomness included).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/games/game.h"
#include "services/arena/players.h"
#include "services/selfplay/driver/openings.h"

namespace az::arena {

struct MatchOptions {
  int games = 100;        // rounded up to an even number
  int opening_plies = 2;  // uniformly random moves before the players take over
  std::uint64_t seed = 1;
  int max_plies = 0;  // a game longer than this (from its opening) is a draw; 0: the game's default
};

struct MatchResult {
  std::string a;
  std::string b;
  int games = 0;
  int a_wins = 0;
  int draws = 0;
  int b_wins = 0;
  double a_score = 0;       // (wins + draws / 2) / games
  double a_score_ci95 = 0;  // half-width of the 95% interval (normal approximation)
  double elo = 0;           // A's rating minus B's, from the score (clamped at +-800)
  double seconds = 0;
};

// Fills the score, its interval and the Elo difference from the counts.
void ScoreMatch(MatchResult& result);

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

// Plays the match from the game's start, or from `book` positions when it is not empty. Errors of
// the players (a network failing).
template <games::GameDefinition G>
Result<MatchResult> PlayMatch(Player<G>& a, Player<G>& b, const MatchOptions& options,
                              std::span<const typename G::State> book = {}) {
  AZ_CHECK(options.games >= 1 && options.opening_plies >= 0 && options.max_plies >= 0);
  const auto start = std::chrono::steady_clock::now();
  const int max_plies = options.max_plies > 0 ? options.max_plies : G::kPlay.max_plies;
  MatchResult result;
  result.a = a.name();
  result.b = b.name();
  mcts::Rng rng(options.seed);
  const int pairs = (options.games + 1) / 2;
  for (int pair = 0; pair < pairs; ++pair) {
    typename G::State opening =
        book.empty() ? G::NewGame(max_plies)
                     : book[static_cast<std::size_t>(rng.Next() % book.size())];
    selfplay::PlayRandomPlies<G>(opening, options.opening_plies, rng);
    for (int swap = 0; swap < 2; ++swap) {
      Player<G>& first = swap == 0 ? a : b;
      Player<G>& second = swap == 0 ? b : a;
      AZ_ASSIGN_OR_RETURN(int outcome, PlayGame<G>(first, second, opening, max_plies, rng));
      const int for_a = swap == 0 ? outcome : -outcome;
      result.a_wins += for_a > 0;
      result.b_wins += for_a < 0;
      result.draws += for_a == 0;
      ++result.games;
    }
  }
  ScoreMatch(result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

nlohmann::json MatchResultToJson(const MatchResult& result);
// "A vs B: 100 games, A won 70, drew 10, lost 20: score 75.0% +- 8.2 (Elo +191)".
std::string MatchResultToString(const MatchResult& result);

}  // namespace az::arena
