#include "services/match/match_stats.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace az::match {
namespace {

// The score is kept this far from 0 and 1 before the logistic inverse, as az-arena does, so a
// perfect score gives a finite Elo that the +-800 clamp then bounds.
constexpr double kScoreEpsilon = 1e-3;
constexpr double kEloLimit = 800;
constexpr double kZ95 = 1.959963984540054;

double EloOfScore(double score) {
  const double s = std::clamp(score, kScoreEpsilon, 1 - kScoreEpsilon);
  // + 0.0: an even score is +0, not -0.
  return std::clamp(-400.0 * std::log10(1.0 / s - 1.0), -kEloLimit, kEloLimit) + 0.0;
}

double ScoreOfElo(double elo) { return 1.0 / (1.0 + std::pow(10.0, -elo / 400.0)); }

struct ScoreMoments {
  double mean = 0.5;
  double variance = 0;  // per game
};

// `regularize` is added to each count (fishtest's regularisation for the SPRT): a tally where every
// game had one result has a variance, small, instead of none.
ScoreMoments Moments(const Tally& tally, double regularize = 0) {
  const double wins = tally.wins + regularize;
  const double draws = tally.draws + regularize;
  const double n = wins + draws + tally.losses + regularize;
  if (n == 0) return {};
  const double mean = (wins + 0.5 * draws) / n;
  const double mean_sq = (wins + 0.25 * draws) / n;
  // Rounding can make an exact 0 slightly negative.
  return {mean, std::max(0.0, mean_sq - mean * mean)};
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

Result<double> ParseNumber(std::string_view part, std::string_view value_text) {
  double value = 0;
  const char* end = value_text.data() + value_text.size();
  const auto [parsed_end, error] = std::from_chars(value_text.data(), end, value);
  if (value_text.empty() || error != std::errc() || parsed_end != end || !std::isfinite(value)) {
    return InvalidArgument("sprt: '" + std::string(part) + "' does not have a finite number");
  }
  return value;
}

std::string Format(const char* format, auto... args) {
  char text[256];
  std::snprintf(text, sizeof text, format, args...);
  return text;
}

}  // namespace

int Tally::games() const { return wins + draws + losses; }

EloEstimate Estimate(const Tally& tally) {
  EloEstimate estimate;
  const int n = tally.games();
  const ScoreMoments moments = Moments(tally);
  estimate.score = moments.mean;
  estimate.elo = EloOfScore(estimate.score);
  if (n > 0) {
    estimate.score_ci95 = kZ95 * std::sqrt(moments.variance / n);
    estimate.draw_ratio = static_cast<double>(tally.draws) / n;
  }
  estimate.elo_low = EloOfScore(estimate.score - estimate.score_ci95);
  estimate.elo_high = EloOfScore(estimate.score + estimate.score_ci95);
  const int decisive = tally.wins + tally.losses;
  if (decisive > 0) {
    // Phi(x) = erfc(-x / sqrt 2) / 2.
    const double x = (tally.wins - tally.losses) / std::sqrt(static_cast<double>(decisive));
    estimate.los = 0.5 * std::erfc(-x / std::sqrt(2.0));
  }
  return estimate;
}

SprtState Sprt(const Tally& tally, const SprtConfig& config) {
  SprtState state;
  state.lower = std::log(config.beta / (1 - config.alpha));
  state.upper = std::log((1 - config.beta) / config.alpha);
  const ScoreMoments moments = Moments(tally, 1e-3);
  const int n = tally.games();
  if (n == 0 || moments.variance <= 0) return state;
  const double s0 = ScoreOfElo(config.elo0);
  const double s1 = ScoreOfElo(config.elo1);
  state.llr = n * (s1 - s0) * (2 * moments.mean - s0 - s1) / (2 * moments.variance);
  if (state.llr >= state.upper) {
    state.decision = SprtDecision::kAcceptH1;
  } else if (state.llr <= state.lower) {
    state.decision = SprtDecision::kAcceptH0;
  }
  return state;
}

Result<SprtConfig> ParseSprt(std::string_view text) {
  SprtConfig config;
  bool seen[4] = {false, false, false, false};
  static constexpr std::string_view kKeys[4] = {"elo0", "elo1", "alpha", "beta"};
  double* const fields[4] = {&config.elo0, &config.elo1, &config.alpha, &config.beta};
  while (!Trim(text).empty()) {
    const size_t comma = text.find(',');
    const std::string_view part = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t equals = part.find('=');
    if (equals == std::string_view::npos) {
      return InvalidArgument("sprt: '" + std::string(part) + "' is not key=value");
    }
    const std::string_view key = Trim(part.substr(0, equals));
    const auto known = std::find(std::begin(kKeys), std::end(kKeys), key);
    if (known == std::end(kKeys)) {
      return InvalidArgument("sprt: unknown key '" + std::string(key) +
                             "' (expected elo0, elo1, alpha, beta)");
    }
    const size_t index = known - std::begin(kKeys);
    if (seen[index]) return InvalidArgument("sprt: '" + std::string(key) + "' given twice");
    seen[index] = true;
    AZ_ASSIGN_OR_RETURN(*fields[index], ParseNumber(part, Trim(part.substr(equals + 1))));
  }
  if (!(config.elo0 < config.elo1)) {
    return InvalidArgument(
        Format("sprt: elo0 (%g) must be less than elo1 (%g)", config.elo0, config.elo1));
  }
  if (!(config.alpha > 0 && config.alpha < 0.5)) {
    return InvalidArgument(Format("sprt: alpha (%g) must be in (0, 0.5)", config.alpha));
  }
  if (!(config.beta > 0 && config.beta < 0.5)) {
    return InvalidArgument(Format("sprt: beta (%g) must be in (0, 0.5)", config.beta));
  }
  return config;
}

std::string_view ToString(SprtDecision decision) {
  switch (decision) {
    case SprtDecision::kContinue: return "continue";
    case SprtDecision::kAcceptH0: return "H0 accepted";
    case SprtDecision::kAcceptH1: return "H1 accepted";
  }
  return "?";
}

std::string FormatEstimate(const EloEstimate& estimate) {
  return Format("Elo %+.1f +- %.1f (95%%), LOS %.1f%%, draws %.0f%%", estimate.elo,
                (estimate.elo_high - estimate.elo_low) / 2, 100 * estimate.los,
                100 * estimate.draw_ratio);
}

std::string FormatSprt(const SprtState& state, const SprtConfig& config) {
  return Format("SPRT [%.1f, %.1f] llr %.2f (%.2f, %.2f): ", config.elo0, config.elo1, state.llr,
                state.lower, state.upper) +
         std::string(ToString(state.decision));
}

}  // namespace az::match
