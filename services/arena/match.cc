#include "services/arena/match.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace az::arena {

void ScoreMatch(MatchResult& result) {
  const double n = result.games;
  if (n == 0) return;
  result.a_score = (result.a_wins + 0.5 * result.draws) / n;
  // Per-game score variance from the observed results.
  const double mean_sq = (result.a_wins + 0.25 * result.draws) / n;
  const double variance = std::max(0.0, mean_sq - result.a_score * result.a_score);
  result.a_score_ci95 = 1.96 * std::sqrt(variance / n);
  const double s = std::clamp(result.a_score, 1e-3, 1 - 1e-3);
  result.elo = std::clamp(-400.0 * std::log10(1.0 / s - 1.0), -800.0, 800.0);
}

nlohmann::json MatchResultToJson(const MatchResult& r) {
  return {{"a", r.a},
          {"b", r.b},
          {"games", r.games},
          {"a_wins", r.a_wins},
          {"draws", r.draws},
          {"b_wins", r.b_wins},
          {"a_score", r.a_score},
          {"a_score_ci95", r.a_score_ci95},
          {"elo", r.elo},
          {"seconds", r.seconds}};
}

std::string MatchResultToString(const MatchResult& r) {
  char text[512];
  std::snprintf(text, sizeof text,
                "%s vs %s: %d games, won %d, drew %d, lost %d: score %.1f%% +- %.1f (Elo %+.0f) "
                "in %.1f s",
                r.a.c_str(), r.b.c_str(), r.games, r.a_wins, r.draws, r.b_wins, 100 * r.a_score,
                100 * r.a_score_ci95, r.elo, r.seconds);
  return text;
}

}  // namespace az::arena
