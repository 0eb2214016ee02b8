#include "services/learner/learner_config.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>

#include "core/nn/game_network.h"
#include "core/nn/trainer.h"  // CheckMirrorable
#include "ipc/endpoint.h"
#include "services/common/service_util.h"

namespace az::learner {

std::optional<std::pair<int, int>> ParseNetShape(const std::string& text) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == text.size()) return std::nullopt;
  const auto number = [](std::string_view digits, int hi) -> std::optional<int> {
    if (digits.empty() || digits.size() > 4) return std::nullopt;
    int value = 0;
    for (char ch : digits) {
      if (ch < '0' || ch > '9') return std::nullopt;
      value = value * 10 + (ch - '0');
    }
    if (value < 1 || value > hi) return std::nullopt;
    return value;
  };
  const std::optional<int> blocks = number(std::string_view(text).substr(0, x), 64);
  const std::optional<int> filters = number(std::string_view(text).substr(x + 1), 1024);
  if (!blocks || !filters) return std::nullopt;
  return std::make_pair(*blocks, *filters);
}

void AddLearnerOptions(CLI::App& app, LearnerConfig& c) {
  service::AddServiceOptions(
      app, c, {.run_dir = "the run directory (control socket, discovery, checkpoints, models)"});
  app.add_option(
      "--endpoint", c.endpoint,
      "control endpoint (default: ipc://RUN_DIR/SERVICE.ctl; tcp://HOST:PORT on request)");
  app.add_option("--events-endpoint", c.events_endpoint,
                 "where model events are published (default: ipc://RUN_DIR/SERVICE.pub)");
  app.add_option("--checkpoint-dir", c.checkpoint_dir, "default: RUN_DIR/checkpoints");
  app.add_option("--model-dir", c.model_dir, "published weights files; default: RUN_DIR/models");
  app.add_option("--replay-service", c.replay_service, "the replay daemon's service name")
      ->capture_default_str();
  app.add_option("--replay-endpoint", c.replay_endpoint,
                 "the replay daemon's control endpoint (default: from its discovery record)");
  app.add_option("--game", c.game, "the game: " + service::GameKindChoices())
      ->check(CLI::IsMember(service::GameKindNames()))
      ->capture_default_str();

  app.add_option("--net", c.net,
                 "network shape: default (the game's preset: " + service::GameKindNetShapes() +
                     "), small (chess's preset) or full (chess 15x192, for a GPU), or "
                     "BLOCKSxFILTERS for any game (e.g. 6x64; the heads as the preset's)")
      ->check([](const std::string& v) {
        return v == "default" || v == "small" || v == "full" || ParseNetShape(v).has_value()
                   ? std::string()
                   : "--net is default, small, full or BLOCKSxFILTERS (1-64 x 1-1024), got " + v;
      })
      ->capture_default_str();
  app.add_option("--grow-blocks", c.grow_blocks,
                 "grow the network to this many residual blocks after --grow-at-minutes of "
                 "training (the new blocks start as identities, after the old ones); 0: never")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  app.add_option("--grow-at-minutes", c.grow_at_minutes,
                 "minutes of training (as --lr-decay-minutes counts them) before --grow-blocks")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--policy-channels", c.policy_channels,
                 "channels of the policy head's 1x1 convolution (0: the preset's: " +
                     service::GameKindNetField(&games::NetShape::policy_channels) + ")")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--policy-head", c.policy_head,
                 "default (the preset's), dense (a linear layer from every cell to every action) "
                 "or cells (a column's logit read at the cell its stone lands in; Connect Four's "
                 "preset)")
      ->check(CLI::IsMember({"default", "dense", "cells"}))
      ->capture_default_str();
  app.add_option("--value-channels", c.value_channels,
                 "channels of the value head's 1x1 convolution (0: the preset's: " +
                     service::GameKindNetField(&games::NetShape::value_channels) + ")")
      ->check(CLI::Range(0, 256))
      ->capture_default_str();
  app.add_option("--value-hidden", c.value_hidden,
                 "hidden units of the value head (0: the preset's: " +
                     service::GameKindNetField(&games::NetShape::value_hidden) + ")")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  app.add_option("--device", c.device, "auto (CUDA when available), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--threads", c.threads, "LibTorch intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--fp16", c.fp16, "fp16 autocast with loss scaling on CUDA")
      ->capture_default_str();
  app.add_option("--cpu-bf16", c.cpu_bf16,
                 "bf16 autocast on the CPU: auto (where the CPU has bf16 dot products), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  app.add_option("--channels-last", c.channels_last, "run convolutions on NHWC memory")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "weight initialisation seed of a fresh network")
      ->capture_default_str();

  app.add_option("--batch", c.batch, "samples per training step")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--lr", c.lr, "the learning rate (Adam's; SGD's step size)")
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  app.add_option("--warmup-steps", c.warmup_steps, "linear learning-rate warm-up, in steps")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--lr-decay-steps", c.lr_decay_steps,
                 "cosine decay of the learning rate to --lr-min over this many steps, then "
                 "--lr-min; 0: constant")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--lr-decay-minutes", c.lr_decay_minutes,
                 "the same cosine decay over this many minutes of training (wall-clock time "
                 "between steps, carried in checkpoints; for runs of a fixed length in time); 0: "
                 "off; not with --lr-decay-steps")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--lr-min", c.lr_min, "the learning rate at the end of the decay")
      ->check(CLI::Range(0.0, 1e12))
      ->capture_default_str();
  app.add_option("--ema-decay", c.ema_decay,
                 "publish an exponential moving average of the weights with this decay per step "
                 "(0.99: about the last 100 steps) instead of the newest weights; 0: off")
      ->check(CLI::Range(0.0, 0.9999))
      ->capture_default_str();
  app.add_option("--ema-warmup-share", c.ema_warmup_share,
                 "until the average spans ema-decay's window, it spans about this share of the "
                 "steps so far (0.111: TensorFlow's (1 + step) / (10 + step)); larger smooths the "
                 "first minutes more and lags more")
      ->check(CLI::Range(0.001, 1.0))
      ->capture_default_str();
  app.add_option("--weight-decay", c.weight_decay,
                 "weight decay on convolution and linear weights (never BatchNorm or biases)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--decoupled-weight-decay", c.decoupled_weight_decay,
                 "AdamW's decoupled decay instead of L2 added to the gradient (adam only)")
      ->capture_default_str();
  app.add_option("--optimizer", c.optimizer,
                 "adam, or sgd (Nesterov momentum, as AlphaZero, Leela and KataGo train; "
                 "it wants a learning rate about ten times Adam's)")
      ->check(CLI::IsMember({"adam", "sgd"}))
      ->capture_default_str();
  app.add_option("--momentum", c.momentum, "sgd: the Nesterov momentum")
      ->check(CLI::Range(0.0, 0.999))
      ->capture_default_str();
  app.add_option("--symmetry-augment", c.symmetry_augment,
                 "train on a random board symmetry of each sample (Connect Four: the mirror; "
                 "tic-tac-toe: the square's 8; chess: none)")
      ->capture_default_str();
  app.add_option("--mirror-equivariant", c.mirror_equivariant,
                 "tie the network's weights so that it is exactly equivariant under the board's "
                 "left-right mirror (Connect Four; docs/nn.md)")
      ->capture_default_str();
  app.add_option("--root-value-mix", c.root_value_mix,
                 "value target: (1 - m) * game outcome + m * the search root's WDL")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--value-loss-weight", c.value_loss_weight, "L = L_policy + w * L_value")
      ->check(CLI::Range(0.0, 1e3))
      ->capture_default_str();
  app.add_option("--max-grad-norm", c.max_grad_norm, "clip the total gradient norm; 0: off")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  app.add_option("--benchmark", c.benchmark,
                 "score each published model's raw policy against the game's exact solver (games "
                 "with one: Connect Four, tic-tac-toe) in the background: log, status, metrics")
      ->capture_default_str();
  app.add_option("--benchmark-every", c.benchmark_every,
                 "score every N-th published model (the newest waiting one when scoring lags)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32))
      ->capture_default_str();
  app.add_option(
         "--benchmark-set", c.benchmark_set,
         "the benchmark's positions (games with stored sets: Connect Four): a shipped set's "
         "name (small, full) or a set file; empty: the game's default (small)")
      ->capture_default_str();
  app.add_option("--collapse-drop", c.collapse_drop,
                 "warn when the benchmark share falls this far below the run's best; 0: off")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--collapse-value-loss", c.collapse_value_loss,
                 "warn when the value loss average falls below this; 0: off")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  app.add_option("--max-steps", c.max_steps,
                 "checkpoint and exit 0 at this optimizer step; 0: train until stopped")
      ->capture_default_str();
  app.add_option("--rollback-after-skips", c.rollback_after_skips,
                 "reload the newest checkpoint after this many non-finite batches in a row; 0: "
                 "never")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();

  app.add_option("--beta-start", c.beta_start, "importance-sampling exponent at the start")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--beta-end", c.beta_end, "importance-sampling exponent after --beta-steps")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--beta-steps", c.beta_steps,
                 "beta goes linearly from start to end over this many units (--beta-unit)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 50))
      ->capture_default_str();
  app.add_option("--beta-unit", c.beta_unit, "steps (learner steps) or samples (samples drawn)")
      ->check(CLI::IsMember({"steps", "samples"}))
      ->capture_default_str();
  app.add_option("--sample-timeout", c.sample_timeout,
                 "seconds the replay daemon may hold one sample request (buffer below its "
                 "minimum, rate limiter)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--replay-timeout", c.replay_timeout,
                 "seconds beyond that before a request to the replay daemon counts as lost")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();

  app.add_option("--checkpoint-every", c.checkpoint_every,
                 "steps between checkpoints (model + optimizer + step); 0: only on request and "
                 "at shutdown")
      ->capture_default_str();
  app.add_option("--checkpoint-keep", c.checkpoint_keep, "checkpoints kept, newest first")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--publish-every", c.publish_every, "steps between published models")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 50))
      ->capture_default_str();
  app.add_option("--model-keep", c.model_keep,
                 "published weights files kept besides model-0 (the initial one); 0: all")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--world-size", c.world_size,
                 "learners training one network together, data-parallel (docs/scaling.md); 1: "
                 "a single learner")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--rank", c.rank,
                 "this learner's rank in [0, world-size): rank 0 checkpoints and publishes models")
      ->check(CLI::Range(0, 4095))
      ->capture_default_str();
  app.add_option("--rendezvous", c.rendezvous,
                 "tcp://HOST:PORT of rank 0's rendezvous store (rank 0 listens on PORT), the same "
                 "for every rank")
      ->capture_default_str();
  app.add_option("--dist-timeout", c.dist_timeout,
                 "seconds a collective may wait for the other ranks before this learner exits "
                 "(a rank died or hung)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--rendezvous-timeout", c.rendezvous_timeout,
                 "seconds to wait at startup for rank 0's store and all ranks to join")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option("--dist-bind", c.dist_bind,
                 "the address this rank's Gloo transport binds to; empty: 127.0.0.1 for a "
                 "loopback rendezvous, else $GLOO_SOCKET_IFNAME or this host's name")
      ->capture_default_str();
  app.add_flag("--resume,!--no-resume", c.resume,
               "resume from the newest valid checkpoint (default); --no-resume refuses to start "
               "over existing checkpoints")
      ->capture_default_str();
}

namespace {

std::string Absolute(const std::string& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

}  // namespace

Status FinalizeConfig(LearnerConfig& c) {
  if (c.rank < 0 || c.rank >= c.world_size) {
    return InvalidArgument("--rank " + std::to_string(c.rank) + " must lie in [0, " +
                           std::to_string(c.world_size - 1) + "] for --world-size " +
                           std::to_string(c.world_size));
  }
  // Checked for a single learner too: a typo shows before the second rank is started.
  Result<nn::RendezvousAddress> parsed = nn::ParseRendezvous(c.rendezvous);
  if (!parsed.ok()) return parsed.status().WithContext("--rendezvous");
  const nn::RendezvousAddress address = *parsed;
  // Ranks on one host share the run directory: each needs its own service name (instance lock,
  // control socket). A rank other than 0 left at the default name takes learner-<rank>.
  if (c.rank > 0 && c.service == "learner") c.service = "learner-" + std::to_string(c.rank);
  AZ_RETURN_IF_ERROR(service::FinalizeServiceOptions(c));
  AZ_RETURN_IF_ERROR(ipc::ValidateServiceName(c.replay_service).WithContext("--replay-service"));
  AZ_ASSIGN_OR_RETURN(c.game_kind, service::ParseGameKind(c.game));
  c.checkpoint_dir =
      c.checkpoint_dir.empty() ? c.run_dir + "/checkpoints" : Absolute(c.checkpoint_dir);
  c.model_dir = c.model_dir.empty() ? c.run_dir + "/models" : Absolute(c.model_dir);
  if (c.events_endpoint.empty()) {
    AZ_ASSIGN_OR_RETURN(c.events_endpoint, ipc::EventsEndpoint(c.run_dir, c.service));
  }

  if (c.optimizer == "sgd" && c.decoupled_weight_decay) {
    return InvalidArgument(
        "--decoupled-weight-decay is AdamW's; with --optimizer sgd the decay is added to the "
        "gradient");
  }

  const games::GameInfo* game = games::FindGameById(c.game_kind);
  c.net_config = nn::DefaultNetConfig(*game);
  if (const std::optional<std::pair<int, int>> shape = ParseNetShape(c.net)) {
    c.net_config.blocks = shape->first;
    c.net_config.filters = shape->second;
  } else if (c.game_kind == games::Chess::kId) {
    if (c.net == "full") c.net_config = nn::NetConfig::ChessFull();
  } else if (c.net != "default") {
    return InvalidArgument("--net " + c.net + " is for chess; " + std::string(game->name) +
                           " takes default (" + c.net_config.ToString() + ") or BLOCKSxFILTERS");
  }
  if (c.policy_channels > 0) c.net_config.policy_channels = c.policy_channels;
  if (c.policy_head == "dense") {
    c.net_config.policy_cell_plane = -1;
  } else if (c.policy_head == "cells") {
    // The game's own definition says which plane marks where a move lands (its kNet).
    if (game->net.policy_cell_plane < 0) {
      return InvalidArgument(
          "--policy-head cells is for games whose moves are columns with a "
          "landing plane (connect4), not " +
          std::string(game->name));
    }
    c.net_config.policy_cell_plane = game->net.policy_cell_plane;
  }
  if (c.value_channels > 0) c.net_config.value_channels = c.value_channels;
  if (c.value_hidden > 0) c.net_config.value_hidden = c.value_hidden;
  if (c.mirror_equivariant) {
    const Status mirrorable = nn::CheckMirrorable(c.net_config);
    if (!mirrorable.ok()) return InvalidArgument("--mirror-equivariant: " + mirrorable.message());
  }
  if (!(c.lr > 0)) return InvalidArgument("--lr must be positive");
  if (c.grow_blocks > 0 && c.grow_blocks <= c.net_config.blocks) {
    return InvalidArgument("--grow-blocks " + std::to_string(c.grow_blocks) +
                           " must be more than the network's " +
                           std::to_string(c.net_config.blocks) + " blocks (0: never grow)");
  }
  if (c.grow_blocks > 0 && c.world_size > 1) {
    return InvalidArgument(
        "--grow-blocks is for a single learner: the ranks of a group would have to grow at the "
        "same step");
  }
  if (c.lr_decay_steps > 0 && c.lr_decay_minutes > 0) {
    return InvalidArgument("--lr-decay-steps and --lr-decay-minutes both set: choose one schedule");
  }

  c.beta.start = c.beta_start;
  c.beta.end = c.beta_end;
  c.beta.horizon = c.beta_steps;
  c.beta.unit = c.beta_unit == "samples" ? replay::BetaScheduleOptions::Unit::kSamplesDrawn
                                         : replay::BetaScheduleOptions::Unit::kLearnerSteps;
  AZ_RETURN_IF_ERROR(replay::BetaSchedule::Create(c.beta).status().WithContext("beta schedule"));

  c.group = {};
  c.group.world_size = c.world_size;
  c.group.rank = c.rank;
  c.group.host = address.host;
  c.group.port = address.port;
  c.group.timeout = std::chrono::milliseconds(std::llround(c.dist_timeout * 1000));
  c.group.rendezvous_timeout = std::chrono::milliseconds(std::llround(c.rendezvous_timeout * 1000));
  c.group.bind_address = c.dist_bind;
  if (c.world_size > 1) AZ_RETURN_IF_ERROR(c.group.Validate().WithContext("learner group"));
  return Status::Ok();
}

nlohmann::json ConfigToJson(const LearnerConfig& c) {
  return {{"run_dir", c.run_dir},
          {"service", c.service},
          {"endpoint", c.endpoint},
          {"events_endpoint", c.events_endpoint},
          {"checkpoint_dir", c.checkpoint_dir},
          {"model_dir", c.model_dir},
          {"replay_service", c.replay_service},
          {"replay_endpoint", c.replay_endpoint},
          {"game", c.game},
          {"net", c.net},
          {"policy_channels", c.policy_channels},
          {"policy_head", c.policy_head},
          {"value_channels", c.value_channels},
          {"value_hidden", c.value_hidden},
          {"net_shape", c.net_config.ToString()},
          {"grow_blocks", c.grow_blocks},
          {"grow_at_minutes", c.grow_at_minutes},
          {"device", c.device},
          {"threads", c.threads},
          {"fp16", c.fp16},
          {"cpu_bf16", c.cpu_bf16},
          {"channels_last", c.channels_last},
          {"seed", c.seed},
          {"batch", c.batch},
          {"lr", c.lr},
          {"warmup_steps", c.warmup_steps},
          {"lr_decay_steps", c.lr_decay_steps},
          {"lr_decay_minutes", c.lr_decay_minutes},
          {"lr_min", c.lr_min},
          {"ema_decay", c.ema_decay},
          {"ema_warmup_share", c.ema_warmup_share},
          {"weight_decay", c.weight_decay},
          {"decoupled_weight_decay", c.decoupled_weight_decay},
          {"optimizer", c.optimizer},
          {"momentum", c.momentum},
          {"symmetry_augment", c.symmetry_augment},
          {"mirror_equivariant", c.mirror_equivariant},
          {"root_value_mix", c.root_value_mix},
          {"value_loss_weight", c.value_loss_weight},
          {"max_grad_norm", c.max_grad_norm},
          {"max_steps", c.max_steps},
          {"rollback_after_skips", c.rollback_after_skips},
          {"beta_start", c.beta_start},
          {"beta_end", c.beta_end},
          {"beta_steps", c.beta_steps},
          {"beta_unit", c.beta_unit},
          {"sample_timeout", c.sample_timeout},
          {"replay_timeout", c.replay_timeout},
          {"checkpoint_every", c.checkpoint_every},
          {"checkpoint_keep", c.checkpoint_keep},
          {"publish_every", c.publish_every},
          {"model_keep", c.model_keep},
          {"resume", c.resume},
          {"benchmark", c.benchmark},
          {"benchmark_every", c.benchmark_every},
          {"benchmark_set", c.benchmark_set},
          {"collapse_drop", c.collapse_drop},
          {"collapse_value_loss", c.collapse_value_loss},
          {"world_size", c.world_size},
          {"rank", c.rank},
          {"rendezvous", c.rendezvous},
          {"dist_timeout", c.dist_timeout},
          {"rendezvous_timeout", c.rendezvous_timeout},
          {"dist_bind", c.dist_bind},
          {"metrics_port", c.metrics_port},
          {"metrics_bind", c.metrics_bind},
          {"log_interval", c.log_interval},
          {"log_level", c.log_level}};
}

}  // namespace az::learner
