#include "services/arena/match.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

namespace az::arena {
namespace {

using games::ConnectFourPosition;

// +1 when the first player won, -1 when the second did, 0 for a draw.
Result<int> PlayGame(Player& first, Player& second, const std::vector<int>& opening,
                     mcts::Rng& rng) {
  ConnectFourPosition position;
  for (int column : opening) position.Play(column);
  while (true) {
    if (position.BoardFull()) return 0;
    Player& mover = position.side_to_move() == 0 ? first : second;
    AZ_ASSIGN_OR_RETURN(int column, mover.Choose(position, rng));
    AZ_CHECK(column >= 0 && column < games::kConnectFourWidth && position.CanPlay(column),
             "a player chose an unplayable column");
    position.Play(column);
    if (position.LastMoverWon()) return position.side_to_move() == 1 ? 1 : -1;
  }
}

}  // namespace

Result<MatchResult> PlayMatch(Player& a, Player& b, const MatchOptions& options) {
  AZ_CHECK(options.games >= 1 && options.opening_plies >= 0 && options.opening_plies <= 6);
  const auto start = std::chrono::steady_clock::now();
  MatchResult result;
  result.a = a.name();
  result.b = b.name();
  mcts::Rng rng(options.seed);
  const int pairs = (options.games + 1) / 2;
  for (int pair = 0; pair < pairs; ++pair) {
    // No four in a row is possible within six plies, so every opening leaves a game to play.
    std::vector<int> opening;
    ConnectFourPosition position;
    for (int ply = 0; ply < options.opening_plies; ++ply) {
      int column;
      do {
        column = static_cast<int>(rng.Next() % games::kConnectFourWidth);
      } while (!position.CanPlay(column));
      position.Play(column);
      opening.push_back(column);
    }
    for (int swap = 0; swap < 2; ++swap) {
      Player& first = swap == 0 ? a : b;
      Player& second = swap == 0 ? b : a;
      AZ_ASSIGN_OR_RETURN(int outcome, PlayGame(first, second, opening, rng));
      const int for_a = swap == 0 ? outcome : -outcome;
      result.a_wins += for_a > 0;
      result.b_wins += for_a < 0;
      result.draws += for_a == 0;
      ++result.games;
    }
  }
  const double n = result.games;
  result.a_score = (result.a_wins + 0.5 * result.draws) / n;
  // Per-game score variance from the observed results.
  const double mean_sq = (result.a_wins + 0.25 * result.draws) / n;
  const double variance = std::max(0.0, mean_sq - result.a_score * result.a_score);
  result.a_score_ci95 = 1.96 * std::sqrt(variance / n);
  const double s = std::clamp(result.a_score, 1e-3, 1 - 1e-3);
  result.elo = std::clamp(-400.0 * std::log10(1.0 / s - 1.0), -800.0, 800.0);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
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
