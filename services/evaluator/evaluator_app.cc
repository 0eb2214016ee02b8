#include "services/evaluator/evaluator_app.h"

#include <thread>
#include <utility>

#include "core/base/log.h"
#include "core/nn/weights_file.h"
#include "ipc/args.h"
#include "ipc/endpoint.h"
#include "services/common/eval_protocol.h"
#include "services/common/service_util.h"

namespace az::evaluator {
namespace {

using Clock = std::chrono::steady_clock;

template <typename Duration>
Duration FromMicros(double microseconds) {
  return std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, std::micro>(microseconds));
}

nn::DeviceChoice ParseDevice(const std::string& device) {
  if (device == "cpu") return nn::DeviceChoice::kCpu;
  if (device == "cuda") return nn::DeviceChoice::kCuda;
  return nn::DeviceChoice::kAuto;
}

// The channel spec for the configured game.
shm::ChannelSpec ChannelSpecFor(const EvaluatorConfig& c) {
  const service::EvalChannelOptions options{.max_workers = c.max_workers,
                                            .request_capacity = c.request_capacity,
                                            .response_capacity = c.response_capacity};
  return games::VisitGame(
      c.game_kind, [&]<games::GameDefinition G>() { return service::EvalChannelSpec<G>(options); });
}

}  // namespace

Result<std::unique_ptr<EvaluatorApp>> EvaluatorApp::Create(const EvaluatorConfig& config) {
  std::unique_ptr<EvaluatorApp> app(new EvaluatorApp(config));
  const EvaluatorConfig& c = app->config_;

  // The network.
  nn::RuntimeOptions& runtime = app->runtime_;
  runtime.device = ParseDevice(c.device);
  runtime.intra_op_threads = c.threads;
  runtime.channels_last = c.channels_last;
  runtime.cuda_fp16 = c.fp16;
  runtime.cpu_bf16 = nn::ResolveCpuBf16(c.cpu_bf16);
  runtime.input_layout = GameInputLayout(c.game_kind);
  runtime.seed = c.seed;
  if (c.model.empty()) {
    const nn::NetConfig net = DefaultNetConfig(c.game_kind);
    AZ_ASSIGN_OR_RETURN(app->network_, nn::Network::Create({.net = net, .runtime = runtime}));
    AZ_LOG(kInfo) << "no --model: starting from a freshly initialised " << c.game << " network ("
                  << net.ToString() << ", seed " << c.seed << "), model version 0";
  } else {
    AZ_ASSIGN_OR_RETURN(app->network_, nn::Network::FromFile(c.model, runtime));
    AZ_RETURN_IF_ERROR(CheckNetworkFitsGame(c.game_kind, app->network_->config())
                           .WithContext("--model " + c.model));
    app->model_path_ = c.model;
    AZ_LOG(kInfo) << "loaded " << c.model << ": model version " << app->network_->model_version()
                  << ", " << app->network_->config().ToString();
  }
  AZ_LOG(kInfo) << "network on " << app->network_->DeviceName()
                << (app->network_->UsesFp16()   ? " with fp16 autocast"
                    : app->network_->UsesBf16() ? " with bf16 autocast"
                                                : " in fp32")
                << " (cpu-bf16 " << c.cpu_bf16 << ", native bf16 "
                << (nn::CpuHasNativeBf16() ? "yes" : "no") << "), " << c.threads
                << " intra-op thread(s)";

  // The eval channel.
  AZ_ASSIGN_OR_RETURN(shm::Scope scope, service::RunShmScope(c.run_dir, c.shm_scope));
  app->scope_ = scope.ToString();
  app->channel_name_ = service::EvalChannelName(c.game_kind);
  AZ_ASSIGN_OR_RETURN(shm::RequestServer channel,
                      shm::RequestServer::OpenOrCreate(scope, app->channel_name_, ChannelSpecFor(c),
                                                       {}, {.reclaim_stale = true}));
  const shm::ChannelSpec& spec = channel.spec();
  AZ_LOG(kInfo) << "eval channel " << app->scope_ << "/" << app->channel_name_ << ": "
                << spec.max_workers << " workers, request ring " << spec.request_capacity << " x "
                << spec.request_bytes << " B, response rings " << spec.response_capacity << " x "
                << spec.response_bytes << " B";
  BatchOptions batch;
  batch.max_batch = c.max_batch;
  batch.stall = FromMicros<std::chrono::microseconds>(c.stall_us);
  batch.stall_fraction = c.stall_fraction;
  batch.max_collect = FromMicros<std::chrono::microseconds>(c.max_collect_ms * 1000);
  batch.first_wait = FromMicros<std::chrono::milliseconds>(c.first_wait_ms * 1000);
  batch.respond_timeout = FromMicros<std::chrono::milliseconds>(c.respond_timeout_ms * 1000);
  batch.cache_size = c.cache_size;
  batch.random_symmetry = c.random_symmetry;
  // Not c.seed itself: that seeds the network's initial weights, and the two streams stay apart.
  batch.symmetry_seed = c.seed + 1;
  AZ_ASSIGN_OR_RETURN(app->batcher_, CreateEvalBatcher(c.game_kind, std::move(channel), batch));
  const EvalCacheStats cache = app->batcher_->CacheStats();
  if (cache.capacity > 0) {
    AZ_LOG(kInfo) << "cache of answers: " << cache.capacity << " entries x " << cache.entry_bytes
                  << " B (at most "
                  << (cache.capacity * cache.entry_bytes + (1 << 20) - 1) / (1 << 20)
                  << " MiB), cleared on every model change";
  } else {
    AZ_LOG(kInfo) << "cache of answers: off (--cache-size 0)";
  }
  if (c.random_symmetry) {
    AZ_LOG(kInfo) << "random symmetry: each position is evaluated under one of the game's board "
                     "symmetries, drawn at random, and its priors mapped back";
  }

  // Metrics.
  if (c.metrics_port >= 0) {
    AZ_ASSIGN_OR_RETURN(app->exporter_,
                        service::MetricsExporter::Start(c.metrics_bind, c.metrics_port));
    app->metrics_ = std::make_unique<EvaluatorMetrics>(app->exporter_->registry());
    AZ_LOG(kInfo) << "metrics on " << c.metrics_bind << ":" << app->exporter_->port();
  }

  // Model events.
  if (!c.model_events_from.empty()) {
    AZ_ASSIGN_OR_RETURN(std::string events, ipc::EventsEndpoint(c.run_dir, c.model_events_from));
    AZ_ASSIGN_OR_RETURN(app->watcher_, ModelWatcher::Start(events));
    AZ_LOG(kInfo) << "following model events of " << c.model_events_from << " at " << events;
  }

  // The control server.
  ipc::ServerOptions server;
  server.service = c.service;
  server.run_dir = c.run_dir;
  server.endpoint = c.endpoint;
  server.metrics_port = app->metrics_port();
  server.status = [raw = app.get()] { return raw->StatusJson(); };
  AZ_ASSIGN_OR_RETURN(app->server_, ipc::Server::Create(std::move(server)));
  app->RegisterCommands();
  {
    std::lock_guard<std::mutex> lock(app->status_mutex_);
    app->totals_.model_version = app->network_->model_version();
    app->totals_.cache_capacity = app->batcher_->CacheStats().capacity;
    app->model_path_shown_ = app->model_path_;
    app->net_shown_ = app->network_->config().ToString();
    app->device_shown_ = app->network_->DeviceName();
    app->fp16_shown_ = app->network_->UsesFp16();
    app->bf16_shown_ = app->network_->UsesBf16();
  }
  return app;
}

EvaluatorApp::~EvaluatorApp() {
  // The server first: no handler may run while the rest goes away.
  server_.reset();
  watcher_.reset();
}

void EvaluatorApp::RegisterCommands() {
  server_->RegisterDeferred(
      "load-model",
      [this](ipc::Request& request, ipc::Responder& responder) {
        Result<std::string> path = ipc::GetArg<std::string>(request.args, "path");
        if (!path.ok()) {
          responder.Send(path.status());
          return;
        }
        if (path->empty()) {
          responder.Send(InvalidArgument("\"path\" must name a weights file"));
          return;
        }
        // Loaded by the batching loop between batches: the network is not thread-safe.
        std::lock_guard<std::mutex> lock(load_mutex_);
        load_queue_.push_back({*path, std::move(responder)});
      },
      "load-model {\"path\": P}: load the weights file P between batches; answers "
      "{model_version, path}");
}

Status EvaluatorApp::Run() {
  AZ_RETURN_IF_ERROR(server_->Start());
  service::LogEffectiveConfig(ConfigToJson(config_));
  AZ_LOG(kInfo) << "serving " << config_.game << " evaluations on " << server_->endpoint();
  last_log_ = Clock::now();
  last_publish_ = {};  // the gauges are set by the first Publish, not 250 ms later
  while (!stop_.load(std::memory_order_acquire) && !server_->shutdown_requested()) {
    ServeLoadRequests();
    TakeModelEvents();
    if (server_->paused()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      Publish(nullptr);
      continue;
    }
    const BatchReport report = batcher_->Step(*network_);
    if (report.taken > 0) {
      if (!report.forward_status.ok()) {
        AZ_LOG(kError) << "the network failed on a batch of " << report.taken
                       << " (answered as failed): " << report.forward_status.ToString();
      }
      Publish(&report);
    } else {
      Publish(nullptr);
    }
    if (config_.log_interval > 0 &&
        Clock::now() - last_log_ >= std::chrono::duration<double>(config_.log_interval)) {
      LogRates();
    }
  }
  AZ_LOG(kInfo) << "shutting down after " << counters_.batches << " batches, "
                << counters_.positions << " positions";
  server_->Stop();
  return Status::Ok();
}

void EvaluatorApp::Stop() {
  stop_.store(true, std::memory_order_release);
  if (server_) server_->RequestShutdown();
}

Status EvaluatorApp::LoadModel(const std::string& path, std::string_view why) {
  const std::uint64_t before = network_->model_version();
  // Same shapes: the weights are copied into the running network. Other shapes of the same game
  // (the learner trains another size than the one this evaluator started with): a new network is
  // built from the file and replaces this one. Either way a refused file changes nothing.
  Status status;
  Result<nn::WeightsFileInfo> info = nn::ReadWeightsFileInfo(path);
  if (!info.ok()) {
    status = info.status();
  } else if (info->net == network_->config()) {
    status = network_->LoadWeights(path);
  } else if (Status fits = CheckNetworkFitsGame(config_.game_kind, info->net); !fits.ok()) {
    status = fits.WithContext(path);
  } else {
    Result<std::unique_ptr<nn::Network>> rebuilt = nn::Network::FromFile(path, runtime_);
    if (rebuilt.ok()) {
      AZ_LOG(kInfo) << path << " holds a network of other shapes (" << info->net.ToString()
                    << "); replacing the " << network_->config().ToString() << " network";
      network_ = std::move(rebuilt).value();
    } else {
      status = rebuilt.status();
    }
  }
  // New weights (even of the same model version): no answer of the old ones may be served again.
  if (status.ok()) batcher_->InvalidateCache();
  std::lock_guard<std::mutex> lock(status_mutex_);
  if (!status.ok()) {
    ++counters_.model_load_failures;
    AZ_LOG(kError) << "refused " << path << " (" << why << "): " << status.ToString()
                   << "; still serving model version " << before;
    return status;
  }
  ++counters_.model_loads;
  model_path_ = path;
  model_path_shown_ = path;
  net_shown_ = network_->config().ToString();
  totals_.model_version = network_->model_version();
  AZ_LOG(kInfo) << "loaded " << path << " (" << why << "): model version " << before << " -> "
                << network_->model_version();
  return Status::Ok();
}

void EvaluatorApp::ServeLoadRequests() {
  std::deque<LoadRequest> pending;
  {
    std::lock_guard<std::mutex> lock(load_mutex_);
    pending.swap(load_queue_);
  }
  for (LoadRequest& request : pending) {
    const Status status = LoadModel(request.path, "load-model command");
    if (!status.ok()) {
      request.responder.Send(status);
      continue;
    }
    ipc::Reply reply;
    reply.body = {{"model_version", network_->model_version()}, {"path", request.path}};
    request.responder.Send(std::move(reply));
  }
}

void EvaluatorApp::TakeModelEvents() {
  if (!watcher_) return;
  std::optional<ipc::ModelPublished> model = watcher_->TakeNewer();
  if (!model) return;
  const std::uint64_t current = network_->model_version();
  if (model->version >= 0 && static_cast<std::uint64_t>(model->version) <= current &&
      !model_path_.empty()) {
    AZ_LOG(kInfo) << "model " << model->version << " published; already serving version "
                  << current;
    return;
  }
  const Status status =
      LoadModel(model->path, "model " + std::to_string(model->version) + " published");
  if (status.ok() && network_->model_version() != static_cast<std::uint64_t>(model->version)) {
    AZ_LOG(kWarning) << "model event says version " << model->version << " but " << model->path
                     << " holds version " << network_->model_version();
  }
}

void EvaluatorApp::Publish(const BatchReport* report) {
  if (report != nullptr) {
    std::lock_guard<std::mutex> lock(status_mutex_);
    // A step whose requests were all cache hits fired no batch.
    if (report->taken > report->cache_hits) ++counters_.batches;
    counters_.requests += report->taken;
    counters_.positions += report->evaluated;
    counters_.cache_lookups += report->cache_lookups;
    counters_.cache_hits += report->cache_hits;
    counters_.invalid += report->invalid;
    totals_.invalid_requests += report->invalid;
    counters_.forward_failures += report->forward_status.ok() ? 0 : 1;
    counters_.response_timeouts += report->response_timeouts;
    counters_.collect_seconds += report->collect_seconds;
    counters_.forward_seconds += report->forward_seconds;
    counters_.respond_seconds += report->respond_seconds;
    counters_.stall_seconds += report->stall_seconds;
  }
  if (report != nullptr && metrics_) metrics_->ObserveBatch(*report);
  {
    // The cache is this thread's: its stats are a plain copy.
    const EvalCacheStats cache = batcher_->CacheStats();
    std::lock_guard<std::mutex> lock(status_mutex_);
    totals_.cache_capacity = cache.capacity;
    totals_.cache_entries = cache.entries;
    totals_.cache_invalidations = cache.invalidations;
  }
  // The channel's stats cost a pass over a few atomics; a few times a second is plenty.
  const Clock::time_point now = Clock::now();
  if (now - last_publish_ < std::chrono::milliseconds(250)) return;
  last_publish_ = now;
  const shm::ChannelServerStats channel = batcher_->ChannelStats();
  EvaluatorTotals totals;
  {
    std::lock_guard<std::mutex> lock(status_mutex_);
    totals_.requests_waiting = channel.requests.occupancy;
    totals_.request_capacity = channel.requests.capacity;
    totals_.stale_requests = channel.stale_requests_dropped;
    totals_.invalid_requests = channel.invalid_requests_dropped + counters_.invalid;
    totals_.stale_responses = channel.stale_responses_dropped;
    totals_.model_version = network_->model_version();
    totals_.model_loads = counters_.model_loads;
    totals_.model_load_failures = counters_.model_load_failures;
    totals = totals_;
  }
  if (metrics_) metrics_->Update(totals);
}

void EvaluatorApp::LogRates() {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - last_log_).count();
  last_log_ = now;
  Counters c;
  EvaluatorTotals t;
  {
    std::lock_guard<std::mutex> lock(status_mutex_);
    c = counters_;
    t = totals_;
  }
  const double batches = static_cast<double>(c.batches - logged_.batches);
  const double positions = static_cast<double>(c.positions - logged_.positions);
  const double answered = static_cast<double>(c.requests - logged_.requests);
  const double lookups = static_cast<double>(c.cache_lookups - logged_.cache_lookups);
  const double hits = static_cast<double>(c.cache_hits - logged_.cache_hits);
  const auto per_batch_ms = [batches](double now, double before) {
    return batches > 0 ? (now - before) * 1000 / batches : 0.0;
  };
  AZ_LOG(kInfo) << "rates over " << static_cast<int>(seconds + 0.5)
                << " s: " << static_cast<std::uint64_t>(positions / seconds) << " positions/s, "
                << static_cast<std::uint64_t>(batches / seconds) << " batches/s, mean batch "
                << (batches > 0 ? positions / batches : 0.0) << " (ms per batch: collect "
                << per_batch_ms(c.collect_seconds, logged_.collect_seconds) << ", network "
                << per_batch_ms(c.forward_seconds, logged_.forward_seconds) << ", answers "
                << per_batch_ms(c.respond_seconds, logged_.respond_seconds) << ", stall "
                << per_batch_ms(c.stall_seconds, logged_.stall_seconds) << "); waiting "
                << t.requests_waiting << ", model version " << t.model_version
                << ", stale requests " << t.stale_requests << ", invalid " << t.invalid_requests;
  if (t.cache_capacity > 0) {
    AZ_LOG(kInfo) << "cache over " << static_cast<int>(seconds + 0.5)
                  << " s: " << static_cast<std::uint64_t>(answered / seconds)
                  << " requests/s answered, hit rate " << (lookups > 0 ? 100 * hits / lookups : 0.0)
                  << "% of " << static_cast<std::uint64_t>(lookups) << " lookups; "
                  << t.cache_entries << " of " << t.cache_capacity << " entries filled";
  }
  logged_ = c;
}

nlohmann::json EvaluatorApp::StatusJson() {
  std::lock_guard<std::mutex> lock(status_mutex_);
  const Counters& c = counters_;
  const EvaluatorTotals& t = totals_;
  return {{"game", config_.game},
          {"model_version", t.model_version},
          {"model_path", model_path_shown_},
          {"device", device_shown_},
          {"fp16", fp16_shown_},
          {"bf16", bf16_shown_},
          {"net", net_shown_},
          {"channel", scope_ + "/" + channel_name_},
          {"max_batch", config_.max_batch},
          {"batches", c.batches},
          {"requests", c.requests},
          {"positions_evaluated", c.positions},
          {"mean_batch",
           c.batches > 0 ? static_cast<double>(c.requests - c.cache_hits) / c.batches : 0.0},
          {"requests_waiting", t.requests_waiting},
          {"stale_requests", t.stale_requests},
          {"invalid_requests", t.invalid_requests},
          {"stale_responses", t.stale_responses},
          {"forward_failures", c.forward_failures},
          {"response_timeouts", c.response_timeouts},
          {"model_loads", c.model_loads},
          {"model_load_failures", c.model_load_failures},
          {"cache_size", t.cache_capacity},
          {"cache_entries", t.cache_entries},
          {"cache_lookups", c.cache_lookups},
          {"cache_hits", c.cache_hits},
          {"cache_hit_rate",
           c.cache_lookups > 0 ? static_cast<double>(c.cache_hits) / c.cache_lookups : 0.0},
          {"cache_invalidations", t.cache_invalidations}};
}

}  // namespace az::evaluator
