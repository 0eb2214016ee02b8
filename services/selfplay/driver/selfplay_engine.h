#pragma once

// Many self-play games at once in one thread, their leaves evaluated through an AsyncEvaluator
// (async_evaluator.h), their finished samples pushed into a SampleSink (sample_sink.h). The service
// wires in the shared-memory eval channel and the run's sample ring (docs/selfplay.md); tests wire
// in fakes.
//
// The games are split into `groups` (2 by default) that take turns, so the worker searches one
// group while the evaluator works on another:
//
//   every group: gather leaves from each of its games (leaves_per_game each), submit them all
//   loop: wait for the answers of the oldest group in flight, back each of its games up, then
//         for each game: when its root holds `simulations` visits, record a sample (policy =
//         visit distribution, root WDL, soft value, the model version of the answers), pick the
//         move (tau 1 for the first temperature_plies plies, then the most visited; fresh
//         Dirichlet noise on every new root), Advance (subtree reuse); at a game's end (or when
//         it is adjudicated: resignation, draw) set z on its samples, push them into the sample
//         sink (repeated by their policy surprise when policy_surprise_weight is on) and start
//         the next game (from the opening book and random plies); gather again and submit the
//         group.
//
// Recovery: when no answer comes for eval_timeout (the evaluator died, or restarted and lost the
// requests it held), the worker Reset()s the evaluator (late answers to old requests are then
// dropped) and submits every unanswered request again under fresh ids. An answer whose id is not in
// flight, or that the transport could not read, is dropped and counted (protocol_errors); the
// timeout resubmits what it left unanswered. A sink that stays full (the replay daemon is down)
// blocks the game's end, logging after push_timeout and retrying every 100 ms, until it drains or
// the engine is stopped.
//
// Not thread-safe: one thread calls Step; SetPaused, Stop and counters may come from any thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/base/status.h"
#include "core/mcts/options.h"
#include "services/common/game_kind.h"
#include "services/selfplay/driver/adjudication.h"
#include "services/selfplay/driver/async_evaluator.h"
#include "services/selfplay/driver/openings.h"
#include "services/selfplay/driver/sample_sink.h"

namespace az::selfplay {

struct EngineOptions {
  int games = 64;        // played at once
  int simulations = 64;  // visits of a root's children before a move
  // Playout-cap randomisation (KataGo): a move is searched fully (`simulations`, root noise, and
  // recorded as a sample) with probability full_search_fraction, else with fast_simulations, no
  // root noise, and not recorded: more games for the same evaluations, so more independent
  // outcomes for the value target. 1: every move is full.
  float full_search_fraction = 1.0f;
  int fast_simulations = 16;
  // Full searches of the plies before opening_simulations_plies (counted from the game's start,
  // random opening plies included) get opening_simulations visits instead of `simulations`: more
  // search where the game is furthest from its result. 0: off.
  int opening_simulations_plies = 0;
  int opening_simulations = 0;
  // Full searches of the plies before root_noise_plies (counted from the game's start, random
  // opening plies included) get root noise (Dirichlet with PUCT, Gumbel's with Gumbel); later
  // ones are searched without it, so the game goes on with the search's own choice and its
  // outcome says what the positions are worth under the network's best play. -1: every ply.
  int root_noise_plies = -1;
  // Policy-surprise weighting (KataGo; surprise.h): a finished game's samples are pushed a number
  // of times that is, in expectation, (1 - w) + w * surprise / the game's mean surprise, where a
  // sample's surprise is KL(policy target || the network's prior) at its root (under PUCT the
  // prior after Dirichlet noise, which only damps it; Gumbel's prior is the network's own). The
  // game keeps its number of samples in expectation; the learner draws more where the search
  // corrected the network. 0: every sample once.
  float policy_surprise_weight = 0.0f;
  // A position recorded position_cap times among the last position_cap_window samples this
  // engine recorded is left out of a finished game's samples (position_cap.h): the buffer holds
  // each position at most position_cap times when the window is its capacity. Applied before
  // surprise weighting. 0: off.
  int position_cap = 0;
  int position_cap_window = 300000;
  // A drawn game's samples are pushed this many times each in expectation (the fraction rounded
  // at random per sample), after surprise weighting: where self-play seldom draws (3% of Connect
  // Four's games), the learner sees more of the positions that both sides held, and where it
  // draws too often (chess), fewer. 1: as the other games; 0: drawn games are not recorded.
  float drawn_game_weight = 1.0f;
  // The value target of a finished game's samples (value_targets.h): 1, the game's outcome z
  // (AlphaZero); below 1, z blended with the search roots' values from that sample on, TD(lambda),
  // so a mistake many plies later weighs less in a position's target. Written into the sample's
  // z, so the learner's root-value-mix then blends that target with the sample's own root.
  float value_lambda = 1.0f;
  // The root WDL a sample records (the learner's root-value-mix and value_lambda use it): false,
  // every playout backed up through the root (mcts::Search::RootWdl); true, its visited children
  // weighted by Gumbel's improved policy or by visits (Search::ImprovedRootWdl), which leaves out
  // the playouts Gumbel's sequential halving spends on moves it found worse.
  bool improved_root_wdl = false;
  int leaves_per_game = 1;      // leaves gathered from each game per round
  int groups = 2;               // games split into groups that take turns with the evaluator
  std::uint64_t max_games = 0;  // games to play in all; 0: no limit
  int max_plies = 512;          // a game longer than this is a draw
  mcts::SearchOptions search;   // c_puct, FPU, risk_beta, noise, virtual loss, reuse, seed
  mcts::TemperatureOptions temperature;
  // Openings (openings.h): each game starts from a position of the book (the game's start when
  // it is empty), then plays a number of uniformly random legal plies drawn from [min, max];
  // neither is recorded as samples.
  OpeningBook opening_book;
  int random_opening_plies_min = 0;
  int random_opening_plies_max = 0;
  // openings.h's PlayRandomPlies(careful): random plies never hand the opponent a win at once.
  bool random_opening_careful = false;
  // The random opening plies from this ply on (counted from the game's start) are searched like
  // any move and recorded, as off-policy samples (core/games/game.h's Provenance): the policy
  // target is the search's, the move played stays random, the value target is the root's WDL.
  // Every random position a game passes through becomes training data, not only the one where
  // the random plies end. -1: none (the random plies are played without a search).
  int random_opening_record_from = -1;
  // Branched games (KataGo's): this share of the games start instead from a position a recent
  // full search of this engine played from (one of the last kBranchPool), with one random ply
  // (RandomPly, careful as above) played on it and not recorded: positions near the network's
  // own lines with a mistake in them, which neither self-play nor random openings reach much.
  // No random opening plies follow a branch. 0: off.
  float branch_fraction = 0.0f;
  static constexpr int kBranchPool = 4096;
  AdjudicationOptions adjudication;  // resignation and draw adjudication (adjudication.h)
  // Material adjudication, for games that define G::MaterialBalance (chess): a side ahead by at
  // least material_adjudicate_margin pawns at each of material_adjudicate_plies consecutive
  // plies wins. A training rule, not a prediction (so not held back by the trust check above):
  // it gives a young network's value target a signal where nearly every game played to the end
  // is a draw (docs/learning.md). 0: off.
  int material_adjudicate_margin = 0;
  int material_adjudicate_plies = 10;
  std::uint32_t worker_id = 0;
  std::chrono::milliseconds eval_timeout{10000};  // no answer for this long: reset and resubmit
  std::chrono::milliseconds push_timeout{1000};   // a full sink for this long: log, keep waiting
};

// Totals since the engine started.
struct EngineCounters {
  std::uint64_t games_started = 0;
  std::uint64_t games_finished = 0;
  std::uint64_t moves = 0;
  std::uint64_t fast_moves = 0;   // of them, searched with fast_simulations (not recorded)
  std::uint64_t simulations = 0;  // backed-up playouts, terminal ones included
  std::uint64_t leaves_evaluated = 0;
  std::uint64_t requests_submitted = 0;  // resubmissions included
  std::uint64_t rounds = 0;              // groups answered
  std::uint64_t eval_timeouts = 0;       // times no answer came for eval_timeout (then resubmitted)
  std::uint64_t evaluator_losses = 0;    // times an evaluator stopped serving (then resubmitted)
  std::uint64_t eval_errors = 0;         // answers saying invalid or failed (the leaves cancelled)
  std::uint64_t protocol_errors = 0;     // malformed answers, or ids not in flight (dropped)
  std::uint64_t samples_pushed = 0;
  std::uint64_t samples_dropped = 0;  // could not be built, or not pushed before a stop
  // Policy-surprise weighting: copies pushed beyond the first (counted in samples_pushed), and
  // samples a game left out.
  std::uint64_t surprise_extra_copies = 0;
  std::uint64_t surprise_left_out = 0;
  std::uint64_t position_cap_left_out = 0;  // samples left out by position_cap
  // drawn_game_weight: copies of drawn games' samples pushed beyond the first (counted in
  // samples_pushed), and drawn games' samples left out.
  std::uint64_t drawn_extra_copies = 0;
  std::uint64_t drawn_left_out = 0;
  std::uint64_t ring_waits = 0;       // pushes that found the sample sink full for push_timeout
  std::uint64_t results[3] = {};      // first player won, second player won, draw
  std::uint64_t model_version = 0;    // of the latest answer
  std::uint64_t opening_plies = 0;    // random opening plies played
  std::uint64_t opening_plies_recorded = 0;  // of them, searched and recorded (off-policy)
  std::uint64_t games_branched = 0;          // games branched off a recent game's position
  std::uint64_t resignations = 0;            // games ended by resignation (counted in results too)
  std::uint64_t draw_adjudications = 0;      // games ended as draws by adjudication
  std::uint64_t material_adjudications = 0;  // games won on material (counted in results too)
  // Games played to the end with adjudication off (resign_playthrough_fraction); of those, the
  // ones where resignation would have fired, and where the side that would have resigned did not
  // lose (false positives); the same for draw adjudication (false positive: the game was won).
  std::uint64_t playthrough_games = 0;
  std::uint64_t playthrough_would_resign = 0;
  std::uint64_t resign_false_positives = 0;
  std::uint64_t playthrough_would_draw = 0;
  std::uint64_t draw_false_positives = 0;
  // Verdicts not carried out because the evidence did not yet show them reliable (adjudication.h:
  // max_false_positives); those games were played out and counted with the playthrough ones.
  std::uint64_t resignations_withheld = 0;
  std::uint64_t draws_withheld = 0;
  std::uint64_t games_in_progress = 0;
  // Where the engine's thread spent its time: searching (backing up, playing moves, gathering,
  // building samples and pushing them) and waiting for eval answers (submitting included).
  double search_seconds = 0;
  double wait_seconds = 0;
};

enum class GameResultKind { kFirstPlayerWins = 0, kSecondPlayerWins = 1, kDraw = 2 };

// Told about each event the metrics want as a distribution; called on the engine's thread.
struct EngineObserver {
  std::function<void(int plies, GameResultKind result)> game_finished;
  std::function<void(double seconds)> round_trip;  // a group's submit to its last answer
};

class SelfPlayEngine {
 public:
  virtual ~SelfPlayEngine() = default;

  // One turn: submits the groups that are not in flight, waits for the oldest group's answers,
  // backs it up, plays the moves that are due, finishes games and submits the group again.
  // Blocks for as long as the evaluator takes (resubmitting after eval_timeout) and while the sink
  // is full. CANCELLED after Stop(); the evaluator's or the sink's other errors otherwise.
  virtual Status Step() = 0;
  // True once max_games games have finished (never when max_games is 0).
  virtual bool Done() const = 0;
  // While paused, Step finishes the groups in flight but submits nothing new, then returns
  // at once (the games keep their state). Thread-safe.
  virtual void SetPaused(bool paused) = 0;
  // Makes a blocked Step return CANCELLED soon (within ~100 ms). Thread-safe.
  virtual void Stop() = 0;

  // A copy of the totals as of the end of the last Step (or a wait inside it). Thread-safe.
  virtual EngineCounters counters() const = 0;
};

// An engine for `game` that evaluates through `evaluator` and pushes into `sink` (records of that
// game's sample size, checked); it owns both. INVALID_ARGUMENT for options out of range, a missing
// evaluator or sink, or an evaluator that holds fewer requests in flight than the engine keeps
// (games x leaves_per_game), or an opening book line the game cannot parse ("FILE:LINE: ...");
// FAILED_PRECONDITION for a sink of another record size.
Result<std::unique_ptr<SelfPlayEngine>> CreateSelfPlayEngine(
    service::GameKind game, const EngineOptions& options, std::unique_ptr<AsyncEvaluator> evaluator,
    std::unique_ptr<SampleSink> sink, EngineObserver observer = {});

// The sample record size of `game` (what the sample sink must carry).
std::uint32_t SampleBytes(service::GameKind game);

}  // namespace az::selfplay
