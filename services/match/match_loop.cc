#include "services/match/match_loop.h"

#include <chrono>
#include <cstdio>

namespace az::match {

Result<MatchReport> RunMatch(const MatchSettings& settings, const PlayOne& play,
                             const Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  MatchReport report;
  report.a = settings.a;
  report.b = settings.b;
  report.games_planned = settings.games + settings.games % 2;
  report.sprt_config = settings.sprt;
  for (int game = 0; game < report.games_planned; ++game) {
    AZ_ASSIGN_OR_RETURN(GameSummary summary, play(game, game % 2 == 0));
    Tally& tally = report.tally;
    (summary.a_score > 0 ? tally.wins : summary.a_score < 0 ? tally.losses : tally.draws) += 1;
    if (!summary.termination.empty()) ++report.terminations[summary.termination];
    report.estimate = Estimate(tally);
    if (settings.sprt) report.sprt = Sprt(tally, *settings.sprt);
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (progress) progress(report, summary);
    if (report.sprt && report.sprt->decision != SprtDecision::kContinue) break;
  }
  return report;
}

nlohmann::json MatchReportToJson(const MatchReport& r) {
  nlohmann::json json = {{"a", r.a},
                         {"b", r.b},
                         {"games", r.tally.games()},
                         {"a_wins", r.tally.wins},
                         {"draws", r.tally.draws},
                         {"b_wins", r.tally.losses},
                         {"a_score", r.estimate.score},
                         {"a_score_ci95", r.estimate.score_ci95},
                         {"elo", r.estimate.elo},
                         {"seconds", r.seconds},
                         {"elo_low", r.estimate.elo_low},
                         {"elo_high", r.estimate.elo_high},
                         {"los", r.estimate.los},
                         {"draw_ratio", r.estimate.draw_ratio},
                         {"games_planned", r.games_planned},
                         {"terminations", r.terminations}};
  if (r.sprt && r.sprt_config) {
    json["sprt"] = {{"llr", r.sprt->llr},
                    {"lower", r.sprt->lower},
                    {"upper", r.sprt->upper},
                    {"decision", std::string(ToString(r.sprt->decision))},
                    {"elo0", r.sprt_config->elo0},
                    {"elo1", r.sprt_config->elo1},
                    {"alpha", r.sprt_config->alpha},
                    {"beta", r.sprt_config->beta}};
  }
  return json;
}

std::string MatchReportToText(const MatchReport& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s vs %s: %d games, won %d, drew %d, lost %d: score %.1f%% +- %.1f (Elo %+.0f) "
                "in %.1f s",
                r.a.c_str(), r.b.c_str(), r.tally.games(), r.tally.wins, r.tally.draws,
                r.tally.losses, 100 * r.estimate.score, 100 * r.estimate.score_ci95, r.estimate.elo,
                r.seconds);
  std::string text = line;
  text += '\n';
  text += FormatEstimate(r.estimate);
  if (r.sprt && r.sprt_config) {
    text += '\n';
    text += FormatSprt(*r.sprt, *r.sprt_config);
  }
  if (!r.terminations.empty()) {
    text += "\nendings:";
    bool first = true;
    for (const auto& [why, count] : r.terminations) {
      text += first ? " " : ", ";
      text += why;
      text += ' ';
      text += std::to_string(count);
      first = false;
    }
  }
  return text;
}

}  // namespace az::match
