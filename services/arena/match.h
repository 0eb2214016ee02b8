#pragma once

// A Connect Four match between two players (services/arena/players.h): `games` games from random
// openings, each opening played twice with the colours swapped, so that neither player profits from
// moving first or from a lucky opening. Deterministic for a seed (the players' own randomness
// included).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"
#include "services/arena/players.h"

namespace az::arena {

struct MatchOptions {
  int games = 100;        // rounded up to an even number
  int opening_plies = 2;  // uniformly random moves before the players take over
  std::uint64_t seed = 1;
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

// Plays the match. Errors of the players (a network failing).
Result<MatchResult> PlayMatch(Player& a, Player& b, const MatchOptions& options);

nlohmann::json MatchResultToJson(const MatchResult& result);
// "A vs B: 100 games, A won 70, drew 10, lost 20: score 75.0% +- 8.2 (Elo +191)".
std::string MatchResultToString(const MatchResult& result);

}  // namespace az::arena
