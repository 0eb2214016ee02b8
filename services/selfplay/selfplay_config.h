#pragma once

// The configuration of az-selfplay: every flag, its default and its range, from the command line or
// a config file (CLI11: `--config FILE`, TOML or INI, keys named as the long flags; unknown keys
// are refused). deploy/config/selfplay.toml is a commented example with every key. Options whose
// default depends on the game (simulations, temperature plies, Dirichlet alpha, max plies, random
// opening plies, resignation and draw adjudication) take the game's default when left unset
// (the game definition's kPlay). The options every service shares are
// services/common's ServiceOptions, with this service's defaults set in the constructor: the
// service name (selfplay-<worker-id>) and the metrics port (-2: 9110 + worker id) are derived.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"
#include "services/common/cli_fwd.h"
#include "services/common/game_kind.h"
#include "services/common/service_options.h"
#include "services/selfplay/driver/selfplay_engine.h"

namespace az::selfplay {

struct SelfPlayConfig : service::ServiceOptions {
  SelfPlayConfig() : ServiceOptions({.metrics_port = -2}) {}

  // Where things live (and run_dir, required; service, default selfplay-<worker-id>).
  std::string endpoint;
  std::string shm_scope;  // eval channel and sample ring scope; default derived from the run dir
  std::string game = "chess";
  std::uint32_t worker_id = 0;

  // Games and search.
  int games = 64;
  int simulations = 0;  // 0: the game's default
  int leaves_per_game = 1;
  int groups = 2;
  std::uint64_t max_games = 0;  // 0: play until stopped
  int max_plies = 0;            // 0: the game's default
  float c_puct = 1.5f;
  float fpu_base = 1.0f;
  float risk_beta = 0.0f;
  float draw_score = -1.0f;  // -1: the game's default
  std::string virtual_loss = "loss";
  float dirichlet_alpha = 0.0f;  // 0: the game's default
  float dirichlet_epsilon = 0.25f;
  int temperature_plies = -1;  // -1: the game's default
  float temperature = 1.0f;
  bool reuse_tree = true;
  std::uint64_t seed = 0;               // 0: a random seed, logged
  std::string root_selection = "puct";  // puct or gumbel (core/mcts/options.h)
  bool terminal_lookahead = true;       // SearchOptions::detect_terminal_children
  bool solver = true;                   // SearchOptions::propagate_proofs
  int gumbel_considered = 16;
  float gumbel_c_visit = 50.0f;
  float gumbel_c_scale = 0.1f;
  // Playout-cap randomisation (KataGo): this share of moves searched with `simulations`, with
  // root noise, and recorded; the others with fast_simulations, no noise, not recorded. 1: off.
  float full_search_fraction = 1.0f;
  int fast_simulations = 0;  // 0: a quarter of simulations
  // Policy-surprise weighting (KataGo): samples repeated by their root's KL(target || prior). 0:
  // off.
  float policy_surprise_weight = 0.0f;
  // TD(lambda) value targets (driver/value_targets.h). 1: the game's outcome alone.
  float value_lambda = 1.0f;
  // A position recorded position_cap times among the last position_cap_window recorded samples
  // is not recorded again (driver/position_cap.h). 0: off.
  int position_cap = 0;
  int position_cap_window = 300000;
  // A drawn game's samples pushed this many times each in expectation. 1: as any game's.
  float drawn_game_weight = 1.0f;
  // The samples' root WDL: "playouts" (every playout through the root) or "improved" (the
  // children the search prefers; EngineOptions::improved_root_wdl).
  std::string root_wdl = "playouts";
  // Full searches before this ply get opening_simulations visits. 0: off.
  int opening_simulations_plies = 0;
  int opening_simulations = 0;  // 0: simulations
  // Full searches from this ply on (from the game's start) get no root noise. -1: every ply.
  int root_noise_plies = -1;

  // Openings and adjudication (docs/selfplay.md).
  std::string opening_book;           // positions, one a line; "": the game's start
  int random_opening_plies = -1;      // the most per game; -1: the game's default
  int random_opening_plies_min = -1;  // the fewest; -1: the game's default, capped at the most
  // Random plies never hand the opponent a win at once, where they can avoid it.
  bool random_opening_careful = false;
  // Random plies from this ply on are searched and recorded as off-policy samples. -1: none.
  int random_opening_record_from = -1;
  // This share of the games branch off a recent game's position by one random ply. 0: off.
  float branch_fraction = 0.0f;
  float resign_value = -1.0f;                    // -1: the game's default; 0: off
  int resign_plies = 0;                          // 0: the game's default
  float resign_playthrough_fraction = -1.0f;     // -1: the game's default
  float draw_adjudicate_value = -1.0f;           // -1: the game's default; 0: off
  int draw_adjudicate_plies = 0;                 // 0: the game's default
  int draw_adjudicate_min_ply = -1;              // -1: the game's default
  float adjudicate_max_false_positives = 0.05f;  // trust (adjudication.h); 1: from the start
  int adjudicate_min_evidence = 20;
  int material_adjudicate_margin = 0;  // pawns; 0: off (chess only: EngineOptions)
  int material_adjudicate_plies = 10;

  // Transport.
  double eval_timeout = 10;    // seconds without an answer before resubmitting
  double push_timeout = 1;     // seconds a sample push waits before logging and retrying
  double connect_timeout = 0;  // seconds to wait for the eval channel at start; 0: for ever
  std::uint64_t sample_ring_capacity = 4096;  // used when this worker creates the ring

  // Derived by FinalizeConfig.
  service::GameKind game_kind = games::Chess::kId;
  OpeningBook book;  // read from opening_book and checked against the game
};

void AddSelfPlayOptions(CLI::App& app, SelfPlayConfig& config);

// Fills the game defaults and the derived names, reads the opening book, checks what single flags
// cannot. InvalidArgument naming the option (a bad book line as "FILE:LINE: ..."), NotFound for a
// book that cannot be read.
Status FinalizeConfig(SelfPlayConfig& config);

// The engine's options from a finalised configuration.
EngineOptions ToEngineOptions(const SelfPlayConfig& config);

nlohmann::json ConfigToJson(const SelfPlayConfig& config);

}  // namespace az::selfplay
