#pragma once

// The numbers a match report gives: the score, the Elo difference with its 95% interval, the
// likelihood of superiority, and a sequential probability ratio test (SPRT) that says when enough
// games have been played to tell two Elo hypotheses apart. Pure functions of the win/draw/loss
// counts, so a report can be recomputed after every game.

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::match {

// Results from player 1's view.
struct Tally {
  int wins = 0;
  int draws = 0;
  int losses = 0;
  int games() const;
};

struct EloEstimate {
  double score = 0;       // (wins + draws/2) / games; 0.5 with no games
  double score_ci95 = 0;  // half-width of the 95% interval of the score (per-game variance from
                          // the observed results, normal approximation); 0 with no games
  double elo = 0;  // -400 log10(1/score - 1), clamped to +-800 (score clamped away from 0, 1)
  double elo_low = 0, elo_high = 0;  // Elo of score -/+ score_ci95, same clamp
  double los = 0.5;       // likelihood of superiority: Phi((W-L)/sqrt(W+L)), 0.5 when W+L == 0
  double draw_ratio = 0;  // draws / games; 0 with no games
};

// The estimate for `tally`. Uses the score formula of az-arena (services/arena/match.cc), so both
// tools report the same Elo for the same results.
EloEstimate Estimate(const Tally& tally);

// H0: the Elo difference is elo0; H1: it is elo1. alpha and beta are the false-positive and
// false-negative rates.
struct SprtConfig {
  double elo0 = 0;
  double elo1 = 5;
  double alpha = 0.05;
  double beta = 0.05;
};

enum class SprtDecision { kContinue, kAcceptH0, kAcceptH1 };

struct SprtState {
  double llr = 0;    // log-likelihood ratio of H1 against H0
  double lower = 0;  // accept H0 at or below this
  double upper = 0;  // accept H1 at or above this
  SprtDecision decision = SprtDecision::kContinue;
};

// Generalised SPRT on the trinomial results with logistic Elo (Michel Van den Bergh's normal
// approximation, as fishtest's old trinomial GSPRT): s_i = 1/(1+10^(-elo_i/400));
// LLR = n (s1 - s0)(2 mean - s0 - s1) / (2 var) with the mean score and per-game variance of the
// results, each count plus 0.001 (fishtest's regularisation: a tally of one result only, ten
// straight wins say, still has a variance and decides); lower = ln(beta/(1-alpha)), upper =
// ln((1-beta)/alpha). The LLR is 0 (continue) with no games. `config` must be valid (as ParseSprt
// checks).
SprtState Sprt(const Tally& tally, const SprtConfig& config);

// Parses "elo0=0,elo1=10,alpha=0.05,beta=0.05": any subset of the keys, in any order, the rest keep
// their defaults; spaces around parts are ignored. InvalidArgument naming the bad part for an
// unknown or repeated key, a part without '=', a value that is not a finite number, elo0 >= elo1,
// or alpha or beta outside (0, 0.5).
Result<SprtConfig> ParseSprt(std::string_view text);

// "continue", "H0 accepted", "H1 accepted".
std::string_view ToString(SprtDecision decision);

// "Elo +35.2 +- 20.1 (95%), LOS 99.9%, draws 41%". The +- is half the width of
// [elo_low, elo_high] (the interval is not symmetric in Elo).
std::string FormatEstimate(const EloEstimate& estimate);

// "SPRT [0.0, 5.0] llr 1.23 (-2.94, 2.94): continue", with [elo0, elo1] from `config`.
std::string FormatSprt(const SprtState& state, const SprtConfig& config);

}  // namespace az::match
