#include "services/replay/replay_app.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>

#include "core/base/log.h"
#include "core/replay/snapshot.h"
#include "ipc/endpoint.h"
#include "ipc/event.h"
#include "ipc/event_subscriber.h"
#include "services/common/service_util.h"
#include "services/replay/sample_ring.h"

namespace az::replayd {
namespace {

using Clock = std::chrono::steady_clock;

// The store's own message names the field and both values; add what the user can do about it. A
// held lock (ABORTED: another live opener) exits 1, so a supervisor retries once the other
// process is gone; a store made with other settings (FAILED_PRECONDITION) exits 2.
Status ExplainStoreMismatch(const Status& status, const ReplayConfig& config) {
  if (status.code() == StatusCode::kAborted) {
    return Aborted(status.message() +
                   " (another az-replay is using this store; stop it or use another --store)");
  }
  if (status.code() != StatusCode::kFailedPrecondition) return status;
  return FailedPrecondition(
      status.message() + ". The store file " + config.store +
      " was created with other settings and is left untouched: start with the settings it was "
      "created with, or point --store at a new file (to carry the records over, take a snapshot "
      "with the old settings and start the new store with --restore FILE)");
}

}  // namespace

ReplayApp::ReplayApp(const ReplayConfig& config)
    : config_(config), config_json_(ConfigToJson(config)) {}

ReplayApp::~ReplayApp() {
  Stop();
  if (events_thread_.joinable()) events_thread_.join();
}

Result<std::unique_ptr<ReplayApp>> ReplayApp::Create(const ReplayConfig& config) {
  std::unique_ptr<ReplayApp> app(new ReplayApp(config));
  service::LogEffectiveConfig(ConfigToJson(config));

  // The store: the one thing that must never be overwritten by a mistaken configuration.
  replay::ReplayStoreOptions store_options;
  store_options.path = config.store;
  store_options.capacity = config.capacity;
  store_options.record_size = config.record_bytes;
  store_options.alpha = config.alpha;
  store_options.epsilon = config.epsilon;
  store_options.initial_priority = config.initial_priority;
  store_options.mode = replay::ReplayStoreOptions::OpenMode::kOpenOrCreate;
  const auto open_start = Clock::now();
  Result<std::unique_ptr<replay::ReplayStore>> store = replay::ReplayStore::Open(store_options);
  if (!store.ok()) {
    return ExplainStoreMismatch(store.status().WithContext("opening the store " + config.store),
                                config);
  }
  app->store_ = std::move(store).value();
  const replay::OpenReport& report = app->store_->open_report();
  AZ_LOG(kInfo) << "store " << config.store << (report.created ? " created" : " opened") << ": "
                << report.records << " records, " << report.discarded_uncommitted
                << " unfinished writes discarded, next generation " << report.next_generation
                << " (" << std::chrono::duration<double>(Clock::now() - open_start).count()
                << " s)";

  if (!config.restore.empty()) {
    std::string path = config.restore;
    if (path == "latest") {
      AZ_ASSIGN_OR_RETURN(path, Snapshotter::Latest(config.snapshot_dir));
    }
    const std::uint64_t held = app->store_->Stats().size;
    if (held > 0) {
      return FailedPrecondition(
          "--restore loads a snapshot only into an empty store, and " + config.store + " holds " +
          std::to_string(held) +
          " records; nothing was changed. Point --store at a new file to restore into it, or "
          "start without --restore to keep these records");
    }
    AZ_ASSIGN_OR_RETURN(replay::SnapshotInfo info, replay::LoadSnapshot(*app->store_, path));
    app->restored_ = {{"path", path},
                      {"version", info.version},
                      {"records", info.records_loaded},
                      {"dropped", info.records_dropped},
                      {"generations_preserved", info.generations_preserved}};
    const std::string metadata(reinterpret_cast<const char*>(info.metadata.data()),
                               info.metadata.size());
    nlohmann::json meta = nlohmann::json::parse(metadata, nullptr, /*allow_exceptions=*/false);
    if (meta.is_object() && meta.contains("model_version") &&
        meta["model_version"].is_number_integer()) {
      app->UpdateModelVersion(meta["model_version"].get<std::int64_t>());
    }
    AZ_LOG(kInfo) << "restored " << info.records_loaded << " records from " << path
                  << " (snapshot version " << info.version << ", " << info.records_dropped
                  << " oldest dropped, generations "
                  << (info.generations_preserved ? "preserved" : "renumbered") << ")";
  }

  app->limiter_ = std::make_unique<RateLimiter>(config.rate, app->store_->Stats().size);

  if (config.metrics_port >= 0) {
    AZ_ASSIGN_OR_RETURN(app->metrics_,
                        ReplayMetrics::Create(config.metrics_bind, config.metrics_port));
    AZ_LOG(kInfo) << "metrics on http://" << config.metrics_bind << ":" << app->metrics_->port()
                  << "/metrics";
  }

  ReplayApp* self = app.get();
  app->sampler_ = std::make_unique<Sampler>(
      *app->store_, *app->limiter_,
      SamplerOptions{.prefetch = config.prefetch,
                     .prefetch_max_age = std::chrono::milliseconds(
                         static_cast<long long>(config.prefetch_max_age * 1000)),
                     .seed = static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ULL ^
                             static_cast<std::uint64_t>(Clock::now().time_since_epoch().count())});

  AZ_ASSIGN_OR_RETURN(app->snapshotter_,
                      Snapshotter::Create(*app->store_,
                                          {.dir = config.snapshot_dir,
                                           .interval_seconds = config.snapshot_interval,
                                           .keep = config.snapshot_keep,
                                           .metadata = [self] { return self->SnapshotMetadata(); }},
                                          [self](const Result<SnapshotResult>& result) {
                                            if (self->metrics_) {
                                              self->metrics_->ObserveSnapshot(
                                                  result.ok() ? result->seconds : 0, result.ok());
                                            }
                                          }));

  if (config.ingest) {
    // The server's ingestor knows no record layout: it gets the layout's checks from here.
    const RecordLayout layout = config.layout;
    IngestOptions ingest;
    ingest.journal_path = config.store + ".ingest";
    ingest.check = [layout](std::span<const std::byte> record) {
      return CheckRecord(layout, record);
    };
    ingest.model_version = [layout](std::span<const std::byte> record) {
      return ModelVersionOf(layout, record);
    };
    ingest.max_batch = config.ingest_batch;
    ingest.crash_after = config.crash_after_ingest;
    AZ_ASSIGN_OR_RETURN(IngestSource source, app->OpenRing());
    AZ_ASSIGN_OR_RETURN(app->ingestor_,
                        Ingestor::Create(ingest, std::move(source), *app->store_, *app->limiter_));
  }

  // Last, so that a client that reaches the daemon finds it ready.
  ipc::ServerOptions server_options;
  server_options.service = config.service;
  server_options.run_dir = config.run_dir;
  server_options.endpoint = config.endpoint;
  server_options.metrics_port = app->metrics_ ? app->metrics_->port() : 0;
  server_options.status = [self] { return self->StatusJson(); };
  server_options.on_pause = [self] {
    if (self->ingestor_) self->ingestor_->SetPaused(true);
  };
  server_options.on_resume = [self] {
    if (self->ingestor_) self->ingestor_->SetPaused(false);
  };
  AZ_ASSIGN_OR_RETURN(app->server_, ipc::Server::Create(server_options));
  app->RegisterCommands();
  if (!config.remote_endpoint.empty()) AZ_RETURN_IF_ERROR(app->StartRemote());
  return app;
}

Result<IngestSource> ReplayApp::OpenRing() const {
  SampleRingOptions ring;
  ring.run_dir = config_.run_dir;
  ring.scope = config_.shm_scope;
  ring.name = config_.ring_name;
  ring.record_bytes = static_cast<std::uint32_t>(config_.record_bytes);
  ring.capacity = config_.ring_capacity;
  return IngestSource::Open(ring);
}

const std::string& ReplayApp::endpoint() const { return server_->endpoint(); }

int ReplayApp::metrics_port() const { return metrics_ ? metrics_->port() : 0; }

void ReplayApp::Stop() {
  stop_.store(true, std::memory_order_release);
  std::lock_guard lock(server_mutex_);  // Run() may be destroying the server right now
  if (server_) server_->RequestShutdown();
}

Status ReplayApp::Run() {
  AZ_RETURN_IF_ERROR(server_->Start());
  sampler_->Start();
  snapshotter_->Start();
  if (ingestor_) ingestor_->Start();
  if (!config_.model_events_from.empty()) events_thread_ = std::thread([this] { EventLoop(); });
  if (remote_server_) {
    AZ_RETURN_IF_ERROR(remote_server_->Start());
    AZ_LOG(kInfo) << "serving self-play hosts on " << remote_server_->endpoint()
                  << " (push, model; CURVE)";
  }
  AZ_LOG(kInfo) << "serving on " << server_->endpoint() << " with " << store_->Stats().size
                << " of " << store_->capacity() << " records";

  progress_.at = Clock::now();
  while (!server_->WaitForShutdown(std::chrono::milliseconds(500)) &&
         !stop_.load(std::memory_order_acquire)) {
    if (config_.log_interval > 0 &&
        Clock::now() - progress_.at >= std::chrono::duration<double>(config_.log_interval)) {
      LogProgress();
    }
    // Self-play tags samples with the model that produced them: the newest seen is a lower bound
    // of the current model when no learner publishes events.
    if (ingestor_) {
      const IngestStats ingest = ingestor_->Stats();
      if (ingest.has_model_version) {
        UpdateModelVersion(static_cast<std::int64_t>(ingest.max_model_version));
      }
    }
    if (remote_ && remote_->max_model_version() > 0) {
      UpdateModelVersion(static_cast<std::int64_t>(remote_->max_model_version()));
    }
    if (metrics_) metrics_->Update(CollectMetrics());
  }

  AZ_LOG(kInfo) << "shutting down";
  // Stop the producers of new work first; the server goes on answering (state "stopping") and sends
  // the replies of what is finishing. A push in progress finishes and is answered.
  remote_server_.reset();
  if (ingestor_) ingestor_->Stop();
  sampler_->Stop();
  snapshotter_->Stop();
  Status final_status;
  if (config_.snapshot_on_exit) {
    Result<SnapshotResult> last = snapshotter_->WriteNow();
    if (!last.ok()) final_status = last.status().WithContext("the snapshot at exit");
  }
  stop_.store(true, std::memory_order_release);
  if (events_thread_.joinable()) events_thread_.join();
  if (Status flushed = store_->Flush(); !flushed.ok()) {
    AZ_LOG(kError) << "flushing the store: " << flushed.ToString();
    if (final_status.ok()) final_status = flushed;
  }
  if (metrics_) metrics_->Update(CollectMetrics());
  {
    std::lock_guard lock(server_mutex_);
    server_.reset();  // flushes queued replies, marks the discovery record stopped
  }
  ingestor_.reset();  // leaves the ring's process table
  sampler_.reset();
  snapshotter_.reset();
  const std::uint64_t records = store_->Stats().size;
  store_.reset();
  AZ_LOG(kInfo) << "stopped cleanly with " << records << " records in " << config_.store;
  return final_status;
}

void ReplayApp::LogProgress() {
  const Clock::time_point now = Clock::now();
  const double seconds = std::max(1e-9, std::chrono::duration<double>(now - progress_.at).count());
  const replay::ReplayStats s = store_->Stats();
  const SamplerStats sampled = sampler_->Stats();
  std::uint64_t inserted = inserted_control_.load(std::memory_order_relaxed) +
                           (ingestor_ ? ingestor_->Stats().ingested : 0);
  std::size_t hosts = 0;
  if (remote_) {
    for (const auto& [host, stats] : remote_->Stats()) {
      inserted += stats.stored;
      ++hosts;
    }
  }
  const std::uint64_t updates = s.updates_applied + s.updates_stale;
  auto rate = [&](std::uint64_t value, std::uint64_t before) {
    return static_cast<double>(value - std::min(value, before)) / seconds;
  };
  AZ_LOG(kInfo) << s.size << " of " << s.capacity << " records; "
                << rate(inserted, progress_.inserted) << " inserted/s, "
                << rate(sampled.draws, progress_.sampled) << " sampled/s, "
                << rate(updates, progress_.updates) << " priority updates/s, " << sampled.waiting
                << " requests waiting for the rate limiter"
                << (remote_ ? "; " + std::to_string(hosts) + " remote hosts" : "");
  progress_ = {now, inserted, sampled.draws, updates};
}

void ReplayApp::UpdateModelVersion(std::int64_t version) {
  std::int64_t seen = model_version_.load(std::memory_order_relaxed);
  while (version > seen &&
         !model_version_.compare_exchange_weak(seen, version, std::memory_order_relaxed)) {
  }
}

void ReplayApp::EventLoop() {
  Result<std::string> endpoint = ipc::EventsEndpoint(config_.run_dir, config_.model_events_from);
  if (!endpoint.ok()) return;
  Result<ipc::EventSubscriber> subscriber = ipc::EventSubscriber::Create(
      {.endpoints = {*endpoint}, .topics = {std::string(ipc::kModelTopic)}});
  if (!subscriber.ok()) {
    AZ_LOG(kWarning) << "model events from " << *endpoint << ": " << subscriber.status().ToString();
    return;
  }
  while (!stop_.load(std::memory_order_acquire)) {
    Result<ipc::Event> event = subscriber->Next(std::chrono::milliseconds(200));
    if (!event.ok()) continue;
    Result<ipc::ModelPublished> model = ipc::ModelPublishedFromEvent(*event);
    if (!model.ok()) continue;
    UpdateModelVersion(model->version);
    {
      std::lock_guard lock(model_mutex_);
      if (!latest_model_ || model->version > latest_model_->version) latest_model_ = *model;
    }
    AZ_LOG(kInfo) << "model " << model->version << " published by " << event->publisher;
  }
}

std::string ReplayApp::SnapshotMetadata() const {
  nlohmann::json meta = {{"service", "az-replay"},
                         {"model_version", model_version_.load(std::memory_order_relaxed)},
                         {"rate_limiter", limiter_->State().ToJson()},
                         {"config", config_json_}};
  return meta.dump();
}

MetricsInput ReplayApp::CollectMetrics() const {
  const replay::ReplayStats s = store_->Stats();
  const SamplerStats sampled = sampler_->Stats();
  const RateLimiterState limiter = limiter_->State();
  const SnapshotterStats snapshots = snapshotter_->Stats();
  MetricsInput in;
  in.size = s.size;
  in.capacity = s.capacity;
  in.alpha = config_.alpha;
  in.priority_sum = s.priority_sum;
  in.priority_min = s.priority_min;
  in.priority_max = s.priority_max;
  in.withdrawn = s.withdrawn;
  in.new_record_priority = s.size > 0 ? s.priority_max : config_.initial_priority;
  in.inserted_control = inserted_control_.load(std::memory_order_relaxed);
  in.rejected_control = rejected_control_.load(std::memory_order_relaxed);
  in.sample_requests = sampled.requests;
  in.sampled_records = sampled.draws;
  in.prefetch_hits = sampled.prefetch_hits;
  in.updates_applied = s.updates_applied;
  in.updates_stale = s.updates_stale;
  in.updates_rejected = s.values_rejected;
  in.priorities_clamped = s.values_clamped;
  in.last_beta = sampled.last_beta;
  const std::int64_t version = model_version_.load(std::memory_order_relaxed);
  in.has_model_version = version >= 0;
  in.model_version = static_cast<double>(version);
  if (ingestor_) {
    const IngestStats ingest = ingestor_->Stats();
    in.inserted_ring = ingest.ingested;
    in.rejected_ring = ingest.rejected;
    in.duplicates = ingest.duplicates;
    in.ring_occupancy = ingest.ring.occupancy;
    in.ring_capacity = ingest.ring.capacity;
    in.ring_pop_waits = ingest.ring.pop_waits;
    in.ring_pop_wait_seconds = static_cast<double>(ingest.ring.pop_wait_ns) * 1e-9;
    in.ring_sleeping_producers = ingest.ring.sleeping_producers;
    in.ring_reclaimed_writes = ingest.ring.reclaimed_writes;
    in.ring_reclaimed_reads = ingest.ring.reclaimed_reads;
  }
  if (remote_) {
    for (const auto& [host, stats] : remote_->Stats()) {
      in.inserted_remote += stats.stored;
      in.rejected_remote += stats.rejected;
      in.remote_hosts.push_back(
          {host, stats.stored, stats.duplicates, stats.rejected, stats.committed_through});
    }
  }
  in.samples_per_insert = limiter.options.samples_per_insert;
  in.draws_available =
      limiter.options.samples_per_insert > 0
          ? std::max(0.0, std::floor(limiter.diff - limiter.min_diff))
          : static_cast<double>(s.size >= limiter.options.min_size_to_sample ? config_.max_batch
                                                                             : 0);
  in.limiter_sample_waits = limiter.sample_waits;
  in.limiter_sample_timeouts = limiter.sample_timeouts;
  in.limiter_insert_waits = limiter.insert_waits;
  in.has_snapshot = snapshots.last.has_value();
  if (snapshots.last) {
    in.snapshot_age_seconds =
        std::chrono::duration<double>(std::chrono::system_clock::now() - snapshots.last_time)
            .count();
    in.snapshot_records = snapshots.last->records;
  }
  return in;
}

nlohmann::json ReplayApp::StatusJson() const {
  const replay::ReplayStats s = store_->Stats();
  const SamplerStats sampled = sampler_->Stats();
  const SnapshotterStats snapshots = snapshotter_->Stats();
  const SamplerOptions sampler_options = sampler_->options();
  nlohmann::json out = {
      {"store", config_.store},
      {"size", s.size},
      {"capacity", s.capacity},
      {"record_bytes", store_->record_size()},
      {"record_layout", RecordLayoutName(config_.layout)},
      {"alpha", config_.alpha},
      {"epsilon", config_.epsilon},
      {"priority_sum", s.priority_sum},
      {"priority_min", s.priority_min},
      {"priority_max", s.priority_max},
      {"withdrawn", s.withdrawn},
      {"new_record_priority", s.size > 0 ? s.priority_max : config_.initial_priority},
      {"generations_issued", s.inserts},
      {"inserted_control", inserted_control_.load(std::memory_order_relaxed)},
      {"rejected_control", rejected_control_.load(std::memory_order_relaxed)},
      {"sample_requests", sampled.requests},
      {"sampled_records", sampled.draws},
      {"sample_waiting", sampled.waiting},
      {"sample_timeouts", sampled.timeouts},
      {"prefetch", sampler_options.prefetch},
      {"prefetch_hits", sampled.prefetch_hits},
      {"prefetch_discards", sampled.prefetch_discards},
      {"last_beta", sampled.last_beta},
      {"updates_applied", s.updates_applied},
      {"updates_stale", s.updates_stale},
      {"updates_rejected", s.values_rejected},
      {"priorities_clamped", s.values_clamped},
      {"rate_limiter", limiter_->State().ToJson()},
      {"open_report",
       {{"created", store_->open_report().created},
        {"records", store_->open_report().records},
        {"discarded_uncommitted", store_->open_report().discarded_uncommitted}}},
  };
  const std::int64_t version = model_version_.load(std::memory_order_relaxed);
  out["model_version"] = version >= 0 ? nlohmann::json(version) : nlohmann::json(nullptr);
  if (ingestor_) {
    const IngestStats ingest = ingestor_->Stats();
    out["ring"] = {{"segment", ingestor_->RingDescription()},
                   {"occupancy", ingest.ring.occupancy},
                   {"capacity", ingest.ring.capacity},
                   {"ingested", ingest.ingested},
                   {"rejected", ingest.rejected},
                   {"duplicates_dropped", ingest.duplicates},
                   {"last_rejection", ingest.last_rejection},
                   {"sleeping_producers", ingest.ring.sleeping_producers},
                   {"reclaimed_writes", ingest.ring.reclaimed_writes},
                   {"reclaimed_reads", ingest.ring.reclaimed_reads}};
    if (ingest.has_model_version) out["ring"]["max_model_version"] = ingest.max_model_version;
  } else {
    out["ring"] = nullptr;
  }
  nlohmann::json snap = {
      {"dir", config_.snapshot_dir}, {"interval_seconds", snapshots.interval_seconds},
      {"keep", snapshots.keep},      {"written", snapshots.written},
      {"failed", snapshots.failed},  {"in_progress", snapshots.in_progress}};
  if (snapshots.last) {
    snap["last_path"] = snapshots.last->path;
    snap["last_records"] = snapshots.last->records;
    snap["last_seconds"] = snapshots.last->seconds;
    snap["age_seconds"] =
        std::chrono::duration<double>(std::chrono::system_clock::now() - snapshots.last_time)
            .count();
  }
  if (!snapshots.last_error.empty()) snap["last_error"] = snapshots.last_error;
  out["snapshots"] = std::move(snap);
  if (!restored_.is_null()) out["restored"] = restored_;
  out["metrics_port"] = metrics_ ? metrics_->port() : 0;
  out["remote"] = remote_ ? RemoteStatusJson() : nlohmann::json(nullptr);
  return out;
}

}  // namespace az::replayd
