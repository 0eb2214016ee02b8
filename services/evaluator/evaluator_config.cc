#include "services/evaluator/evaluator_config.h"

#include <CLI/CLI.hpp>
#include <bit>
#include <filesystem>

#include "ipc/endpoint.h"
#include "services/common/service_util.h"
#include "services/evaluator/eval_cache.h"

namespace az::evaluator {

void AddEvaluatorOptions(CLI::App& app, EvaluatorConfig& c) {
  service::AddServiceOptions(app, c,
                             {.run_dir = "the run directory (control socket, discovery, shm scope)",
                              .log_interval = "seconds between rate log lines; 0: none"});
  app.add_option(
      "--endpoint", c.endpoint,
      "control endpoint (default: ipc://RUN_DIR/SERVICE.ctl; tcp://HOST:PORT on request)");
  app.add_option(
      "--shm-scope", c.shm_scope,
      "shared-memory scope of the eval channel, shm:PREFIX or dir:PATH (default: derived "
      "from the run directory)");
  app.add_option("--game", c.game, "the game: " + service::GameKindChoices())
      ->check(CLI::IsMember(service::GameKindNames()))
      ->capture_default_str();

  app.add_option("--model", c.model,
                 "weights file to start from; default: a freshly initialised network (version 0)");
  app.add_option("--device", c.device, "auto (CUDA when available), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--threads", c.threads, "LibTorch intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--fp16", c.fp16, "fp16 autocast on CUDA")->capture_default_str();
  app.add_option("--cpu-bf16", c.cpu_bf16,
                 "bf16 autocast on the CPU: auto (where the CPU has bf16 dot products), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  app.add_option("--channels-last", c.channels_last, "run convolutions on NHWC memory")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "weight initialisation seed of a fresh network")
      ->capture_default_str();

  app.add_option("--max-batch", c.max_batch, "most positions per network call")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--stall-us", c.stall_us,
                 "fire the batch once no request arrived for this many microseconds")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--stall-fraction", c.stall_fraction,
                 "shorten the stall to this fraction of the network's recent time per batch; 0: "
                 "always --stall-us")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--max-collect-ms", c.max_collect_ms,
                 "fire the batch after collecting for this many milliseconds at most")
      ->check(CLI::Range(0.0, 1e4))
      ->capture_default_str();
  app.add_option("--first-wait-ms", c.first_wait_ms,
                 "longest wait for a batch's first request (shutdown and new models are noticed "
                 "between waits)")
      ->check(CLI::Range(1.0, 1e4))
      ->capture_default_str();
  app.add_option("--respond-timeout-ms", c.respond_timeout_ms,
                 "longest wait for room in a worker's response ring")
      ->check(CLI::Range(0.0, 1e4))
      ->capture_default_str();
  app.add_option("--cache-size", c.cache_size,
                 "entries of the cache of answers (0: off; a power of two; cleared when the "
                 "model changes)")
      ->check(CLI::Range(std::uint64_t{0}, kMaxCacheSize))
      ->capture_default_str();
  app.add_option("--random-symmetry", c.random_symmetry,
                 "evaluate each position under one of the game's board symmetries drawn at random "
                 "and map the priors back (Connect Four: the mirror; chess has none)")
      ->capture_default_str();

  app.add_option("--max-workers", c.max_workers,
                 "worker ids of the eval channel (when created here)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--request-capacity", c.request_capacity,
                 "slots of the shared request ring (a power of two; when created here)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();
  app.add_option("--response-capacity", c.response_capacity,
                 "slots of each worker's response ring (a power of two, at least the requests a "
                 "worker keeps in flight; when created here)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 24))
      ->capture_default_str();

  app.add_option("--model-events-from", c.model_events_from,
                 "service whose 'model' events are loaded between batches; empty: none")
      ->capture_default_str();
}

Status FinalizeConfig(EvaluatorConfig& c) {
  AZ_RETURN_IF_ERROR(service::FinalizeServiceOptions(c));
  AZ_ASSIGN_OR_RETURN(c.game_kind, service::ParseGameKind(c.game));
  if (!c.model.empty()) {
    c.model = std::filesystem::absolute(c.model).lexically_normal().string();
  }
  if (!std::has_single_bit(c.request_capacity)) {
    return InvalidArgument("--request-capacity must be a power of two, got " +
                           std::to_string(c.request_capacity));
  }
  if (!std::has_single_bit(c.response_capacity)) {
    return InvalidArgument("--response-capacity must be a power of two, got " +
                           std::to_string(c.response_capacity));
  }
  AZ_RETURN_IF_ERROR(ValidateCacheSize(c.cache_size, "--cache-size"));
  if (!c.model_events_from.empty()) {
    AZ_RETURN_IF_ERROR(
        ipc::ValidateServiceName(c.model_events_from).WithContext("--model-events-from"));
  }
  return Status::Ok();
}

nlohmann::json ConfigToJson(const EvaluatorConfig& c) {
  return {{"run_dir", c.run_dir},
          {"service", c.service},
          {"endpoint", c.endpoint},
          {"shm_scope", c.shm_scope},
          {"game", c.game},
          {"model", c.model},
          {"device", c.device},
          {"threads", c.threads},
          {"fp16", c.fp16},
          {"cpu_bf16", c.cpu_bf16},
          {"channels_last", c.channels_last},
          {"seed", c.seed},
          {"max_batch", c.max_batch},
          {"stall_us", c.stall_us},
          {"stall_fraction", c.stall_fraction},
          {"max_collect_ms", c.max_collect_ms},
          {"first_wait_ms", c.first_wait_ms},
          {"respond_timeout_ms", c.respond_timeout_ms},
          {"cache_size", c.cache_size},
          {"random_symmetry", c.random_symmetry},
          {"max_workers", c.max_workers},
          {"request_capacity", c.request_capacity},
          {"response_capacity", c.response_capacity},
          {"model_events_from", c.model_events_from},
          {"metrics_port", c.metrics_port},
          {"metrics_bind", c.metrics_bind},
          {"log_interval", c.log_interval},
          {"log_level", c.log_level}};
}

}  // namespace az::evaluator
