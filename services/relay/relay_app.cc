#include "services/relay/relay_app.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "core/base/log.h"
#include "core/nn/checksum.h"
#include "core/nn/model_files.h"
#include "ipc/client.h"
#include "ipc/curve.h"
#include "ipc/event.h"
#include "ipc/file_util.h"
#include "services/common/metric_builders.h"
#include "services/common/metrics_exporter.h"
#include "services/replay/replay_protocol.h"
#include "services/replay/sample_ring.h"
#include "services/replay/server/ingestor.h"

namespace az::relay {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);

// Sleeps up to `duration`, waking early when `stop` is set.
void SleepUnlessStopped(const std::atomic<bool>& stop, std::chrono::duration<double> duration) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(duration);
  while (!stop.load(std::memory_order_acquire) && Clock::now() < until) {
    std::this_thread::sleep_for(
        std::min<Clock::duration>(std::chrono::milliseconds(50), until - Clock::now()));
  }
}

}  // namespace

struct RelayApp::Metrics {
  explicit Metrics(prometheus::Registry& registry)
      : taken(service::MakeCounter(registry, "az_relay_taken_total",
                                   "samples taken off this host's sample ring into the spool")),
        outcome(prometheus::BuildCounter()
                    .Name("az_relay_pushed_total")
                    .Help("samples pushed to the central replay daemon, by its answer")
                    .Register(registry)),
        stored(outcome.Add({{"outcome", "stored"}})),
        duplicate(outcome.Add({{"outcome", "duplicate"}})),
        rejected(outcome.Add({{"outcome", "rejected"}})),
        push_errors(service::MakeCounter(registry, "az_relay_push_errors_total",
                                         "pushes that got no answer or an error")),
        models_fetched(service::MakeCounter(registry, "az_relay_models_fetched_total",
                                            "model files fetched from the central daemon")),
        spool_records(service::MakeGauge(registry, "az_relay_spool_records",
                                         "samples in the spool not yet acknowledged")),
        spool_bytes(service::MakeGauge(registry, "az_relay_spool_bytes",
                                       "bytes of the spool not yet acknowledged")),
        connected(service::MakeGauge(registry, "az_relay_connected",
                                     "1 when the last push was answered")),
        model_version(service::MakeGauge(registry, "az_relay_model_version",
                                         "the newest model fetched; -1: none")) {}
  prometheus::Counter& taken;
  prometheus::Family<prometheus::Counter>& outcome;
  prometheus::Counter& stored;
  prometheus::Counter& duplicate;
  prometheus::Counter& rejected;
  prometheus::Counter& push_errors;
  prometheus::Counter& models_fetched;
  prometheus::Gauge& spool_records;
  prometheus::Gauge& spool_bytes;
  prometheus::Gauge& connected;
  prometheus::Gauge& model_version;
};

Result<std::unique_ptr<RelayApp>> RelayApp::Create(const RelayConfig& config) {
  std::unique_ptr<RelayApp> app(new RelayApp(config));
  // A missing keys directory would be made afresh by the first client, with keys the central
  // daemon has never seen: refuse instead, saying what to copy.
  const std::string keys = ipc::RunKeysDir(config.run_dir);
  for (const char* file : {"client.public", "client.secret", "server.public"}) {
    if (!fs::exists(keys + "/" + file)) {
      return FailedPrecondition(keys + "/" + file +
                                " is missing: copy the central run's keys directory to " + keys +
                                " (mode 0700, secret files 0600; docs/scaling.md)");
    }
  }
  AZ_ASSIGN_OR_RETURN(
      app->spool_,
      Spool::Open({.dir = config.spool_dir,
                   .record_bytes = static_cast<std::uint32_t>(config.game_info->sample_bytes),
                   .segment_records = config.spool_segment_records,
                   .max_bytes = config.spool_max_bytes}));
  const SpoolStats spooled = app->spool_->Stats();
  AZ_LOG(kInfo) << "spool " << config.spool_dir << ": " << spooled.pending
                << " samples waiting, next sequence number " << spooled.next_seq;

  replayd::SampleRingOptions ring;
  ring.run_dir = config.run_dir;
  ring.scope = config.shm_scope;
  ring.name = config.ring_name;
  ring.record_bytes = static_cast<std::uint32_t>(config.game_info->sample_bytes);
  ring.capacity = config.ring_capacity;
  AZ_ASSIGN_OR_RETURN(replayd::IngestSource source, replayd::IngestSource::Open(ring));
  app->ring_id_ = source.ring_id;
  app->ring_ = std::make_unique<shm::Ring>(std::move(source.ring));
  app->ring_->ReclaimDead();
  AZ_LOG(kInfo) << "sample ring " << source.description << ": " << app->ring_->Stats().occupancy
                << " records waiting";

  if (config.model_poll_interval > 0) {
    std::error_code error;
    fs::create_directories(config.model_dir, error);
    if (error) {
      return FailedPrecondition("creating the model directory " + config.model_dir + ": " +
                                error.message());
    }
    AZ_ASSIGN_OR_RETURN(app->events_, ipc::EventPublisher::Create(
                                          {.service = config.service, .run_dir = config.run_dir}));
    if (std::optional<ipc::Event> last = app->events_->Latest(ipc::kModelTopic)) {
      if (Result<ipc::ModelPublished> model = ipc::ModelPublishedFromEvent(*last);
          model.ok() && fs::exists(model->path)) {
        app->stats_.model_version = model->version;
      }
    }
  }

  if (config.metrics_port >= 0) {
    AZ_ASSIGN_OR_RETURN(app->metrics_,
                        service::MetricsExporter::Start(config.metrics_bind, config.metrics_port));
    app->metric_ = std::make_unique<Metrics>(app->metrics_->registry());
  }
  RelayApp* self = app.get();
  ipc::ServerOptions server;
  server.service = config.service;
  server.run_dir = config.run_dir;
  server.events_endpoint = app->events_ ? app->events_->endpoint() : "";
  server.metrics_port = app->metrics_ ? app->metrics_->port() : 0;
  server.status = [self] { return self->StatusJson(); };
  server.on_pause = [self] { self->paused_.store(true); };
  server.on_resume = [self] { self->paused_.store(false); };
  AZ_ASSIGN_OR_RETURN(app->server_, ipc::Server::Create(server));
  return app;
}

RelayApp::RelayApp(const RelayConfig& config) : config_(config) {}

RelayApp::~RelayApp() {
  stop_.store(true);
  for (std::thread* thread : {&ring_thread_, &push_thread_, &model_thread_}) {
    if (thread->joinable()) thread->join();
  }
}

const std::string& RelayApp::endpoint() const { return server_->endpoint(); }

void RelayApp::Stop() {
  stop_.store(true, std::memory_order_release);
  if (server_) server_->RequestShutdown();
}

Status RelayApp::Run() {
  AZ_RETURN_IF_ERROR(server_->Start());
  AZ_LOG(kInfo) << "host " << config_.host << ": pushing samples to " << config_.central
                << (events_ ? ", following its models into " + config_.model_dir : "")
                << "; control on " << server_->endpoint();
  ring_thread_ = std::thread([this] { RingLoop(); });
  push_thread_ = std::thread([this] { PushLoop(); });
  if (events_) model_thread_ = std::thread([this] { ModelLoop(); });
  progress_ = {Clock::now(), 0, 0};
  while (!server_->WaitForShutdown(std::chrono::milliseconds(500)) &&
         !stop_.load(std::memory_order_acquire)) {
    if (config_.log_interval > 0 &&
        Clock::now() - progress_.at >= std::chrono::duration<double>(config_.log_interval)) {
      LogProgress();
    }
    UpdateMetrics();
  }
  AZ_LOG(kInfo) << "shutting down";
  stop_.store(true, std::memory_order_release);
  for (std::thread* thread : {&ring_thread_, &push_thread_, &model_thread_}) {
    if (thread->joinable()) thread->join();
  }
  UpdateMetrics();
  const SpoolStats spooled = spool_->Stats();
  server_.reset();
  AZ_LOG(kInfo) << "stopped cleanly; " << spooled.pending
                << " samples wait in the spool for the next start";
  return Status::Ok();
}

void RelayApp::RingLoop() {
  auto last_full_log = Clock::time_point{};
  while (!stop_.load(std::memory_order_acquire)) {
    if (paused_.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    if (spool_->Full()) {
      if (Clock::now() - last_full_log > std::chrono::seconds(30)) {
        AZ_LOG(kWarning) << "the spool holds " << spool_->Stats().pending_bytes
                         << " unacknowledged bytes (spool-max-bytes): self-play waits on the "
                            "ring until the daemon takes them";
        last_full_log = Clock::now();
      }
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    // The visitor runs while the ring holds the slot: the sample is in the spool (the page cache
    // keeps it through a SIGKILL) before the ring lets it go.
    Result<std::size_t> taken = ring_->Consume(
        config_.ring_batch, kPoll, [this](std::span<const std::byte> record, std::uint64_t at) {
          const SpoolSource source{ring_id_, at};
          if (spool_->LastSource() == source) {
            std::lock_guard lock(mutex_);
            ++stats_.ring_duplicates;
            AZ_LOG(kInfo) << "ring record at position " << at
                          << " was spooled before a restart; not spooled again";
            return;
          }
          auto last_log = Clock::time_point{};
          while (true) {
            Result<std::uint64_t> seq = spool_->Append(record, source);
            if (seq.ok()) break;
            if (stop_.load(std::memory_order_acquire)) {
              // Exit holding the slot: the ring hands the record to the next relay.
              AZ_LOG(kError) << "stopping with a sample the spool cannot take ("
                             << seq.status().ToString() << "); it stays in the ring";
              std::_Exit(1);
            }
            if (Clock::now() - last_log > std::chrono::seconds(10)) {
              AZ_LOG(kError) << "spooling a sample: " << seq.status().ToString()
                             << "; retrying (the sample stays in the ring meanwhile)";
              last_log = Clock::now();
            }
            std::this_thread::sleep_for(std::chrono::seconds(1));
          }
          std::lock_guard lock(mutex_);
          ++stats_.taken;
        });
    if (!taken.ok() && taken.status().code() != StatusCode::kDeadlineExceeded) {
      AZ_LOG(kError) << "taking samples from the ring: " << taken.status().ToString();
      std::this_thread::sleep_for(kPoll);
    }
  }
}

void RelayApp::Fail(const Status& status, const char* what) {
  std::lock_guard lock(mutex_);
  stats_.last_error = std::string(what) + ": " + status.ToString();
}

void RelayApp::PushLoop() {
  const auto timeout =
      std::chrono::milliseconds(static_cast<long long>(config_.push_timeout * 1000));
  Result<ipc::Client> client = ipc::Client::Create({.endpoint = config_.central,
                                                    .run_dir = config_.run_dir,
                                                    .attempt_timeout = timeout,
                                                    .max_attempts = 1});
  if (!client.ok()) {
    AZ_LOG(kError) << "the client for " << config_.central << ": " << client.status().ToString();
    Fail(client.status(), "push");
    return;
  }
  double backoff = 0.05;
  auto last_error_log = Clock::time_point{};
  bool was_connected = false;
  while (!stop_.load(std::memory_order_acquire)) {
    Result<SpoolBatch> batch =
        spool_->ReadPending(config_.push_batch, std::chrono::milliseconds(200));
    if (!batch.ok()) {
      AZ_LOG(kError) << "reading the spool: " << batch.status().ToString();
      SleepUnlessStopped(stop_, std::chrono::seconds(1));
      continue;
    }
    if (batch->count == 0) continue;
    std::vector<zmq::message_t> frames;
    frames.emplace_back(batch->records.data(), batch->records.size());
    Result<ipc::Reply> reply = client->Call(
        replayd::kPushCommand,
        {{"host", config_.host}, {"first_seq", batch->first_seq}, {"count", batch->count}},
        std::move(frames));
    if (!reply.ok()) {
      const bool busy = reply.status().code() == StatusCode::kResourceExhausted;
      {
        std::lock_guard lock(mutex_);
        ++stats_.push_errors;
        stats_.connected = busy;
        stats_.last_error = "push: " + reply.status().ToString();
      }
      if (busy) {  // the daemon's rate limiter: it is there, the learner is behind
        SleepUnlessStopped(stop_, std::chrono::milliseconds(200));
        continue;
      }
      if (was_connected || Clock::now() - last_error_log > std::chrono::seconds(30)) {
        AZ_LOG(kWarning) << "push to " << config_.central << " failed ("
                         << reply.status().ToString() << "); " << spool_->Stats().pending
                         << " samples wait in the spool; retrying";
        last_error_log = Clock::now();
      }
      was_connected = false;
      SleepUnlessStopped(stop_, std::chrono::duration<double>(backoff));
      backoff = std::min(backoff * 2, config_.retry_max);
      continue;
    }
    if (!was_connected) {
      AZ_LOG(kInfo) << "connected to " << config_.central << " as host " << config_.host;
      was_connected = true;
    }
    backoff = 0.05;
    const nlohmann::json& body = reply->body;
    const std::uint64_t committed = body.value("committed_through", std::uint64_t{0});
    if (Status acked = spool_->Ack(committed); !acked.ok()) {
      AZ_LOG(kError) << "recording the acknowledgement: " << acked.ToString();
    }
    const std::uint64_t rejected = body.value("rejected", std::uint64_t{0});
    if (rejected > 0) {
      AZ_LOG(kWarning) << "the daemon dropped " << rejected
                       << " malformed samples: " << body.value("first_rejection", std::string());
    }
    std::lock_guard lock(mutex_);
    ++stats_.pushes;
    stats_.connected = true;
    stats_.stored += body.value("stored", std::uint64_t{0});
    stats_.duplicates += body.value("duplicates", std::uint64_t{0});
    stats_.rejected += rejected;
  }
}

void RelayApp::ModelLoop() {
  const auto timeout = std::chrono::milliseconds(
      static_cast<long long>(std::max(config_.push_timeout, 10.0) * 1000));
  Result<ipc::Client> client = ipc::Client::Create({.endpoint = config_.central,
                                                    .run_dir = config_.run_dir,
                                                    .attempt_timeout = timeout,
                                                    .max_attempts = 1,
                                                    .max_request_bytes = 1 << 20});
  if (!client.ok()) {
    Fail(client.status(), "model");
    return;
  }
  auto last_error_log = Clock::time_point{};
  while (!stop_.load(std::memory_order_acquire)) {
    if (Status fetched = FetchModel(*client); !fetched.ok()) {
      Fail(fetched, "model");
      if (Clock::now() - last_error_log > std::chrono::seconds(30)) {
        AZ_LOG(kWarning) << "asking " << config_.central
                         << " for a newer model: " << fetched.ToString();
        last_error_log = Clock::now();
      }
    }
    SleepUnlessStopped(stop_, std::chrono::duration<double>(config_.model_poll_interval));
  }
}

Status RelayApp::FetchModel(ipc::Client& client) {
  std::int64_t have;
  {
    std::lock_guard lock(mutex_);
    have = stats_.model_version;
  }
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply, client.Call(replayd::kModelCommand, {{"have", have}}));
  if (reply.body.value("unchanged", false)) return Status::Ok();
  const std::int64_t version = reply.body.at("version").get<std::int64_t>();
  const std::string checksum = reply.body.at("checksum").get<std::string>();
  if (reply.frames.size() != 1 ||
      reply.frames[0].size() != reply.body.at("bytes").get<std::size_t>()) {
    return DataLoss("model " + std::to_string(version) + " arrived without its whole file");
  }
  const std::string_view bytes(static_cast<const char*>(reply.frames[0].data()),
                               reply.frames[0].size());
  const std::string actual = nn::Xxh64Text(std::as_bytes(std::span(bytes.data(), bytes.size())));
  if (actual != checksum) {
    return DataLoss("model " + std::to_string(version) + " arrived with checksum " + actual +
                    ", the daemon published " + checksum + "; not used");
  }
  const std::string path = config_.model_dir + "/" + nn::ModelFileName(version);
  AZ_RETURN_IF_ERROR(ipc::WriteFileAtomically(path, bytes));
  // The status shows the model before the event announces it, so that whoever hears the event
  // and asks finds it; a failed announcement takes the version back, so the next poll fetches
  // and announces it again.
  {
    std::lock_guard lock(mutex_);
    stats_.model_version = version;
    ++stats_.models_fetched;
  }
  if (Status published =
          events_
              ->Publish(ipc::kModelTopic,
                        ipc::ModelPublishedToJson(
                            {.version = version, .path = path, .checksum = checksum}))
              .status();
      !published.ok()) {
    std::lock_guard lock(mutex_);
    stats_.model_version = have;
    return published;
  }
  AZ_LOG(kInfo) << "model " << version << " fetched (" << bytes.size() << " bytes, " << checksum
                << ") into " << path;
  nn::PruneModelFiles(config_.model_dir, config_.model_keep, /*keep_initial=*/false);
  return Status::Ok();
}

RelayStats RelayApp::Stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

nlohmann::json RelayApp::StatusJson() const {
  const RelayStats s = Stats();
  const SpoolStats spool = spool_->Stats();
  const shm::RingStats ring = ring_->Stats();
  return {{"host", config_.host},
          {"central", config_.central},
          {"game", config_.game},
          {"connected", s.connected},
          {"paused", paused_.load()},
          {"taken", s.taken},
          {"ring_duplicates", s.ring_duplicates},
          {"pushes", s.pushes},
          {"push_errors", s.push_errors},
          {"stored", s.stored},
          {"duplicates", s.duplicates},
          {"rejected", s.rejected},
          {"last_error", s.last_error},
          {"model_version", s.model_version},
          {"models_fetched", s.models_fetched},
          {"ring", {{"occupancy", ring.occupancy}, {"capacity", ring.capacity}}},
          {"spool",
           {{"dir", config_.spool_dir},
            {"next_seq", spool.next_seq},
            {"acked", spool.acked},
            {"pending", spool.pending},
            {"pending_bytes", spool.pending_bytes},
            {"max_bytes", config_.spool_max_bytes},
            {"segments", spool.segments},
            {"corrupt_skipped", spool.corrupt_skipped},
            {"torn_truncated", spool.torn_truncated}}},
          {"config", ConfigToJson(config_)}};
}

void RelayApp::LogProgress() {
  const Clock::time_point now = Clock::now();
  const double seconds = std::max(1e-9, std::chrono::duration<double>(now - progress_.at).count());
  const RelayStats s = Stats();
  const SpoolStats spool = spool_->Stats();
  AZ_LOG(kInfo) << static_cast<double>(s.taken - progress_.taken) / seconds << " samples/s taken, "
                << static_cast<double>(s.stored - progress_.stored) / seconds
                << " stored/s at the daemon" << (s.connected ? "" : " (not connected)") << "; "
                << spool.pending << " in the spool; model " << s.model_version;
  progress_ = {now, s.taken, s.stored};
}

void RelayApp::UpdateMetrics() {
  if (!metric_) return;
  const RelayStats s = Stats();
  const SpoolStats spool = spool_->Stats();
  service::AdvanceTo(metric_->taken, static_cast<double>(s.taken));
  service::AdvanceTo(metric_->stored, static_cast<double>(s.stored));
  service::AdvanceTo(metric_->duplicate, static_cast<double>(s.duplicates));
  service::AdvanceTo(metric_->rejected, static_cast<double>(s.rejected));
  service::AdvanceTo(metric_->push_errors, static_cast<double>(s.push_errors));
  service::AdvanceTo(metric_->models_fetched, static_cast<double>(s.models_fetched));
  metric_->spool_records.Set(static_cast<double>(spool.pending));
  metric_->spool_bytes.Set(static_cast<double>(spool.pending_bytes));
  metric_->connected.Set(s.connected ? 1 : 0);
  metric_->model_version.Set(static_cast<double>(s.model_version));
}

}  // namespace az::relay
