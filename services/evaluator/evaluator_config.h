#pragma once

// The configuration of az-evaluator: every flag, its default and its range, from the command line
// or a config file (CLI11: `--config FILE`, TOML or INI, keys named as the long flags; unknown keys
// are refused). deploy/config/evaluator.toml is a commented example with every key. The options
// every service shares are services/common's ServiceOptions, with this service's defaults set in
// the constructor.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/base/status.h"
#include "services/common/cli_fwd.h"
#include "services/common/game_kind.h"
#include "services/common/service_options.h"

namespace az::evaluator {

// run_dir (required): control socket, discovery record, shm scope.
struct EvaluatorConfig : service::ServiceOptions {
  EvaluatorConfig() : ServiceOptions({.service = "evaluator", .metrics_port = 9103}) {}

  // Where things live.
  std::string endpoint;   // control endpoint; default ipc://<run-dir>/<service>.ctl
  std::string shm_scope;  // eval channel scope; default derived from the run directory
  std::string game = "chess";

  // The network.
  std::string model;  // weights file; empty: a freshly initialised default network (version 0)
  std::string device = "auto";  // auto, cpu or cuda
  int threads = 1;              // LibTorch intra-op threads
  bool fp16 = true;             // fp16 autocast on CUDA
  // bf16 autocast on the CPU: auto (where the CPU has bf16 dot products), on, off.
  std::string cpu_bf16 = "auto";
  bool channels_last = true;
  std::uint64_t seed = 0;  // initialisation of the fresh network

  // Batching.
  int max_batch = 256;
  double stall_us = 300;         // fire when no request arrived for this long (at most)
  double stall_fraction = 0.05;  // ... or this fraction of the network's time per batch
  double max_collect_ms = 20;    // fire after collecting for this long at most
  double first_wait_ms = 100;    // longest wait for a batch's first request
  double respond_timeout_ms = 50;

  // The cache of answers (docs/evaluator.md, "The cache"): entries, 0 (off) or a power of two.
  std::uint64_t cache_size = std::uint64_t{1} << 18;
  // Each position evaluated under a board symmetry drawn at random (eval_batcher.h).
  bool random_symmetry = false;

  // The channel (used when this evaluator creates it; an existing one keeps its own).
  std::uint32_t max_workers = 16;
  std::uint64_t request_capacity = 4096;
  std::uint64_t response_capacity = 1024;

  // Models.
  std::string model_events_from = "learner";  // empty: no hot swap from events

  // Derived by FinalizeConfig.
  service::GameKind game_kind = games::Chess::kId;
};

// Registers every option (and --config) on `app`, with ranges.
void AddEvaluatorOptions(CLI::App& app, EvaluatorConfig& config);

// Normalises the run directory and checks what single flags cannot (names, powers of two).
// InvalidArgument naming the option.
Status FinalizeConfig(EvaluatorConfig& config);

// The effective configuration, for the startup log and `status`.
nlohmann::json ConfigToJson(const EvaluatorConfig& config);

}  // namespace az::evaluator
