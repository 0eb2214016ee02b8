#include "services/selfplay/selfplay_app.h"

#include <string>
#include <thread>
#include <utility>

#include "core/base/log.h"
#include "services/common/eval_protocol.h"
#include "services/common/service_util.h"
#include "services/replay/sample_ring.h"

namespace az::selfplay {
namespace {

using Clock = std::chrono::steady_clock;

std::uint32_t RequestBytes(service::GameKind game) {
  return games::VisitGame(game, []<games::GameDefinition G>() {
    return static_cast<std::uint32_t>(sizeof(service::EvalRequest<G>));
  });
}
std::uint32_t ResponseBytes(service::GameKind game) {
  return games::VisitGame(game, []<games::GameDefinition G>() {
    return static_cast<std::uint32_t>(sizeof(service::EvalResponse<G>));
  });
}

// " (surprise weighting: N extra copies, M left out)" where policy-surprise weighting is on, else
// nothing: the log says what the weighting did to the samples it counts as pushed.
std::string SurpriseNote(const EngineCounters& c, float weight) {
  if (weight <= 0.0f) return {};
  return " (surprise weighting: " + std::to_string(c.surprise_extra_copies) + " extra copies, " +
         std::to_string(c.surprise_left_out) + " left out)";
}

// " (position cap: N left out)" where the cap is on, else nothing.
std::string PositionCapNote(const EngineCounters& c, int cap) {
  if (cap <= 0) return {};
  return " (position cap: " + std::to_string(c.position_cap_left_out) + " left out)";
}

// " (drawn games weighted: N extra copies, M left out)" where drawn games are weighted, else
// nothing.
std::string DrawnNote(const EngineCounters& c, float weight) {
  if (weight == 1.0f) return {};
  return " (drawn games weighted: " + std::to_string(c.drawn_extra_copies) + " extra copies, " +
         std::to_string(c.drawn_left_out) + " left out)";
}

}  // namespace

Result<std::unique_ptr<SelfPlayApp>> SelfPlayApp::Create(const SelfPlayConfig& config) {
  std::unique_ptr<SelfPlayApp> app(new SelfPlayApp(config));
  const SelfPlayConfig& c = app->config_;
  AZ_ASSIGN_OR_RETURN(shm::Scope scope, service::RunShmScope(c.run_dir, c.shm_scope));
  app->scope_ = scope;
  // The replay daemon's own opener: same segment, same open-or-create rules on either side.
  replayd::SampleRingOptions ring;
  ring.scope = scope.ToString();
  ring.record_bytes = SampleBytes(c.game_kind);
  ring.capacity = c.sample_ring_capacity;
  AZ_ASSIGN_OR_RETURN(shm::Ring samples, replayd::OpenSampleRing(ring));
  AZ_LOG(kInfo) << "sample ring " << scope.ToString() << "/" << ring.name << ": "
                << samples.capacity() << " x " << samples.record_bytes() << " B";
  app->samples_.emplace(std::move(samples));

  if (c.metrics_port >= 0) {
    AZ_ASSIGN_OR_RETURN(app->exporter_,
                        service::MetricsExporter::Start(c.metrics_bind, c.metrics_port));
    app->metrics_ = std::make_unique<SelfPlayMetrics>(app->exporter_->registry());
    AZ_LOG(kInfo) << "metrics on " << c.metrics_bind << ":" << app->exporter_->port();
  }

  ipc::ServerOptions server;
  server.service = c.service;
  server.run_dir = c.run_dir;
  server.endpoint = c.endpoint;
  server.metrics_port = app->metrics_port();
  server.status = [raw = app.get()] { return raw->StatusJson(); };
  AZ_ASSIGN_OR_RETURN(app->server_, ipc::Server::Create(std::move(server)));
  return app;
}

SelfPlayApp::~SelfPlayApp() { server_.reset(); }

void SelfPlayApp::Stop() {
  stop_.store(true, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(engine_mutex_);
    if (engine_) engine_->Stop();
  }
  if (server_) server_->RequestShutdown();
}

Result<shm::RequestClient> SelfPlayApp::Connect() {
  const std::string name = service::EvalChannelName(config_.game_kind);
  shm::ClientOptions options;
  options.worker_id = config_.worker_id;
  options.request_bytes = RequestBytes(config_.game_kind);
  options.response_bytes = ResponseBytes(config_.game_kind);
  const Clock::time_point start = Clock::now();
  bool logged = false;
  for (;;) {
    Result<shm::RequestClient> client = shm::RequestClient::Open(*scope_, name, options);
    if (client.ok()) {
      AZ_LOG(kInfo) << "attached to " << scope_->ToString() << "/" << name << " as worker "
                    << config_.worker_id << ", generation " << client->generation();
      return client;
    }
    // Not there yet (the evaluator creates it) or half-created: wait. Anything else is final.
    const StatusCode code = client.status().code();
    if (code != StatusCode::kNotFound && code != StatusCode::kDeadlineExceeded) {
      return client.status().WithContext("attaching to the eval channel");
    }
    if (!logged) {
      AZ_LOG(kInfo) << "waiting for the eval channel " << scope_->ToString() << "/" << name
                    << " (is az-evaluator running?)";
      logged = true;
    }
    if (stop_.load(std::memory_order_acquire) || server_->shutdown_requested()) {
      return Cancelled("stopped while waiting for the eval channel");
    }
    if (config_.connect_timeout > 0 &&
        Clock::now() - start > std::chrono::duration<double>(config_.connect_timeout)) {
      return DeadlineExceeded("the eval channel " + scope_->ToString() + "/" + name +
                              " did not appear within " + std::to_string(config_.connect_timeout) +
                              " s (is az-evaluator running for this run directory and game?)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Status SelfPlayApp::Run() {
  AZ_RETURN_IF_ERROR(server_->Start());
  service::LogEffectiveConfig(ConfigToJson(config_));
  {
    std::lock_guard<std::mutex> lock(status_mutex_);
    phase_ = "connecting";
  }
  Result<shm::RequestClient> client = Connect();
  if (!client.ok()) {
    if (client.status().code() == StatusCode::kCancelled) return Status::Ok();
    return client.status();
  }
  EngineObserver observer;
  if (metrics_) {
    observer.game_finished = [this](int plies, GameResultKind) { metrics_->ObserveGame(plies); };
    observer.round_trip = [this](double seconds) { metrics_->ObserveRoundTrip(seconds); };
  }
  {
    AZ_ASSIGN_OR_RETURN(std::unique_ptr<EvalChannelEvaluator> evaluator,
                        EvalChannelEvaluator::Create(config_.game_kind, std::move(client).value()));
    auto sink = std::make_unique<SampleRingSink>(std::move(*samples_));
    samples_.reset();
    const EvalChannelEvaluator* channel = evaluator.get();
    const SampleRingSink* ring = sink.get();
    AZ_ASSIGN_OR_RETURN(
        std::unique_ptr<SelfPlayEngine> engine,
        CreateSelfPlayEngine(config_.game_kind, ToEngineOptions(config_), std::move(evaluator),
                             std::move(sink), std::move(observer)));
    evaluator_ = channel;
    sink_ = ring;
    std::lock_guard<std::mutex> lock(engine_mutex_);
    engine_ = std::move(engine);
    if (stop_.load(std::memory_order_acquire)) engine_->Stop();
  }
  AZ_LOG(kInfo) << "playing " << config_.games << " " << config_.game << " games at once, "
                << config_.simulations << " simulations a move"
                << (config_.max_games > 0 ? ", " + std::to_string(config_.max_games) + " in all"
                                          : std::string());
  {
    std::lock_guard<std::mutex> lock(status_mutex_);
    phase_ = "playing";
  }
  last_log_ = last_publish_ = Clock::now();
  Status result;
  while (!stop_.load(std::memory_order_acquire) && !server_->shutdown_requested() &&
         !engine_->Done()) {
    engine_->SetPaused(server_->paused());
    const Status status = engine_->Step();
    if (!status.ok()) {
      if (status.code() != StatusCode::kCancelled) result = status;
      break;
    }
    Publish(false);
    if (config_.log_interval > 0 &&
        Clock::now() - last_log_ >= std::chrono::duration<double>(config_.log_interval)) {
      LogRates();
    }
  }
  Publish(true);
  const EngineCounters c = engine_->counters();
  AZ_LOG(kInfo) << "stopping: " << c.games_finished << " games, " << c.moves << " moves, "
                << c.simulations << " simulations, " << c.samples_pushed << " samples pushed"
                << SurpriseNote(c, config_.policy_surprise_weight)
                << PositionCapNote(c, config_.position_cap)
                << DrawnNote(c, config_.drawn_game_weight) << "; " << c.games_in_progress
                << " games in progress abandoned";
  server_->Stop();
  return result;
}

void SelfPlayApp::Publish(bool force) {
  const Clock::time_point now = Clock::now();
  if (!force && now - last_publish_ < std::chrono::milliseconds(250)) return;
  last_publish_ = now;
  const EngineCounters counters = engine_->counters();
  const shm::ChannelClientStats channel = evaluator_->Stats();
  const shm::RingStats ring = sink_->Stats();
  if (metrics_) metrics_->Update(counters, channel, ring);
  std::lock_guard<std::mutex> lock(status_mutex_);
  counters_ = counters;
  channel_ = channel;
  ring_ = ring;
}

void SelfPlayApp::LogRates() {
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - last_log_).count();
  last_log_ = now;
  const EngineCounters c = engine_->counters();
  const auto rate = [seconds](std::uint64_t now_total, std::uint64_t before) {
    return static_cast<double>(now_total - before) / seconds;
  };
  AZ_LOG(kInfo) << "rates over " << static_cast<int>(seconds + 0.5)
                << " s: " << rate(c.games_finished, logged_.games_finished) << " games/s, "
                << rate(c.moves, logged_.moves) << " moves/s, "
                << static_cast<std::uint64_t>(rate(c.simulations, logged_.simulations))
                << " sims/s; " << c.games_finished << " games (" << c.results[0] << " / "
                << c.results[1] << " / " << c.results[2] << " first / second / draw), "
                << c.resignations << " resigned, " << c.draw_adjudications
                << " drawn by adjudication, " << c.material_adjudications
                << " won on material, resign false positives " << c.resign_false_positives << " of "
                << c.playthrough_would_resign << " (" << c.resignations_withheld
                << " withheld until trusted), " << c.samples_pushed << " samples pushed"
                << SurpriseNote(c, config_.policy_surprise_weight)
                << PositionCapNote(c, config_.position_cap)
                << DrawnNote(c, config_.drawn_game_weight) << ", model version " << c.model_version
                << ", eval timeouts " << c.eval_timeouts << ", evaluators lost "
                << c.evaluator_losses;
  logged_ = c;
}

nlohmann::json SelfPlayApp::StatusJson() {
  std::lock_guard<std::mutex> lock(status_mutex_);
  const EngineCounters& c = counters_;
  return {{"game", config_.game},
          {"worker_id", config_.worker_id},
          {"phase", phase_},
          {"games_at_once", config_.games},
          {"simulations", config_.simulations},
          {"games_finished", c.games_finished},
          {"games_in_progress", c.games_in_progress},
          {"results",
           {{"first_player_win", c.results[0]},
            {"second_player_win", c.results[1]},
            {"draw", c.results[2]}}},
          {"moves", c.moves},
          {"fast_moves", c.fast_moves},
          {"simulations_total", c.simulations},
          {"samples_pushed", c.samples_pushed},
          {"samples_dropped", c.samples_dropped},
          {"surprise_extra_copies", c.surprise_extra_copies},
          {"surprise_left_out", c.surprise_left_out},
          {"position_cap_left_out", c.position_cap_left_out},
          {"drawn_extra_copies", c.drawn_extra_copies},
          {"drawn_left_out", c.drawn_left_out},
          {"sample_ring_waits", c.ring_waits},
          {"sample_ring_occupancy", ring_.occupancy},
          {"eval_requests", c.requests_submitted},
          {"eval_timeouts", c.eval_timeouts},
          {"evaluator_losses", c.evaluator_losses},
          {"eval_errors", c.eval_errors},
          {"stale_responses", channel_.stale_responses_dropped},
          {"generation", channel_.generation},
          {"model_version", c.model_version},
          {"search_seconds", c.search_seconds},
          {"eval_wait_seconds", c.wait_seconds},
          {"opening_random_plies", c.opening_plies},
          {"opening_random_plies_recorded", c.opening_plies_recorded},
          {"games_branched", c.games_branched},
          {"adjudications",
           {{"resign", c.resignations},
            {"draw", c.draw_adjudications},
            {"material", c.material_adjudications},
            {"playthrough_games", c.playthrough_games},
            {"playthrough_would_resign", c.playthrough_would_resign},
            {"resign_false_positives", c.resign_false_positives},
            {"playthrough_would_draw", c.playthrough_would_draw},
            {"draw_false_positives", c.draw_false_positives},
            {"resignations_withheld", c.resignations_withheld},
            {"draws_withheld", c.draws_withheld}}}};
}

}  // namespace az::selfplay
