#include "services/selfplay/selfplay_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>
#include <vector>

#include "services/common/metric_builders.h"

namespace az::selfplay {
namespace {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;
using service::AdvanceTo;
using service::MakeCounter;
using service::MakeGauge;

const std::vector<double> kPliesBuckets = {8, 16, 24, 32, 42, 64, 96, 128, 192, 256, 384, 512};
const std::vector<double> kSecondsBuckets = {1e-4,  2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01,
                                             0.025, 0.05,   0.1,  0.25, 0.5,    1,    2.5};

}  // namespace

struct SelfPlayMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : games(MakeCounter(r, "az_selfplay_games_total", "Games finished")),
        results(prometheus::BuildCounter()
                    .Name("az_selfplay_game_results_total")
                    .Help("Games finished, by result")
                    .Register(r)),
        first_wins(results.Add({{"result", "first_player_win"}})),
        second_wins(results.Add({{"result", "second_player_win"}})),
        draws(results.Add({{"result", "draw"}})),
        moves(MakeCounter(r, "az_selfplay_moves_total", "Moves played")),
        fast_moves(MakeCounter(r, "az_selfplay_fast_moves_total",
                               "Moves searched with the fast budget of playout-cap "
                               "randomisation (not recorded)")),
        simulations(MakeCounter(r, "az_selfplay_simulations_total",
                                "MCTS playouts backed up (terminal ones included)")),
        leaves(MakeCounter(r, "az_selfplay_leaves_evaluated_total",
                           "Leaves evaluated by the evaluator")),
        game_length(prometheus::BuildHistogram()
                        .Name("az_selfplay_game_length_plies")
                        .Help("Plies per finished game")
                        .Register(r)
                        .Add({}, kPliesBuckets)),
        round_trip(prometheus::BuildHistogram()
                       .Name("az_selfplay_eval_round_trip_seconds")
                       .Help("From submitting a group's leaves to its last answer")
                       .Register(r)
                       .Add({}, kSecondsBuckets)),
        samples_pushed(MakeCounter(r, "az_selfplay_samples_pushed_total",
                                   "Samples pushed into the sample ring")),
        samples_dropped(MakeCounter(r, "az_selfplay_samples_dropped_total",
                                    "Samples lost: not built, or not pushed before a stop")),
        ring_waits(MakeCounter(r, "az_selfplay_sample_ring_waits_total",
                               "Pushes that found the sample ring full for the push timeout")),
        ring_wait_seconds(MakeCounter(r, "az_selfplay_sample_ring_wait_seconds_total",
                                      "Time spent waiting for room in the sample ring")),
        eval_timeouts(MakeCounter(r, "az_selfplay_eval_timeouts_total",
                                  "Times no eval answer came in time (requests resubmitted)")),
        evaluator_losses(MakeCounter(
            r, "az_selfplay_evaluator_losses_total",
            "Times an evaluator serving the channel died or left (requests resubmitted at once)")),
        eval_errors(MakeCounter(r, "az_selfplay_eval_errors_total",
                                "Eval answers that reported an invalid request or a failure")),
        stale_responses(MakeCounter(r, "az_selfplay_stale_responses_total",
                                    "Eval answers for an earlier generation, dropped")),
        requests(MakeCounter(r, "az_selfplay_eval_requests_total",
                             "Eval requests submitted (resubmissions included)")),
        search_seconds(MakeCounter(r, "az_selfplay_search_seconds_total",
                                   "Time the worker spent searching (MCTS, moves, samples)")),
        wait_seconds(MakeCounter(r, "az_selfplay_eval_wait_seconds_total",
                                 "Time the worker spent waiting for eval answers")),
        opening_plies(MakeCounter(r, "az_selfplay_opening_random_plies_total",
                                  "Uniformly random opening plies played")),
        opening_plies_recorded(
            MakeCounter(r, "az_selfplay_opening_random_plies_recorded_total",
                        "Random opening plies searched and recorded as off-policy samples")),
        games_branched(MakeCounter(r, "az_selfplay_games_branched_total",
                                   "Games started from a recent game's position and a random ply")),
        adjudications(prometheus::BuildCounter()
                          .Name("az_selfplay_adjudications_total")
                          .Help("Games ended early on the search's value, by kind")
                          .Register(r)),
        resignations(adjudications.Add({{"kind", "resign"}})),
        draw_adjudications(adjudications.Add({{"kind", "draw"}})),
        material_adjudications(adjudications.Add({{"kind", "material"}})),
        playthrough_games(
            MakeCounter(r, "az_selfplay_playthrough_games_total",
                        "Games played to the end with adjudication off, to measure it")),
        playthrough(prometheus::BuildCounter()
                        .Name("az_selfplay_playthrough_adjudications_total")
                        .Help("Playthrough games where adjudication would have fired, by kind, "
                              "and the false positives among them (the resigner did not lose; "
                              "the draw was decided)")
                        .Register(r)),
        would_resign(playthrough.Add({{"kind", "resign"}, {"verdict", "would_fire"}})),
        resign_false_positives(
            playthrough.Add({{"kind", "resign"}, {"verdict", "false_positive"}})),
        would_draw(playthrough.Add({{"kind", "draw"}, {"verdict", "would_fire"}})),
        draw_false_positives(playthrough.Add({{"kind", "draw"}, {"verdict", "false_positive"}})),
        in_progress(MakeGauge(r, "az_selfplay_games_in_progress", "Games being played")),
        model_version(
            MakeGauge(r, "az_selfplay_model_version", "Model version of the latest eval answer")),
        ring_occupancy(MakeGauge(r, "az_selfplay_sample_ring_occupancy",
                                 "Records in the sample ring (all producers)")) {}

  Counter& games;
  prometheus::Family<Counter>& results;
  Counter& first_wins;
  Counter& second_wins;
  Counter& draws;
  Counter& moves;
  Counter& fast_moves;
  Counter& simulations;
  Counter& leaves;
  Histogram& game_length;
  Histogram& round_trip;
  Counter& samples_pushed;
  Counter& samples_dropped;
  Counter& ring_waits;
  Counter& ring_wait_seconds;
  Counter& eval_timeouts;
  Counter& evaluator_losses;
  Counter& eval_errors;
  Counter& stale_responses;
  Counter& requests;
  Counter& search_seconds;
  Counter& wait_seconds;
  Counter& opening_plies;
  Counter& opening_plies_recorded;
  Counter& games_branched;
  prometheus::Family<Counter>& adjudications;
  Counter& resignations;
  Counter& draw_adjudications;
  Counter& material_adjudications;
  Counter& playthrough_games;
  prometheus::Family<Counter>& playthrough;
  Counter& would_resign;
  Counter& resign_false_positives;
  Counter& would_draw;
  Counter& draw_false_positives;
  Gauge& in_progress;
  Gauge& model_version;
  Gauge& ring_occupancy;
};

SelfPlayMetrics::SelfPlayMetrics(prometheus::Registry& registry)
    : m_(std::make_unique<Families>(registry)) {}
SelfPlayMetrics::~SelfPlayMetrics() = default;

void SelfPlayMetrics::ObserveGame(int plies) { m_->game_length.Observe(plies); }
void SelfPlayMetrics::ObserveRoundTrip(double seconds) { m_->round_trip.Observe(seconds); }

void SelfPlayMetrics::Update(const EngineCounters& c, const shm::ChannelClientStats& channel,
                             const shm::RingStats& samples) {
  AdvanceTo(m_->games, static_cast<double>(c.games_finished));
  AdvanceTo(m_->first_wins, static_cast<double>(c.results[0]));
  AdvanceTo(m_->second_wins, static_cast<double>(c.results[1]));
  AdvanceTo(m_->draws, static_cast<double>(c.results[2]));
  AdvanceTo(m_->moves, static_cast<double>(c.moves));
  AdvanceTo(m_->fast_moves, static_cast<double>(c.fast_moves));
  AdvanceTo(m_->simulations, static_cast<double>(c.simulations));
  AdvanceTo(m_->leaves, static_cast<double>(c.leaves_evaluated));
  AdvanceTo(m_->samples_pushed, static_cast<double>(c.samples_pushed));
  AdvanceTo(m_->samples_dropped, static_cast<double>(c.samples_dropped));
  AdvanceTo(m_->ring_waits, static_cast<double>(c.ring_waits));
  AdvanceTo(m_->ring_wait_seconds, static_cast<double>(samples.push_wait_ns) * 1e-9);
  AdvanceTo(m_->eval_timeouts, static_cast<double>(c.eval_timeouts));
  AdvanceTo(m_->evaluator_losses, static_cast<double>(c.evaluator_losses));
  AdvanceTo(m_->eval_errors, static_cast<double>(c.eval_errors));
  AdvanceTo(m_->stale_responses, static_cast<double>(channel.stale_responses_dropped));
  AdvanceTo(m_->requests, static_cast<double>(c.requests_submitted));
  AdvanceTo(m_->search_seconds, c.search_seconds);
  AdvanceTo(m_->wait_seconds, c.wait_seconds);
  AdvanceTo(m_->opening_plies, static_cast<double>(c.opening_plies));
  AdvanceTo(m_->opening_plies_recorded, static_cast<double>(c.opening_plies_recorded));
  AdvanceTo(m_->games_branched, static_cast<double>(c.games_branched));
  AdvanceTo(m_->resignations, static_cast<double>(c.resignations));
  AdvanceTo(m_->draw_adjudications, static_cast<double>(c.draw_adjudications));
  AdvanceTo(m_->material_adjudications, static_cast<double>(c.material_adjudications));
  AdvanceTo(m_->playthrough_games, static_cast<double>(c.playthrough_games));
  AdvanceTo(m_->would_resign, static_cast<double>(c.playthrough_would_resign));
  AdvanceTo(m_->resign_false_positives, static_cast<double>(c.resign_false_positives));
  AdvanceTo(m_->would_draw, static_cast<double>(c.playthrough_would_draw));
  AdvanceTo(m_->draw_false_positives, static_cast<double>(c.draw_false_positives));
  m_->in_progress.Set(static_cast<double>(c.games_in_progress));
  m_->model_version.Set(static_cast<double>(c.model_version));
  m_->ring_occupancy.Set(static_cast<double>(samples.occupancy));
}

}  // namespace az::selfplay
