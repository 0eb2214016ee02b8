#pragma once

// The configuration of az-learner: every flag, its default and its range, from the command line or
// a config file (CLI11: `--config FILE`, TOML or INI, keys named as the long flags; unknown keys
// are refused). deploy/config/learner.toml is a commented example with every key. The options every
// service shares are services/common's ServiceOptions, with this service's defaults set in the
// constructor.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "core/base/status.h"
#include "core/nn/distributed.h"
#include "core/nn/net_config.h"
#include "core/replay/beta_schedule.h"
#include "services/common/cli_fwd.h"
#include "services/common/game_kind.h"
#include "services/common/service_options.h"

namespace az::learner {

// run_dir (required): control socket, discovery record, default paths.
struct LearnerConfig : service::ServiceOptions {
  LearnerConfig() : ServiceOptions({.service = "learner", .metrics_port = 9104}) {}

  // Where things live.
  std::string endpoint;         // control endpoint; default ipc://<run-dir>/<service>.ctl
  std::string events_endpoint;  // model events; default ipc://<run-dir>/<service>.pub
  std::string checkpoint_dir;   // default <run-dir>/checkpoints
  std::string model_dir;        // default <run-dir>/models
  std::string replay_service = "replay";
  std::string replay_endpoint;  // default: the replay service's discovery record or default name
  std::string game = "chess";

  // The network.
  std::string net = "default";  // default (the game's preset), small or full (chess only)
  int policy_channels = 0;      // the policy head's 1x1 conv channels; 0: the preset's
  // default (the preset's), dense (a linear layer to every action) or cells (each column's logit
  // read at the cell the game's landing plane marks; Connect Four's preset): NetConfig's
  // policy_cell_plane.
  std::string policy_head = "default";
  int value_channels = 0;  // the value head's 1x1 conv channels; 0: the preset's
  int value_hidden = 0;    // the value head's hidden units; 0: the preset's
  // > 0: after grow_at_minutes of training, the network grows to this many residual blocks (new
  // blocks start as identities, nn::Trainer::Deepen); 0: it keeps its depth.
  int grow_blocks = 0;
  double grow_at_minutes = 0.0;
  std::string device = "auto";  // auto, cpu or cuda
  int threads = 1;              // LibTorch intra-op threads
  bool fp16 = true;             // fp16 autocast + loss scaling on CUDA
  // bf16 autocast on the CPU: auto (where the CPU has bf16 dot products), on, off.
  std::string cpu_bf16 = "auto";
  bool channels_last = true;
  std::uint64_t seed = 0;  // initialisation of a fresh network

  // Training.
  std::uint32_t batch = 256;
  double lr = 1e-3;
  std::int64_t warmup_steps = 0;
  std::int64_t lr_decay_steps = 0;  // cosine decay to lr_min over these steps; 0: constant lr
  double lr_decay_minutes = 0.0;    // the same over minutes of training; 0: off
  double lr_min = 0.0;
  double ema_decay = 0.0;  // > 0: publish a moving average of the weights (nn::TrainerOptions)
  double ema_warmup_share = 1.0 / 9.0;  // the average's window, as a share of the steps, at first
  double weight_decay = 1e-4;
  bool decoupled_weight_decay = false;
  std::string optimizer = "adam";  // adam or sgd (nn::OptimizerKind)
  double momentum = 0.9;           // sgd: Nesterov momentum
  bool symmetry_augment = false;   // --symmetry-augment: train on a random symmetry of each sample
  bool mirror_equivariant = false;  // --mirror-equivariant: tie the weights under the mirror
  double root_value_mix = 0.0;     // --root-value-mix: value target share of the root's WDL
  double value_loss_weight = 1.0;
  double max_grad_norm = 0;     // 0: no clipping
  std::uint64_t max_steps = 0;  // stop (checkpoint, exit 0) at this optimizer step; 0: never
  // After this many batches in a row are skipped as non-finite, reload the newest checkpoint.
  int rollback_after_skips = 20;

  // Prioritized replay.
  double beta_start = 0.4;
  double beta_end = 1.0;
  std::uint64_t beta_steps = 100000;  // horizon, in `beta_unit`
  std::string beta_unit = "steps";    // steps (learner steps) or samples (samples drawn)
  double sample_timeout = 1;          // seconds the daemon may hold one sample request
  double replay_timeout = 3;          // seconds on top of that before a request counts as lost

  // Checkpoints and models.
  std::uint64_t checkpoint_every = 1000;  // steps; 0: only on request and at shutdown
  int checkpoint_keep = 3;
  std::uint64_t publish_every = 100;  // steps
  int model_keep = 20;                // published models kept besides model-0; 0: all
  bool resume = true;                 // resume from the newest valid checkpoint

  // The learning curve (solver_benchmark.h): games with a solver score every
  // `benchmark_every`-th published model against it; the collapse watch's thresholds.
  bool benchmark = true;
  std::uint64_t benchmark_every = 1;  // published models
  // Which positions (Connect Four): a shipped set's name ("small", "full") or a set file
  // (services/score/position_set.h); empty: the game's default (Connect Four's small set).
  std::string benchmark_set;
  double collapse_drop = 0.05;        // benchmark share below the run's best by this; 0: off
  double collapse_value_loss = 0.01;  // value loss average below this; 0: off

  // Data-parallel training (docs/scaling.md, "A data-parallel learner"): world_size learners, each
  // on its own batches, average their gradients every step. 1: a single learner, nothing
  // distributed is created.
  int world_size = 1;
  int rank = 0;  // [0, world_size); rank 0 checkpoints and publishes
  std::string rendezvous = "tcp://127.0.0.1:29500";  // rank 0's TCPStore, for every rank
  double dist_timeout = 10;                          // seconds: every collective once joined
  double rendezvous_timeout = 120;                   // seconds: waiting for all ranks to join
  std::string dist_bind;  // the address this rank's Gloo binds to; empty: derived (distributed.h)

  // Derived by FinalizeConfig.
  service::GameKind game_kind = games::Chess::kId;
  nn::NetConfig net_config;
  replay::BetaScheduleOptions beta;
  nn::ProcessGroupOptions group;  // when world_size > 1
};

// Registers every option (and --config) on `app`, with ranges. Unknown config-file keys are errors.
void AddLearnerOptions(CLI::App& app, LearnerConfig& config);

// "6x64" -> (6, 64): --net's BLOCKSxFILTERS form (blocks 1-64, filters 1-1024); nullopt otherwise.
std::optional<std::pair<int, int>> ParseNetShape(const std::string& text);

// Fills the defaults that depend on the run directory and the game, and checks what single flags
// cannot (names, the net for the game, beta range). InvalidArgument naming the option.
Status FinalizeConfig(LearnerConfig& config);

// The effective configuration, for the startup log and `status`.
nlohmann::json ConfigToJson(const LearnerConfig& config);

}  // namespace az::learner
