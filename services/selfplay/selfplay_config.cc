#include "services/selfplay/selfplay_config.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <random>

#include "ipc/endpoint.h"
#include "services/common/service_util.h"
#include "services/selfplay/selfplay_game.h"

namespace az::selfplay {
namespace {

GameDefaults DefaultsFor(service::GameKind game) {
  const games::GameInfo* info = games::FindGameById(game);
  AZ_CHECK(info != nullptr, "DefaultsFor: unregistered game");
  return info->play;
}

template <typename Duration>
Duration FromSeconds(double seconds) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

void AddSelfPlayOptions(CLI::App& app, SelfPlayConfig& c) {
  service::AddServiceOptions(
      app, c,
      {.run_dir = "the run directory (control socket, discovery, shm scope)",
       .service_default = "(default: selfplay-W)",
       .metrics_port =
           "Prometheus /metrics port; default 9110 + worker id; 0: any free port; -1: off",
       .min_metrics_port = -2,
       .log_interval = "seconds between rate log lines; 0: none"});
  app.add_option(
      "--endpoint", c.endpoint,
      "control endpoint (default: ipc://RUN_DIR/SERVICE.ctl; tcp://HOST:PORT on request)");
  app.add_option("--shm-scope", c.shm_scope,
                 "shared-memory scope of the eval channel and the sample ring, shm:PREFIX or "
                 "dir:PATH (default: derived from the run directory)");
  app.add_option("--game", c.game, "the game: " + service::GameKindChoices())
      ->check(CLI::IsMember(service::GameKindNames()))
      ->capture_default_str();
  app.add_option("--worker-id", c.worker_id,
                 "this worker's id on the eval channel (unique per worker of a run)")
      ->check(CLI::Range(0, 4095))
      ->capture_default_str();

  app.add_option("--games", c.games, "games played at once")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--simulations", c.simulations,
                 "visits per move (0: the game's default, chess 100, connect4 64)")
      ->check(CLI::Range(0, 1 << 24))
      ->capture_default_str();
  app.add_option("--leaves-per-game", c.leaves_per_game,
                 "leaves gathered from each game per round (1 or 2: no collisions)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--groups", c.groups,
                 "groups of games taking turns with the evaluator (2: search one while the other "
                 "is evaluated)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--max-games", c.max_games, "games to play, then exit; 0: until stopped")
      ->capture_default_str();
  app.add_option("--max-plies", c.max_plies,
                 "a longer game is a draw (0: the game's default, chess 512, connect4 42)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--c-puct", c.c_puct, "PUCT exploration constant")
      ->check(CLI::Range(0.0f, 100.0f))
      ->capture_default_str();
  app.add_option("--fpu-base", c.fpu_base,
                 "dynamic first-play urgency: unvisited = Q_parent - fpu_base * (1 - P)")
      ->check(CLI::Range(0.0f, 10.0f))
      ->capture_default_str();
  app.add_option("--risk-beta", c.risk_beta, "entropic risk: < 0 averse, > 0 seeking")
      ->check(CLI::Range(-100.0f, 100.0f))
      ->capture_default_str();
  app.add_option("--draw-score", c.draw_score,
                 "contempt: a draw below the search root is worth -S to the side playing into it "
                 "(-1: the game's default, chess 0.1, the others 0)")
      ->check(CLI::Range(-1.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--virtual-loss", c.virtual_loss,
                 "how a playout in flight counts: loss or parent-q (matters with >1 leaf a game)")
      ->check(CLI::IsMember({"loss", "parent-q"}))
      ->capture_default_str();
  app.add_option("--dirichlet-alpha", c.dirichlet_alpha,
                 "root noise concentration (0: the game's default, chess 0.3, connect4 1.0)")
      ->check(CLI::Range(0.0f, 100.0f))
      ->capture_default_str();
  app.add_option("--dirichlet-epsilon", c.dirichlet_epsilon, "root noise weight")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--temperature-plies", c.temperature_plies,
                 "plies played with temperature, then the most visited move (-1: the game's "
                 "default, chess 30, connect4 8)")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();
  app.add_option("--temperature", c.temperature, "tau for those plies")
      ->check(CLI::Range(0.0f, 100.0f))
      ->capture_default_str();
  app.add_option("--reuse-tree", c.reuse_tree, "keep the played move's subtree")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "search seed (noise, temperature); 0: random, logged")
      ->capture_default_str();
  app.add_option("--root-selection", c.root_selection,
                 "how the root picks playouts: puct (visit counts as the policy target) or gumbel "
                 "(Gumbel AlphaZero: sequential halving, completed-Q policy target; no subtree "
                 "reuse)")
      ->check(CLI::IsMember({"puct", "gumbel"}))
      ->capture_default_str();
  app.add_option("--terminal-lookahead", c.terminal_lookahead,
                 "check each move of a node at expansion for the game's end, so that a win in "
                 "one is known before it is visited")
      ->capture_default_str();
  app.add_option("--solver", c.solver,
                 "MCTS-solver: close nodes whose children prove their value (exact values "
                 "below)")
      ->capture_default_str();
  app.add_option("--gumbel-considered", c.gumbel_considered,
                 "gumbel: actions sampled at the root (m)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--gumbel-c-visit", c.gumbel_c_visit, "gumbel: sigma's visit offset")
      ->check(CLI::Range(0.0f, 1e6f))
      ->capture_default_str();
  app.add_option("--gumbel-c-scale", c.gumbel_c_scale,
                 "gumbel: sigma's scale (how far the target leans on the searched Q)")
      ->check(CLI::Range(1e-6f, 1000.0f))
      ->capture_default_str();
  app.add_option("--full-search-fraction", c.full_search_fraction,
                 "playout-cap randomisation: share of moves searched fully (with noise) and "
                 "recorded; the rest get --fast-simulations, no noise, and are not trained on. "
                 "1: every move")
      ->check(CLI::Range(0.01f, 1.0f))
      ->capture_default_str();
  app.add_option("--policy-surprise-weight", c.policy_surprise_weight,
                 "policy-surprise weighting: a game's samples are pushed (1 - w) + w * surprise / "
                 "the game's mean surprise times in expectation (surprise: KL of the policy "
                 "target from the network's prior at the root); 0: each once")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--position-cap", c.position_cap,
                 "a position recorded this many times among the last --position-cap-window "
                 "recorded samples is not recorded again until they leave the window (the "
                 "learner's draws go to the positions it has seen less); 0: off")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--position-cap-window", c.position_cap_window,
                 "--position-cap's window, in recorded samples (the replay buffer's capacity "
                 "makes the cap hold in the buffer)")
      ->check(CLI::Range(1, 1 << 26))
      ->capture_default_str();
  app.add_option("--drawn-game-weight", c.drawn_game_weight,
                 "a drawn game's samples are pushed this many times each in expectation (the "
                 "fraction rounded at random): above 1 the learner sees more of the positions "
                 "both sides held where self-play seldom draws; 0: drawn games are not recorded")
      ->check(CLI::Range(0.0f, 16.0f))
      ->capture_default_str();
  app.add_option("--value-lambda", c.value_lambda,
                 "value target: the game's outcome blended TD(lambda) with the search roots' "
                 "values from each sample to the game's end; 1: the outcome alone")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--root-wdl", c.root_wdl,
                 "the samples' root win/draw/loss (the learner's root-value-mix and "
                 "--value-lambda blend it in): playouts (every playout through the root) or "
                 "improved (the visited children weighted by Gumbel's improved policy, or by "
                 "visits under PUCT: the value of the moves the search prefers)")
      ->check(CLI::IsMember({"playouts", "improved"}))
      ->capture_default_str();
  app.add_option("--fast-simulations", c.fast_simulations,
                 "visits of a fast move (0: a quarter of --simulations, at least 1)")
      ->check(CLI::Range(0, 1 << 24))
      ->capture_default_str();
  app.add_option("--opening-simulations-plies", c.opening_simulations_plies,
                 "full searches at plies below this (from the game's start, random opening plies "
                 "included) get --opening-simulations visits. 0: off")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--opening-simulations", c.opening_simulations,
                 "visits of a full search before --opening-simulations-plies (0: --simulations)")
      ->check(CLI::Range(0, 1 << 24))
      ->capture_default_str();

  app.add_option("--root-noise-plies", c.root_noise_plies,
                 "full searches at plies below this (from the game's start, random opening plies "
                 "included) get root noise (Dirichlet, or Gumbel's); later ones play the search's "
                 "own choice. -1: every ply")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();

  app.add_option("--opening-book", c.opening_book,
                 "a file of start positions, one a line in the game's position text (chess: FEN "
                 "or startpos moves ...), one drawn per game; empty: the game's start");
  app.add_option("--random-opening-plies", c.random_opening_plies,
                 "the most uniformly random plies at a game's start (-1: the game's default, chess "
                 "8, others 0)")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();
  app.add_option("--random-opening-plies-min", c.random_opening_plies_min,
                 "the fewest; the count is drawn per game (-1: the game's default, chess 4, "
                 "capped at --random-opening-plies)")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();
  app.add_option("--random-opening-careful", c.random_opening_careful,
                 "each random opening ply avoids, where it can, a move that hands the opponent a "
                 "win at once (balanced openings)")
      ->capture_default_str();
  app.add_option("--random-opening-record-from", c.random_opening_record_from,
                 "the random opening plies from this ply on are searched and recorded as samples "
                 "(the policy target the search's, the value target its root WDL; the move played "
                 "stays random); -1: none, the random plies are not searched")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();
  app.add_option("--branch-fraction", c.branch_fraction,
                 "this share of the games start from a position a recent full search played "
                 "from, with one random ply played on it (KataGo's branched games); 0: off")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--resign-value", c.resign_value,
                 "a side whose root value stays below minus this for --resign-plies plies loses "
                 "(-1: the game's default, chess 0.9, others 0; 0: off)")
      ->check(CLI::Range(-1.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--resign-plies", c.resign_plies,
                 "consecutive plies below the resign value (0: the game's default, chess 6)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--resign-playthrough-fraction", c.resign_playthrough_fraction,
                 "games never adjudicated, to count false positives (-1: the game's default, "
                 "chess 0.1)")
      ->check(CLI::Range(-1.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--draw-adjudicate-value", c.draw_adjudicate_value,
                 "a game whose |root value| stays below this for --draw-adjudicate-plies plies is "
                 "a draw (-1: the game's default, chess 0.05, others 0; 0: off)")
      ->check(CLI::Range(-1.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--draw-adjudicate-plies", c.draw_adjudicate_plies,
                 "consecutive plies within the draw value (0: the game's default, chess 40)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--draw-adjudicate-min-ply", c.draw_adjudicate_min_ply,
                 "plies before this one do not count (-1: the game's default, chess 240)")
      ->check(CLI::Range(-1, 1 << 20))
      ->capture_default_str();
  app.add_option("--adjudicate-max-false-positives", c.adjudicate_max_false_positives,
                 "carry out resignations (draws) only once games played to the end show at "
                 "most this share of them wrong; until then they are withheld and the games "
                 "counted. 1: trust from the start")
      ->check(CLI::Range(0.0f, 1.0f))
      ->capture_default_str();
  app.add_option("--adjudicate-min-evidence", c.adjudicate_min_evidence,
                 "games played to the end where a verdict would have fired, before it is trusted")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--material-adjudicate-margin", c.material_adjudicate_margin,
                 "chess: a side ahead by at least this many pawns of material for "
                 "--material-adjudicate-plies plies in a row wins (a training rule; 0: off)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app.add_option("--material-adjudicate-plies", c.material_adjudicate_plies,
                 "consecutive plies the material lead must hold")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();

  app.add_option("--eval-timeout", c.eval_timeout,
                 "seconds without an eval answer before resubmitting (evaluator restarted)")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  app.add_option("--push-timeout", c.push_timeout,
                 "seconds a sample push waits on a full ring before logging (it keeps waiting)")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  app.add_option("--connect-timeout", c.connect_timeout,
                 "seconds to wait at start for the evaluator's channel; 0: for ever")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--sample-ring-capacity", c.sample_ring_capacity,
                 "slots of the sample ring when this worker creates it (a power of two)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
}

Status FinalizeConfig(SelfPlayConfig& c) {
  if (c.service.empty()) c.service = "selfplay-" + std::to_string(c.worker_id);
  if (c.metrics_port == -2) c.metrics_port = 9110 + static_cast<int>(c.worker_id);
  AZ_RETURN_IF_ERROR(service::FinalizeServiceOptions(c));
  AZ_ASSIGN_OR_RETURN(c.game_kind, service::ParseGameKind(c.game));
  const GameDefaults defaults = DefaultsFor(c.game_kind);
  if (c.simulations == 0) c.simulations = defaults.simulations;
  if (c.max_plies == 0) c.max_plies = defaults.max_plies;
  if (c.dirichlet_alpha == 0.0f) c.dirichlet_alpha = defaults.dirichlet_alpha;
  if (c.draw_score < 0.0f) c.draw_score = defaults.draw_score;
  if (c.temperature_plies < 0) c.temperature_plies = defaults.temperature_plies;
  if (c.random_opening_plies < 0) c.random_opening_plies = defaults.random_opening_plies_max;
  if (c.random_opening_plies_min < 0) {
    c.random_opening_plies_min =
        std::min(defaults.random_opening_plies_min, c.random_opening_plies);
  }
  if (c.random_opening_plies_min > c.random_opening_plies) {
    return InvalidArgument(
        "--random-opening-plies-min " + std::to_string(c.random_opening_plies_min) +
        " exceeds --random-opening-plies " + std::to_string(c.random_opening_plies));
  }
  if (c.random_opening_plies >= c.max_plies) {
    return InvalidArgument("--random-opening-plies " + std::to_string(c.random_opening_plies) +
                           " leaves no ply of the " + std::to_string(c.max_plies) +
                           " (--max-plies) to play");
  }
  if (c.resign_value < 0.0f) c.resign_value = defaults.resign_value;
  if (c.resign_plies == 0) c.resign_plies = defaults.resign_plies;
  if (c.resign_playthrough_fraction < 0.0f) {
    c.resign_playthrough_fraction = defaults.resign_playthrough_fraction;
  }
  if (c.draw_adjudicate_value < 0.0f) c.draw_adjudicate_value = defaults.draw_adjudicate_value;
  if (c.draw_adjudicate_plies == 0) c.draw_adjudicate_plies = defaults.draw_adjudicate_plies;
  if (c.draw_adjudicate_min_ply < 0) c.draw_adjudicate_min_ply = defaults.draw_adjudicate_min_ply;
  if (!c.opening_book.empty()) {
    AZ_ASSIGN_OR_RETURN(c.book, ReadOpeningBook(c.opening_book));
    AZ_RETURN_IF_ERROR(games::VisitGame(c.game_kind, [&]<games::GameDefinition G>() {
                         return OpeningPositions<G>(c.book).status();
                       }).WithContext("--opening-book"));
  }
  if (c.fast_simulations == 0) c.fast_simulations = std::max(1, c.simulations / 4);
  if (c.opening_simulations == 0) c.opening_simulations = c.simulations;
  if (c.fast_simulations > c.simulations) {
    return InvalidArgument("--fast-simulations " + std::to_string(c.fast_simulations) +
                           " exceeds --simulations " + std::to_string(c.simulations));
  }
  if (c.groups > c.games) {
    return InvalidArgument("--groups " + std::to_string(c.groups) + " exceeds --games " +
                           std::to_string(c.games));
  }
  if (!std::has_single_bit(c.sample_ring_capacity)) {
    return InvalidArgument("--sample-ring-capacity must be a power of two, got " +
                           std::to_string(c.sample_ring_capacity));
  }
  if (c.seed == 0) {
    std::random_device device;
    c.seed = (std::uint64_t{device()} << 32) | device();
  }
  const EngineOptions engine = ToEngineOptions(c);
  AZ_RETURN_IF_ERROR(engine.adjudication.Validate().WithContext("adjudication"));
  return engine.search.Validate().WithContext("search options");
}

EngineOptions ToEngineOptions(const SelfPlayConfig& c) {
  EngineOptions o;
  o.games = c.games;
  o.simulations = c.simulations;
  o.leaves_per_game = c.leaves_per_game;
  o.groups = c.groups;
  o.max_games = c.max_games;
  o.max_plies = c.max_plies;
  o.search.c_puct = c.c_puct;
  o.search.fpu_base = c.fpu_base;
  o.search.risk_beta = c.risk_beta;
  o.search.draw_score = c.draw_score;
  o.search.virtual_loss =
      c.virtual_loss == "parent-q" ? mcts::VirtualLoss::kParentQ : mcts::VirtualLoss::kLoss;
  o.search.root_noise = true;
  o.search.dirichlet_alpha = c.dirichlet_alpha;
  o.search.dirichlet_epsilon = c.dirichlet_epsilon;
  o.search.max_batch = c.leaves_per_game;
  o.search.reuse_tree = c.reuse_tree;
  o.search.seed = c.seed;
  o.search.root_selection =
      c.root_selection == "gumbel" ? mcts::RootSelection::kGumbel : mcts::RootSelection::kPuct;
  o.search.detect_terminal_children = c.terminal_lookahead;
  o.search.propagate_proofs = c.solver;
  o.search.gumbel_considered = c.gumbel_considered;
  o.search.gumbel_c_visit = c.gumbel_c_visit;
  o.search.gumbel_c_scale = c.gumbel_c_scale;
  o.full_search_fraction = c.full_search_fraction;
  o.policy_surprise_weight = c.policy_surprise_weight;
  o.value_lambda = c.value_lambda;
  o.position_cap = c.position_cap;
  o.position_cap_window = c.position_cap_window;
  o.drawn_game_weight = c.drawn_game_weight;
  o.improved_root_wdl = c.root_wdl == "improved";
  o.fast_simulations = c.fast_simulations;
  o.opening_simulations_plies = c.opening_simulations_plies;
  o.opening_simulations = c.opening_simulations;
  o.root_noise_plies = c.root_noise_plies;
  o.temperature.moves = c.temperature_plies;
  o.temperature.tau = c.temperature;
  o.opening_book = c.book;
  o.random_opening_plies_min = c.random_opening_plies_min;
  o.random_opening_plies_max = c.random_opening_plies;
  o.random_opening_careful = c.random_opening_careful;
  o.random_opening_record_from = c.random_opening_record_from;
  o.branch_fraction = c.branch_fraction;
  o.adjudication = {.resign_value = c.resign_value,
                    .resign_plies = c.resign_plies,
                    .resign_playthrough_fraction = c.resign_playthrough_fraction,
                    .draw_value = c.draw_adjudicate_value,
                    .draw_plies = c.draw_adjudicate_plies,
                    .draw_min_ply = c.draw_adjudicate_min_ply,
                    .max_false_positives = c.adjudicate_max_false_positives,
                    .min_evidence = c.adjudicate_min_evidence};
  o.material_adjudicate_margin = c.material_adjudicate_margin;
  o.material_adjudicate_plies = c.material_adjudicate_plies;
  o.worker_id = c.worker_id;
  o.eval_timeout = FromSeconds<std::chrono::milliseconds>(c.eval_timeout);
  o.push_timeout = FromSeconds<std::chrono::milliseconds>(c.push_timeout);
  if (o.eval_timeout.count() == 0) o.eval_timeout = std::chrono::milliseconds(1);
  if (o.push_timeout.count() == 0) o.push_timeout = std::chrono::milliseconds(1);
  return o;
}

nlohmann::json ConfigToJson(const SelfPlayConfig& c) {
  return {{"run_dir", c.run_dir},
          {"service", c.service},
          {"endpoint", c.endpoint},
          {"shm_scope", c.shm_scope},
          {"game", c.game},
          {"worker_id", c.worker_id},
          {"games", c.games},
          {"simulations", c.simulations},
          {"leaves_per_game", c.leaves_per_game},
          {"groups", c.groups},
          {"max_games", c.max_games},
          {"max_plies", c.max_plies},
          {"c_puct", c.c_puct},
          {"fpu_base", c.fpu_base},
          {"risk_beta", c.risk_beta},
          {"draw_score", c.draw_score},
          {"virtual_loss", c.virtual_loss},
          {"dirichlet_alpha", c.dirichlet_alpha},
          {"dirichlet_epsilon", c.dirichlet_epsilon},
          {"temperature_plies", c.temperature_plies},
          {"temperature", c.temperature},
          {"reuse_tree", c.reuse_tree},
          {"seed", c.seed},
          {"root_selection", c.root_selection},
          {"terminal_lookahead", c.terminal_lookahead},
          {"solver", c.solver},
          {"gumbel_considered", c.gumbel_considered},
          {"gumbel_c_visit", c.gumbel_c_visit},
          {"gumbel_c_scale", c.gumbel_c_scale},
          {"full_search_fraction", c.full_search_fraction},
          {"policy_surprise_weight", c.policy_surprise_weight},
          {"value_lambda", c.value_lambda},
          {"position_cap", c.position_cap},
          {"position_cap_window", c.position_cap_window},
          {"drawn_game_weight", c.drawn_game_weight},
          {"root_wdl", c.root_wdl},
          {"fast_simulations", c.fast_simulations},
          {"opening_simulations_plies", c.opening_simulations_plies},
          {"opening_simulations", c.opening_simulations},
          {"root_noise_plies", c.root_noise_plies},
          {"opening_book", c.opening_book},
          {"opening_book_positions", c.book.lines.size()},
          {"random_opening_plies", c.random_opening_plies},
          {"random_opening_plies_min", c.random_opening_plies_min},
          {"random_opening_careful", c.random_opening_careful},
          {"random_opening_record_from", c.random_opening_record_from},
          {"branch_fraction", c.branch_fraction},
          {"resign_value", c.resign_value},
          {"resign_plies", c.resign_plies},
          {"resign_playthrough_fraction", c.resign_playthrough_fraction},
          {"draw_adjudicate_value", c.draw_adjudicate_value},
          {"draw_adjudicate_plies", c.draw_adjudicate_plies},
          {"draw_adjudicate_min_ply", c.draw_adjudicate_min_ply},
          {"adjudicate_max_false_positives", c.adjudicate_max_false_positives},
          {"adjudicate_min_evidence", c.adjudicate_min_evidence},
          {"material_adjudicate_margin", c.material_adjudicate_margin},
          {"material_adjudicate_plies", c.material_adjudicate_plies},
          {"eval_timeout", c.eval_timeout},
          {"push_timeout", c.push_timeout},
          {"connect_timeout", c.connect_timeout},
          {"sample_ring_capacity", c.sample_ring_capacity},
          {"metrics_port", c.metrics_port},
          {"metrics_bind", c.metrics_bind},
          {"log_interval", c.log_interval},
          {"log_level", c.log_level}};
}

}  // namespace az::selfplay
