#include "services/learner/learner_app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include "core/base/log.h"
#include "services/common/service_util.h"

namespace az::learner {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A benchmark's split by solver value, as `status` and the learning curve's lines carry it.
nlohmann::json ValuesJson(const std::vector<score::ValueScore>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const score::ValueScore& v : values) {
    out.push_back(
        {{"value", v.value}, {"positions", v.positions}, {"kept", v.kept}, {"share", v.share()}});
  }
  return out;
}

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(seconds * 1000)));
}

// samples/s in `status` and the metrics is measured over this many seconds.
constexpr double kRateSeconds = 5;
// The loss averages in `status` follow about this many steps.
constexpr std::uint64_t kLossAverageSteps = 50;
// LibTorch failing on this many batches in a row is not a bad batch: it is the learner.
constexpr int kMaxTrainErrorsInARow = 10;

Result<nn::DeviceChoice> ParseDevice(const std::string& device) {
  if (device == "auto") return nn::DeviceChoice::kAuto;
  if (device == "cpu") return nn::DeviceChoice::kCpu;
  if (device == "cuda") return nn::DeviceChoice::kCuda;
  return InvalidArgument("--device must be auto, cpu or cuda, got " + device);
}

}  // namespace

Result<std::unique_ptr<LearnerApp>> LearnerApp::Create(const LearnerConfig& config) {
  std::unique_ptr<LearnerApp> app(new LearnerApp(config));
  const LearnerConfig& c = app->config_;
  service::LogEffectiveConfig(ConfigToJson(c));

  app->decoder_ =
      BatchDecoder::Create(c.game_kind, {.augment_symmetries = c.symmetry_augment,
                                         .seed = c.seed + 17,
                                         .root_value_mix = static_cast<float>(c.root_value_mix)});
  AZ_CHECK(app->decoder_->Fits(c.net_config), "FinalizeConfig picks the game's network");
  AZ_ASSIGN_OR_RETURN(replay::BetaSchedule beta, replay::BetaSchedule::Create(c.beta));
  app->beta_ = beta;
  const bool benchmark = c.benchmark && SolverBenchmark::Available(c.game) && app->IsRoot();
  if (benchmark) AZ_RETURN_IF_ERROR(SolverBenchmark::CheckSet(c.game, c.benchmark_set));

  // The metrics port first, so the discovery record the server writes names the bound port.
  if (c.metrics_port >= 0) {
    AZ_ASSIGN_OR_RETURN(app->exporter_,
                        service::MetricsExporter::Start(c.metrics_bind, c.metrics_port));
    app->metrics_ = std::make_unique<LearnerMetrics>(app->exporter_->registry());
  }
  // The control server holds the run directory's instance lock for this service name: taken
  // before anything touches the checkpoints, so two learners never train from the same ones.
  LearnerApp* self = app.get();
  AZ_ASSIGN_OR_RETURN(app->server_,
                      ipc::Server::Create({.service = c.service,
                                           .run_dir = c.run_dir,
                                           .endpoint = c.endpoint,
                                           .events_endpoint = c.events_endpoint,
                                           .metrics_port = app->metrics_port(),
                                           .status = [self] { return self->StatusJson(); }}));
  app->RegisterCommands();

  if (c.world_size > 1) {
    AZ_LOG(kInfo) << "joining the learner group as rank " << c.rank << " of " << c.world_size
                  << " at " << c.rendezvous << " (waiting up to " << c.rendezvous_timeout
                  << " s for every rank; collectives time out after " << c.dist_timeout << " s)";
    AZ_ASSIGN_OR_RETURN(app->group_, nn::ProcessGroup::Create(c.group));
    AZ_LOG(kInfo) << "joined the learner group, generation " << app->group_->generation();
    if (c.rank != 0) {
      AZ_LOG(kInfo) << "rank " << c.rank << " leaves checkpoints and publishing models to rank 0; "
                    << "it draws its own batches and sends its own priorities";
    }
  }
  if (app->metrics_) app->metrics_->SetGroup(c.rank, c.world_size);

  AZ_ASSIGN_OR_RETURN(nn::DeviceChoice device, ParseDevice(c.device));
  nn::TrainerOptions options;
  options.net = c.net_config;
  options.runtime.device = device;
  options.runtime.intra_op_threads = c.threads;
  options.runtime.channels_last = c.channels_last;
  options.runtime.cuda_fp16 = c.fp16;
  options.runtime.cpu_bf16 = nn::ResolveCpuBf16(c.cpu_bf16);
  options.runtime.input_layout = app->decoder_->input_layout();
  options.runtime.seed = c.seed;
  options.learning_rate = c.lr;
  options.warmup_steps = c.warmup_steps;
  options.decay_steps = c.lr_decay_steps;
  options.decay_seconds = c.lr_decay_minutes * 60.0;
  options.min_learning_rate = c.lr_min;
  options.ema_decay = c.ema_decay;
  options.ema_warmup_share = c.ema_warmup_share;
  options.mirror_equivariant = c.mirror_equivariant;
  options.weight_decay = c.weight_decay;
  options.decoupled_weight_decay = c.decoupled_weight_decay;
  options.optimizer = c.optimizer == "sgd" ? nn::OptimizerKind::kSgd : nn::OptimizerKind::kAdam;
  options.momentum = c.momentum;
  options.value_loss_weight = c.value_loss_weight;
  options.max_grad_norm = c.max_grad_norm;
  options.group = app->group_.get();
  AZ_ASSIGN_OR_RETURN(app->trainer_, nn::Trainer::Create(options));
  {
    std::lock_guard lock(app->status_mutex_);
    app->snapshot_.device = app->trainer_->DeviceName();
    app->snapshot_.net = c.net_config.ToString();
  }
  AZ_LOG(kInfo) << "network " << c.net_config.ToString() << " on " << app->trainer_->DeviceName()
                << (app->trainer_->UsesLossScaling() ? " (fp16, loss scaling)"
                    : app->trainer_->UsesBf16()      ? " (bf16 autocast)"
                                                     : "")
                << " (cpu-bf16 " << c.cpu_bf16 << ", native bf16 "
                << (nn::CpuHasNativeBf16() ? "yes" : "no") << ")";

  // Checkpoints and models are rank 0's alone (every rank holds the same state).
  if (app->IsRoot()) {
    AZ_ASSIGN_OR_RETURN(CheckpointDir checkpoints,
                        CheckpointDir::Open(c.checkpoint_dir, c.checkpoint_keep));
    app->checkpoints_ = std::move(checkpoints);
    AZ_RETURN_IF_ERROR(app->Restore());

    AZ_ASSIGN_OR_RETURN(app->publisher_,
                        ModelPublisher::Create({.run_dir = c.run_dir,
                                                .service = c.service,
                                                .events_endpoint = c.events_endpoint,
                                                .model_dir = c.model_dir,
                                                .keep = c.model_keep}));
    if (std::optional<std::uint64_t> latest = app->publisher_->LatestVersion()) {
      app->model_version_ = std::max(app->model_version_, static_cast<std::int64_t>(*latest));
    }
  }
  if (app->group_) AZ_RETURN_IF_ERROR(app->SyncGroup("start"));

  AZ_ASSIGN_OR_RETURN(replayd::ReplayClient replay,
                      replayd::ReplayClient::Create({.run_dir = c.run_dir,
                                                     .endpoint = c.replay_endpoint,
                                                     .service = c.replay_service,
                                                     .attempt_timeout = Millis(c.replay_timeout),
                                                     .max_attempts = 1}));
  app->source_ = std::make_unique<ReplayBatchSource>(std::move(replay));
  AZ_ASSIGN_OR_RETURN(
      app->loop_, LearnerLoop::Create({.batch = c.batch,
                                       .sample_timeout = Millis(c.sample_timeout),
                                       .max_steps = c.max_steps,
                                       .publish_every = c.publish_every,
                                       .checkpoint_every = c.checkpoint_every,
                                       .rollback_after_skips = c.rollback_after_skips,
                                       .max_train_errors_in_a_row = kMaxTrainErrorsInARow,
                                       .retry_pause = std::chrono::milliseconds(1000)},
                                      *app->beta_,
                                      {.trainer = app->trainer_.get(),
                                       .decoder = app->decoder_.get(),
                                       .source = app->source_.get(),
                                       .hooks = self,
                                       .interrupted =
                                           [self] {
                                             return self->stop_.load(std::memory_order_acquire) ||
                                                    self->server_->shutdown_requested();
                                           },
                                       .group = app->group_.get(),
                                       .paused = [self] { return self->server_->paused(); }}));

  app->collapse_ = CollapseWatch({.max_drop = c.collapse_drop,
                                  .min_value_loss = c.collapse_value_loss,
                                  .min_steps = kLossAverageSteps});
  if (benchmark) {
    app->benchmark_ = std::make_unique<SolverBenchmark>(
        c.game, c.benchmark_set,
        [self](const Result<BenchmarkResult>& result) { self->RecordBenchmark(result); });
    AZ_LOG(kInfo) << "scoring every " << c.benchmark_every << (c.benchmark_every == 1 ? "" : "th")
                  << " published model against the " << c.game << " solver in the background"
                  << (c.benchmark_set.empty() ? "" : " on benchmark set " + c.benchmark_set);
  }

  const std::uint64_t step = app->trainer_->counters().steps;
  if (app->metrics_) {
    app->metrics_->SetRestored(step, app->model_version_ < 0 ? 0 : app->model_version_);
    app->metrics_->SetBeta(app->beta_->At(step, 0));
  }
  {
    std::lock_guard lock(app->status_mutex_);
    app->snapshot_.step = step;
    app->snapshot_.model_version = app->model_version_;
    app->snapshot_.beta = app->beta_->At(step, 0);
    app->snapshot_.learning_rate = c.lr;
  }
  return app;
}

LearnerApp::~LearnerApp() {
  // The benchmark's thread writes the status and the metrics: it stops first.
  benchmark_.reset();
  // The server next: its thread calls StatusJson, which reads the rest.
  server_.reset();
}

Status LearnerApp::SyncGroup(std::string_view why) {
  // Rank 0's bookkeeping first (its newest model and where it resumed from), then its trainer.
  std::string header;
  if (IsRoot()) {
    std::lock_guard lock(status_mutex_);
    header =
        nlohmann::json{{"model_version", model_version_}, {"resumed_from", snapshot_.resumed_from}}
            .dump();
  }
  AZ_ASSIGN_OR_RETURN(header, group_->BroadcastFromRoot(header));
  const nlohmann::json root = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (!root.is_object() || !root.contains("model_version")) {
    return Internal("learner group: rank 0 sent a malformed state header");
  }
  const std::int64_t version = root["model_version"].get<std::int64_t>();
  AZ_ASSIGN_OR_RETURN(
      const nn::WeightsFileInfo info,
      trainer_->SyncFromRoot(version < 0 ? 0 : static_cast<std::uint64_t>(version)));
  if (!IsRoot()) {
    model_version_ = version;
    std::lock_guard lock(status_mutex_);
    snapshot_.resumed_from = root.value("resumed_from", std::string());
    snapshot_.model_version = model_version_;
  }
  AZ_LOG(kInfo) << "learner group (" << why << "): every rank holds rank 0's state at step "
                << info.train_step << ", model " << version;
  return Status::Ok();
}

Status LearnerApp::Restore() {
  const std::vector<CheckpointFile> existing = checkpoints_->List();
  if (!config_.resume) {
    if (!existing.empty()) {
      return FailedPrecondition("--no-resume, but " + checkpoints_->dir() + " holds " +
                                std::to_string(existing.size()) + " checkpoint(s) (newest " +
                                existing.front().path +
                                "): resume from them (--resume), or move them away to start over");
    }
    return Status::Ok();
  }
  if (config_.grow_blocks > 0) {
    // A run that grew its network: the newest readable checkpoint says which depth to resume.
    for (const CheckpointFile& file : existing) {
      Result<nn::WeightsFileInfo> info = nn::ReadWeightsFileInfo(file.path);
      if (!info.ok()) continue;  // RestoreNewest reports it and falls back past it
      if (info->net.blocks == config_.grow_blocks) {
        AZ_RETURN_IF_ERROR(trainer_->Deepen(config_.grow_blocks));
        AZ_LOG(kInfo) << file.path << " holds the grown network (" << info->net.ToString()
                      << "): resuming at that depth";
        std::lock_guard lock(status_mutex_);
        snapshot_.net = info->net.ToString();
      }
      break;
    }
  }
  AZ_ASSIGN_OR_RETURN(std::optional<ResumeInfo> resumed, checkpoints_->RestoreNewest(*trainer_));
  if (!resumed) {
    AZ_LOG(kInfo) << "no checkpoint in " << checkpoints_->dir()
                  << ": starting from a fresh network";
    return Status::Ok();
  }
  for (const std::string& refused : resumed->refused) {
    AZ_LOG(kWarning) << "fell back past " << refused << " (renamed to .corrupt)";
  }
  AZ_LOG(kInfo) << "resumed from " << resumed->path << " at step " << resumed->step << ", model "
                << resumed->model_version;
  model_version_ = static_cast<std::int64_t>(resumed->model_version);
  checkpointed_step_ = resumed->step;
  has_checkpoint_ = true;
  std::lock_guard lock(status_mutex_);
  snapshot_.resumed_from = resumed->path;
  snapshot_.checkpoint_path = resumed->path;
  snapshot_.checkpoint_step = resumed->step;
  return Status::Ok();
}

Status LearnerApp::MaybeGrow() {
  const nn::TrainerCounters counters = trainer_->counters();
  if (config_.grow_blocks <= trainer_->options().net.blocks ||
      counters.train_seconds < config_.grow_at_minutes * 60.0) {
    return Status::Ok();
  }
  const std::string before = trainer_->options().net.ToString();
  AZ_RETURN_IF_ERROR(trainer_->Deepen(config_.grow_blocks));
  const std::string after = trainer_->options().net.ToString();
  AZ_LOG(kInfo) << "grew the network from " << before << " to " << after << " after " << std::fixed
                << std::setprecision(1) << counters.train_seconds / 60.0
                << " minutes of training (step " << counters.steps
                << "); the new blocks start as identities";
  {
    std::lock_guard lock(status_mutex_);
    snapshot_.net = after;
  }
  if (IsRoot()) AZ_RETURN_IF_ERROR(SaveCheckpoint("grown").status());
  return Status::Ok();
}

void LearnerApp::RegisterCommands() {
  server_->RegisterDeferred(
      "checkpoint",
      [this](ipc::Request&, ipc::Responder& responder) {
        // The training loop owns the trainer: it writes the checkpoint between steps and answers.
        std::lock_guard lock(checkpoint_mutex_);
        checkpoint_requests_.push_back(std::move(responder));
      },
      "write a checkpoint (model + optimizer + step) now; answers with its path and step once it "
      "is on disk");
}

void LearnerApp::Stop() {
  stop_.store(true, std::memory_order_release);
  if (server_) server_->RequestShutdown();
}

nlohmann::json LearnerApp::StatusJson() {
  Snapshot s;
  std::pair<double, std::uint64_t> collapse_best;
  bool collapse_suspected = false;
  {
    std::lock_guard lock(status_mutex_);
    s = snapshot_;
    collapse_best = {collapse_.best_share(), collapse_.best_model()};
    collapse_suspected = collapse_.suspected();
  }
  return {{"game", config_.game},
          {"net", s.net},
          {"device", s.device},
          {"activity", s.activity},
          {"step", s.step},
          {"max_steps", config_.max_steps},
          {"batch", config_.batch},
          {"beta", s.beta},
          {"lr", s.learning_rate},
          {"train_minutes", s.train_minutes},
          {"loss", s.loss},
          {"policy_loss", s.policy_loss},
          {"value_loss", s.value_loss},
          {"policy_accuracy", s.policy_accuracy},
          {"grad_norm", s.grad_norm},
          {"loss_avg", s.loss_avg},
          {"policy_loss_avg", s.policy_loss_avg},
          {"value_loss_avg", s.value_loss_avg},
          {"policy_accuracy_avg", s.policy_accuracy_avg},
          {"initial_loss", s.initial_loss},
          {"initial_policy_loss", s.initial_policy_loss},
          {"initial_value_loss", s.initial_value_loss},
          {"samples_per_second", s.samples_per_second},
          {"samples_trained", s.samples_trained},
          {"samples_drawn", s.samples_drawn},
          {"malformed_samples", s.malformed},
          {"malformed_withdrawn", s.malformed_withdrawn},
          {"skipped_nonfinite", s.skipped_nonfinite},
          {"skipped_other", s.skipped_other},
          {"rollbacks", s.rollbacks},
          {"priority_updates_applied", s.priority_updates_applied},
          {"priority_updates_stale", s.priority_updates_stale},
          {"model_version", s.model_version},
          {"model_path", s.model_path},
          {"checkpoint_path", s.checkpoint_path},
          {"checkpoint_step", s.checkpoint_step},
          {"resumed_from", s.resumed_from},
          {"last_error", s.last_error},
          {"benchmark", s.benchmark_model < 0
                            ? nlohmann::json(nullptr)
                            : nlohmann::json{{"model_version", s.benchmark.model_version},
                                             {"set", s.benchmark.set},
                                             {"positions", s.benchmark.positions},
                                             {"kept", s.benchmark.kept},
                                             {"share", s.benchmark.share},
                                             {"nontrivial_share", s.benchmark.nontrivial_share},
                                             {"values", ValuesJson(s.benchmark.values)},
                                             {"best_share", collapse_best.first},
                                             {"best_model_version", collapse_best.second}}},
          {"collapse_suspected", collapse_suspected},
          {"collapse_warning", s.collapse_warning},
          {"events_endpoint", config_.events_endpoint},
          {"metrics_port", metrics_port()},
          {"rank", config_.rank},
          {"world_size", config_.world_size},
          {"group",
           group_ ? nlohmann::json{{"rendezvous", config_.rendezvous},
                                   {"generation", std::string(group_->generation())},
                                   {"timeout", config_.dist_timeout},
                                   {"role", IsRoot() ? "checkpoints and publishes models"
                                                     : "leaves checkpoints and models to rank 0"}}
                  : nlohmann::json(nullptr)}};
}

Status LearnerApp::Run() {
  AZ_RETURN_IF_ERROR(server_->Start());
  AZ_LOG(kInfo) << "serving on " << server_->endpoint()
                << (publisher_ ? ", publishing models on " + publisher_->endpoint()
                               : ", rank 0 publishes the models")
                << (exporter_ ? ", metrics on port " : "")
                << (exporter_ ? std::to_string(exporter_->port()) : std::string());
  if (model_version_ < 0) {
    // Every service then plays the network the learner starts from, and the arena has a baseline.
    // (Other ranks only count it, as they count every model rank 0 publishes.)
    AZ_RETURN_IF_ERROR(PublishModel());
  }
  last_log_ = Clock::now();
  last_rate_ = last_log_;
  step_at_last_log_ = trainer_->counters().steps;
  Status status;
  // In a group a stop or pause is voted on inside the loop's step, so that all ranks stop or pause
  // together; the loop's step is the only place a rank leaves.
  while (group_ || (!stop_.load(std::memory_order_acquire) && !server_->shutdown_requested())) {
    ServeCheckpointRequests();
    if (loop_->Done()) {
      AZ_LOG(kInfo) << "reached --max-steps " << config_.max_steps;
      break;
    }
    if (!group_ && server_->paused()) {
      {
        std::lock_guard lock(status_mutex_);
        snapshot_.activity = "paused";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    Result<StepOutcome> outcome = loop_->Step();
    if (!outcome.ok()) {
      status = outcome.status();
      if (group_ && !group_->healthy()) {
        AZ_LOG(kError) << status.ToString() << "; rank " << config_.rank
                       << " exits so that its supervisor restarts it and the group meets again "
                       << "at " << config_.rendezvous;
      }
      break;
    }
    if (outcome->kind == StepOutcome::Kind::kStopped) {
      AZ_LOG(kInfo) << "a rank of the learner group was asked to stop: every rank stops";
      break;
    }
    if (outcome->kind == StepOutcome::Kind::kPaused) {
      {
        std::lock_guard lock(status_mutex_);
        snapshot_.activity = "paused (a rank of the learner group is paused)";
      }
      if (metrics_) metrics_->SetWaiting(false);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    Record(*outcome);
    if (outcome->kind == StepOutcome::Kind::kTrained) {
      if (status = MaybeGrow(); !status.ok()) break;
    }
    UpdateRate();
    LogProgress(false);
  }
  {
    std::lock_guard lock(status_mutex_);
    snapshot_.activity = "stopping";
  }
  // The final checkpoint: a restart continues from exactly here. (After a failed collective too:
  // rank 0's state is still the last step every rank took.)
  if (IsRoot() && (!has_checkpoint_ || checkpointed_step_ != trainer_->counters().steps)) {
    Result<std::string> written = SaveCheckpoint("shutdown");
    if (status.ok() && !written.ok()) status = written.status();
  }
  ServeCheckpointRequests();
  LogProgress(true);
  if (!status.ok()) {
    std::lock_guard lock(status_mutex_);
    snapshot_.last_error = status.ToString();
  }
  AZ_LOG(kInfo) << "stopped at step " << trainer_->counters().steps << ", model " << model_version_;
  return status;
}

void LearnerApp::Record(const StepOutcome& outcome) {
  using Kind = StepOutcome::Kind;
  if (metrics_) {
    metrics_->SetWaiting(outcome.kind == Kind::kWaiting);
    if (outcome.malformed > 0) metrics_->CountMalformed(outcome.malformed);
    if (outcome.kind == Kind::kSkipped) metrics_->CountSkipped(outcome.skipped);
    if (outcome.priorities_sent) {
      if (outcome.priority_error.ok()) {
        metrics_->CountPriorityUpdates(outcome.priority_counts.applied,
                                       outcome.priority_counts.stale,
                                       outcome.priority_counts.rejected);
      } else {
        metrics_->CountPriorityFailure();
      }
    }
    if (outcome.rolled_back_to) metrics_->CountRollback();
    if (outcome.kind == Kind::kTrained) metrics_->ObserveStep(outcome.report);
    metrics_->SetBeta(outcome.next_beta);
  }
  std::lock_guard lock(status_mutex_);
  if (outcome.kind == Kind::kWaiting) {
    snapshot_.activity = "waiting for replay: " + outcome.waiting_for.ToString();
    return;
  }
  snapshot_.activity = "training";
  snapshot_.samples_drawn = loop_->counters().samples_drawn;
  snapshot_.malformed += outcome.malformed;
  snapshot_.malformed_withdrawn += outcome.withdrawn;
  if (outcome.priorities_sent && outcome.priority_error.ok()) {
    snapshot_.priority_updates_applied += outcome.priority_counts.applied;
    snapshot_.priority_updates_stale += outcome.priority_counts.stale;
  }
  if (outcome.kind == Kind::kSkipped) {
    if (outcome.skipped == SkipKind::kNonFiniteLoss ||
        outcome.skipped == SkipKind::kNonFiniteGradient) {
      ++snapshot_.skipped_nonfinite;
    } else {
      ++snapshot_.skipped_other;
    }
    if (outcome.skipped == SkipKind::kTrainError) {
      snapshot_.last_error = outcome.train_error.ToString();
    }
    if (outcome.rolled_back_to) {
      ++snapshot_.rollbacks;
      snapshot_.step = outcome.rolled_back_to->step;
    }
    return;
  }
  const StepReport& r = outcome.report;
  snapshot_.step = r.step;
  snapshot_.beta = outcome.next_beta;
  snapshot_.learning_rate = r.learning_rate;
  snapshot_.train_minutes = trainer_->counters().train_seconds / 60.0;
  snapshot_.loss = r.loss;
  snapshot_.policy_loss = r.policy_loss;
  snapshot_.value_loss = r.value_loss;
  snapshot_.policy_accuracy = r.policy_accuracy;
  snapshot_.grad_norm = r.grad_norm;
  // The first steps average plainly, then the weight settles at 1/50.
  const double weight = 1.0 / static_cast<double>(std::min<std::uint64_t>(
                                  ++snapshot_.averaged_steps, kLossAverageSteps));
  snapshot_.loss_avg += weight * (r.loss - snapshot_.loss_avg);
  snapshot_.policy_loss_avg += weight * (r.policy_loss - snapshot_.policy_loss_avg);
  snapshot_.value_loss_avg += weight * (r.value_loss - snapshot_.value_loss_avg);
  snapshot_.policy_accuracy_avg += weight * (r.policy_accuracy - snapshot_.policy_accuracy_avg);
  if (snapshot_.averaged_steps <= kLossAverageSteps) {
    snapshot_.initial_loss = snapshot_.loss_avg;
    snapshot_.initial_policy_loss = snapshot_.policy_loss_avg;
    snapshot_.initial_value_loss = snapshot_.value_loss_avg;
  }
  snapshot_.samples_trained += r.samples;
  if (std::optional<std::string> warning =
          collapse_.ObserveValueLoss(snapshot_.value_loss_avg, snapshot_.averaged_steps)) {
    WarnCollapse("value_loss", *warning);
  }
  if (metrics_)
    metrics_->SetCollapse(collapse_.benchmark_falling(), collapse_.value_loss_collapsed());
}

void LearnerApp::WarnCollapse(std::string_view reason, const std::string& warning) {
  AZ_LOG(kWarning) << warning;
  snapshot_.collapse_warning = warning;
  if (metrics_) metrics_->CountCollapseWarning(reason);
}

void LearnerApp::RecordBenchmark(const Result<BenchmarkResult>& result) {
  if (!result.ok()) {
    AZ_LOG(kWarning) << "solver benchmark failed: " << result.status().ToString();
    if (metrics_) metrics_->CountBenchmarkFailure();
    return;
  }
  const BenchmarkResult& r = *result;
  std::lock_guard lock(status_mutex_);
  const std::optional<std::string> warning = collapse_.ObserveBenchmark(r);
  snapshot_.benchmark_model = static_cast<std::int64_t>(r.model_version);
  snapshot_.benchmark = r;
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << "benchmark: model " << r.model_version
       << " keeps the solver's value in " << r.kept << "/" << r.positions << " positions ("
       << 100 * r.share << "%, non-trivial " << 100 * r.nontrivial_share << "%";
  for (const score::ValueScore& v : r.values) {
    line << "; " << v.value << " " << 100 * v.share() << "%";
  }
  line << "), best " << 100 * collapse_.best_share() << "% (model " << collapse_.best_model()
       << "), " << std::setprecision(2) << r.seconds << " s";
  AZ_LOG(kInfo) << line.str();
  AppendToCurve(r);
  if (metrics_) {
    metrics_->ObserveBenchmark(r.model_version, r.share, r.nontrivial_share,
                               collapse_.best_share());
    for (const score::ValueScore& v : r.values) metrics_->ObserveBenchmarkValue(v.value, v.share());
    metrics_->SetCollapse(collapse_.benchmark_falling(), collapse_.value_loss_collapsed());
  }
  if (warning) WarnCollapse("benchmark_drop", *warning);
}

void LearnerApp::AppendToCurve(const BenchmarkResult& r) {
  const std::string path = config_.run_dir + "/" + std::string(kCurveFile);
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  const nlohmann::json entry = {{"time_unix_ms", now_ms},
                                {"model", r.model_version},
                                {"step", snapshot_.step},
                                {"kept", r.kept},
                                {"positions", r.positions},
                                {"share", r.share},
                                {"nontrivial_share", r.nontrivial_share},
                                {"set", r.set},
                                {"values", ValuesJson(r.values)}};
  // One line a write, appended: a restarted learner goes on with the same file, and a kill
  // mid-write leaves at most a torn last line, which scripts/learning-curve skips with a warning.
  std::ofstream out(path, std::ios::app);
  out << entry.dump() << '\n';
  out.flush();
  if (!out && !curve_write_failed_) {
    curve_write_failed_ = true;
    AZ_LOG(kWarning) << "cannot append to the learning curve " << path
                     << " (the benchmark goes on in the log, status and metrics)";
  }
}

std::optional<std::uint64_t> LearnerApp::model_version() const {
  if (model_version_ < 0) return std::nullopt;
  return static_cast<std::uint64_t>(model_version_);
}

Status LearnerApp::WriteCheckpoint(CheckpointReason why) {
  if (!IsRoot()) return Status::Ok();  // rank 0's checkpoint holds this rank's state too
  // Before a publish the checkpoint already holds the model about to be published: a restart
  // resumes from exactly that model.
  return SaveCheckpoint(CheckpointReasonName(why),
                        why == CheckpointReason::kPublish
                            ? std::optional<std::uint64_t>(NextModelVersion())
                            : std::nullopt)
      .status();
}

std::uint64_t LearnerApp::NextModelVersion() const {
  return model_version_ < 0 ? 0 : static_cast<std::uint64_t>(model_version_) + 1;
}

Result<std::optional<RestoredCheckpoint>> LearnerApp::Rollback() {
  if (group_) {
    // Every rank gets here at the same step (skips are the group's); rank 0 restores its newest
    // checkpoint and the others take its state.
    std::string restored_path;
    if (IsRoot()) {
      AZ_ASSIGN_OR_RETURN(std::optional<ResumeInfo> restored,
                          checkpoints_->RestoreNewest(*trainer_));
      if (restored) {
        restored_path = restored->path;
        checkpointed_step_ = restored->step;
      }
    }
    AZ_ASSIGN_OR_RETURN(restored_path, group_->BroadcastFromRoot(restored_path));
    AZ_RETURN_IF_ERROR(SyncGroup("rollback"));
    if (restored_path.empty()) return std::optional<RestoredCheckpoint>();
    return std::optional<RestoredCheckpoint>(
        RestoredCheckpoint{.step = trainer_->counters().steps, .path = restored_path});
  }
  AZ_ASSIGN_OR_RETURN(std::optional<ResumeInfo> restored, checkpoints_->RestoreNewest(*trainer_));
  if (!restored) return std::optional<RestoredCheckpoint>();
  checkpointed_step_ = restored->step;
  return std::optional<RestoredCheckpoint>(
      RestoredCheckpoint{.step = restored->step, .path = restored->path});
}

Status LearnerApp::PublishModel() {
  const std::uint64_t version = NextModelVersion();
  if (!IsRoot()) {
    // Rank 0 publishes this very model (the same weights, the same number): keep count, so that
    // this rank's batches carry the model version self-play is on.
    model_version_ = static_cast<std::int64_t>(version);
    AZ_LOG(kDebug) << "rank 0 publishes model " << version;
    std::lock_guard lock(status_mutex_);
    snapshot_.model_version = model_version_;
    return Status::Ok();
  }
  AZ_ASSIGN_OR_RETURN(ipc::ModelPublished model, publisher_->Publish(*trainer_, version));
  model_version_ = static_cast<std::int64_t>(version);
  AZ_LOG(kInfo) << "published model " << version << " (step " << trainer_->counters().steps
                << ") at " << model.path << ", " << model.checksum;
  if (metrics_) metrics_->ObservePublish(version);
  if (benchmark_ && version % config_.benchmark_every == 0) benchmark_->Submit(version, model.path);
  std::lock_guard lock(status_mutex_);
  snapshot_.model_version = model_version_;
  snapshot_.model_path = model.path;
  return Status::Ok();
}

Result<std::string> LearnerApp::SaveCheckpoint(std::string_view why,
                                               std::optional<std::uint64_t> model_version) {
  const Clock::time_point start = Clock::now();
  const std::uint64_t version =
      model_version.value_or(model_version_ < 0 ? 0 : static_cast<std::uint64_t>(model_version_));
  AZ_ASSIGN_OR_RETURN(std::string path, checkpoints_->Save(*trainer_, version));
  const double seconds = SecondsSince(start);
  const std::uint64_t step = trainer_->counters().steps;
  checkpointed_step_ = step;
  has_checkpoint_ = true;
  if (metrics_) metrics_->ObserveCheckpoint(seconds);
  AZ_LOG(kInfo) << "checkpoint (" << why << ") at step " << step << ": " << path << " in "
                << std::fixed << std::setprecision(3) << seconds << " s";
  std::lock_guard lock(status_mutex_);
  snapshot_.checkpoint_path = path;
  snapshot_.checkpoint_step = step;
  return path;
}

void LearnerApp::ServeCheckpointRequests() {
  std::deque<ipc::Responder> requests;
  {
    std::lock_guard lock(checkpoint_mutex_);
    requests.swap(checkpoint_requests_);
  }
  for (ipc::Responder& responder : requests) {
    if (!IsRoot()) {
      responder.Send(FailedPrecondition("rank " + std::to_string(config_.rank) +
                                        " of the learner group writes no checkpoints: ask rank 0"));
      continue;
    }
    const Clock::time_point start = Clock::now();
    Result<std::string> path = SaveCheckpoint("requested");
    if (!path.ok()) {
      responder.Send(path.status());
      continue;
    }
    responder.Send(ipc::Reply{{{"path", *path},
                               {"step", trainer_->counters().steps},
                               {"model_version", model_version_},
                               {"seconds", SecondsSince(start)}},
                              {}});
  }
}

void LearnerApp::UpdateRate() {
  const double elapsed = SecondsSince(last_rate_);
  if (elapsed < kRateSeconds) return;
  std::lock_guard lock(status_mutex_);
  const double rate =
      static_cast<double>(snapshot_.samples_trained - samples_at_last_rate_) / elapsed;
  snapshot_.samples_per_second = rate;
  samples_at_last_rate_ = snapshot_.samples_trained;
  last_rate_ = Clock::now();
  if (metrics_) metrics_->SetSamplesPerSecond(rate);
}

void LearnerApp::LogProgress(bool force) {
  const double elapsed = SecondsSince(last_log_);
  if (!force && (config_.log_interval <= 0 || elapsed < config_.log_interval)) return;
  Snapshot s;
  {
    std::lock_guard lock(status_mutex_);
    s = snapshot_;
  }
  const double rate =
      elapsed > 0 ? static_cast<double>(s.samples_trained - samples_at_last_log_) / elapsed : 0;
  const std::uint64_t steps = s.step >= step_at_last_log_ ? s.step - step_at_last_log_ : 0;
  last_log_ = Clock::now();
  samples_at_last_log_ = s.samples_trained;
  step_at_last_log_ = s.step;
  if (steps == 0 && !force) return;  // the waiting lines say what is going on
  std::ostringstream line;
  line << std::fixed << std::setprecision(4) << "step " << s.step << " (+" << steps << ") loss "
       << s.loss << " (policy " << s.policy_loss << ", value " << s.value_loss << ") policy top-1 "
       << std::setprecision(1) << 100.0 * s.policy_accuracy_avg << "% grad " << std::setprecision(3)
       << s.grad_norm << " lr " << std::setprecision(6) << s.learning_rate << " beta "
       << std::setprecision(3) << s.beta << " | " << std::setprecision(1) << rate
       << " samples/s | model " << s.model_version << " | malformed " << s.malformed << ", skipped "
       << s.skipped_nonfinite + s.skipped_other;
  AZ_LOG(kInfo) << line.str();
}

}  // namespace az::learner
