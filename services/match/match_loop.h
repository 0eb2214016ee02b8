#pragma once

// The match around the games, the same for UCI chess engines and for in-process players of any
// registered game: `games` games between A and B, A moving first in the even-numbered ones
// (each opening is played twice with the colours swapped, so that neither profits from moving
// first or from a lucky opening), the score with its error bars and Elo after every game, and an
// optional SPRT that ends the match once it decides. A game's result comes from `play`; its error
// (a network failing, a bug) ends the match with that error.

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "services/match/match_stats.h"

namespace az::match {

struct GameSummary {
  int a_score = 0;  // +1 A won, -1 B won, 0 drawn
  std::string
      termination;  // "checkmate", "adjudication: draw", ... ("" when the game does not say)
};

struct MatchSettings {
  std::string a;
  std::string b;
  int games = 100;                 // rounded up to an even number
  std::optional<SprtConfig> sprt;  // stop early once it decides
};

struct MatchReport {
  std::string a;
  std::string b;
  int games_planned = 0;
  Tally tally;  // A's view
  EloEstimate estimate;
  std::optional<SprtConfig> sprt_config;
  std::optional<SprtState> sprt;
  std::map<std::string, int> terminations;
  double seconds = 0;
};

// play(game, a_moves_first): game counts from 0, and games 2k and 2k + 1 share an opening.
// progress(report, summary) is called after every game.
using PlayOne = std::function<Result<GameSummary>(int game, bool a_moves_first)>;
using Progress = std::function<void(const MatchReport&, const GameSummary&)>;
Result<MatchReport> RunMatch(const MatchSettings& settings, const PlayOne& play,
                             const Progress& progress = {});

// az-arena's JSON fields (a, b, games, a_wins, draws, b_wins, a_score, a_score_ci95, elo,
// seconds), then elo_low, elo_high, los, draw_ratio, games_planned, terminations, and sprt (llr,
// lower, upper, decision, elo0, elo1, alpha, beta) when one ran.
nlohmann::json MatchReportToJson(const MatchReport& report);
// A few lines: the arena's one-line result, the Elo line, the SPRT line, the terminations.
std::string MatchReportToText(const MatchReport& report);

}  // namespace az::match
