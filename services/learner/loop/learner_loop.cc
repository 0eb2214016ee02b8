#include "services/learner/loop/learner_loop.h"

#include <algorithm>
#include <array>
#include <iomanip>
#include <thread>

#include "core/base/log.h"

namespace az::learner {

std::string_view CheckpointReasonName(CheckpointReason why) {
  return why == CheckpointReason::kPublish ? "publish" : "periodic";
}
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// How often a condition that lasts (waiting for the source) is logged again.
constexpr double kRepeatLogSeconds = 10;
// The pause after a sample error is taken in slices this long, so that a stop is noticed.
constexpr std::chrono::milliseconds kPauseSlice{100};

}  // namespace

std::string_view SkipKindName(SkipKind kind) {
  switch (kind) {
    case SkipKind::kNonFiniteLoss: return "nonfinite_loss";
    case SkipKind::kNonFiniteGradient: return "nonfinite_gradient";
    case SkipKind::kNoValidSamples: return "no_valid_samples";
    case SkipKind::kTrainError: return "train_error";
    case SkipKind::kPeerFailed: return "peer_failed";
  }
  return "unknown";
}

Status LearnerLoopOptions::Validate() const {
  if (batch < 1) return InvalidArgument("learner loop: batch must be >= 1");
  if (sample_timeout.count() < 0) return InvalidArgument("learner loop: sample_timeout < 0");
  if (publish_every < 1) return InvalidArgument("learner loop: publish_every must be >= 1");
  if (rollback_after_skips < 0) {
    return InvalidArgument("learner loop: rollback_after_skips must be >= 0");
  }
  if (max_train_errors_in_a_row < 1) {
    return InvalidArgument("learner loop: max_train_errors_in_a_row must be >= 1");
  }
  if (retry_pause.count() < 0) return InvalidArgument("learner loop: retry_pause < 0");
  return Status::Ok();
}

Result<std::unique_ptr<LearnerLoop>> LearnerLoop::Create(const LearnerLoopOptions& options,
                                                         const replay::BetaSchedule& beta,
                                                         LearnerLoopParts parts) {
  AZ_RETURN_IF_ERROR(options.Validate());
  if (parts.trainer == nullptr || parts.decoder == nullptr || parts.source == nullptr ||
      parts.hooks == nullptr) {
    return InvalidArgument("learner loop: the trainer, decoder, source and hooks are required");
  }
  if (parts.group != parts.trainer->options().group) {
    return InvalidArgument("learner loop: the loop's group must be the trainer's");
  }
  if (!parts.decoder->Fits(parts.trainer->options().net)) {
    return FailedPrecondition("learner loop: the network " +
                              parts.trainer->options().net.ToString() +
                              " does not fit the decoder's game");
  }
  return std::unique_ptr<LearnerLoop>(new LearnerLoop(options, beta, std::move(parts)));
}

bool LearnerLoop::Done() const {
  return options_.max_steps > 0 && parts_.trainer->counters().steps >= options_.max_steps;
}

double LearnerLoop::NextBeta() const {
  return beta_.At(parts_.trainer->counters().steps, counters_.samples_drawn);
}

Result<StepOutcome> LearnerLoop::Step() {
  nn::Trainer& trainer = *parts_.trainer;
  BatchDecoder& decoder = *parts_.decoder;
  const std::uint64_t step = trainer.counters().steps;
  const double beta = beta_.At(step, counters_.samples_drawn);
  const std::optional<std::uint64_t> model = parts_.hooks->model_version();

  const Clock::time_point start = Clock::now();
  nn::ProcessGroup* const group = parts_.group;
  // In a group, a rank that knows the group is paused or stopping does not draw a batch it would
  // drop.
  const bool local_stop = group != nullptr && parts_.interrupted && parts_.interrupted();
  const bool local_pause = group != nullptr && parts_.paused && parts_.paused();
  Result<SourceBatch> batch = Unavailable("not sampled: the learner group is pausing");
  Status not_ready;  // why this rank has no batch to train on
  if (local_stop || local_pause || group_paused_) {
    not_ready = batch.status();
  } else {
    BatchRequest request{.batch = options_.batch, .beta = beta, .timeout = options_.sample_timeout};
    if (model) request.model_version = static_cast<std::int64_t>(*model);
    batch = parts_.source->Sample(request);
    if (!batch.ok()) {
      not_ready = batch.status();
    } else {
      weights_.resize(batch->draws.size());
      for (std::size_t i = 0; i < weights_.size(); ++i) weights_[i] = batch->draws[i].weight;
      // An error: the source holds another game's records, nothing to train on until fixed.
      not_ready = decoder.Decode(batch->records, batch->record_bytes, weights_, decoded_);
    }
  }
  if (group == nullptr) {
    if (!not_ready.ok()) return Waiting(not_ready);
  } else {
    // A batch of nothing but malformed records counts as no batch: the trainer needs samples.
    const bool have_batch = not_ready.ok() && !decoded_.samples.empty();
    AZ_ASSIGN_OR_RETURN(const GroupVotes votes, Vote(have_batch));
    group_paused_ = votes.pause;
    if (votes.stop || votes.pause) {
      StepOutcome out;
      out.kind = votes.stop ? StepOutcome::Kind::kStopped : StepOutcome::Kind::kPaused;
      out.next_beta = NextBeta();
      return out;
    }
    if (!not_ready.ok()) return Waiting(not_ready);
    if (!votes.everyone_has_a_batch) {
      ++counters_.batches_dropped;
      if (!decoded_.dropped.empty()) {
        // Still withdraw the malformed records (the valid ones were not trained on).
        StepOutcome demoted;
        decoded_.samples.clear();
        SendPriorities(batch->draws, {}, demoted);
      }
      return Waiting(Unavailable("another learner rank has no batch yet; this one is dropped"));
    }
  }
  const std::span<const replay::SampledSlot> draws = batch->draws;
  const std::size_t n = draws.size();
  if (waiting_) {
    AZ_LOG(kInfo) << parts_.source->name() << " serves batches again after " << std::fixed
                  << std::setprecision(1) << SecondsSince(wait_started_) << " s";
    waiting_ = false;
  }
  counters_.samples_drawn += n;
  const double sample_seconds = SecondsSince(start);

  StepOutcome out;
  out.kind = StepOutcome::Kind::kSkipped;
  out.drawn = n;
  out.malformed = decoded_.dropped.size();
  counters_.malformed += out.malformed;
  if (out.malformed > 0) {
    const DroppedRecord& first = decoded_.dropped.front();
    AZ_LOG(kWarning) << out.malformed << " of " << n << " sampled records are malformed and were "
                     << "dropped; the first: record " << first.index << " (slot "
                     << draws[first.index].slot << "): " << first.why.ToString();
  }

  if (decoded_.samples.empty()) {
    out.skipped = SkipKind::kNoValidSamples;
    ++counters_.skipped_no_valid;
    SendPriorities(draws, {}, out);
    out.next_beta = NextBeta();
    return out;
  }

  const Clock::time_point train_start = Clock::now();
  Result<nn::TrainStepResult> trained = trainer.TrainStep(decoded_.samples, decoder.Encoder());
  if (!trained.ok() && group != nullptr && trained.status().code() == StatusCode::kUnavailable) {
    return trained.status();  // the group failed: this rank must leave and rejoin
  }
  if (!trained.ok()) {
    AZ_LOG(kError) << "training step failed: " << trained.status().ToString();
    out.skipped = SkipKind::kTrainError;
    out.train_error = trained.status();
    ++counters_.skipped_train_error;
    SendPriorities(draws, {}, out);
    // A refused batch says something about the batch; anything else, often, about the learner.
    if (trained.status().code() != StatusCode::kInvalidArgument &&
        ++train_errors_in_a_row_ >= options_.max_train_errors_in_a_row) {
      return trained.status().WithContext(std::to_string(train_errors_in_a_row_) +
                                          " training steps in a row failed");
    }
    out.next_beta = NextBeta();
    return out;
  }
  train_errors_in_a_row_ = 0;
  const nn::TrainStepStats& stats = trained->stats;
  if (stats.skipped == nn::SkipReason::kPeerFailed) {
    // The failing rank counts its error; here the step is only not taken (the non-finite streak
    // is left as it is, on every rank alike).
    out.skipped = SkipKind::kPeerFailed;
    ++counters_.skipped_peer_failed;
    SendPriorities(draws, {}, out);
    out.next_beta = NextBeta();
    return out;
  }
  if (stats.skipped != nn::SkipReason::kNone) {
    out.skipped = stats.skipped == nn::SkipReason::kNonFiniteLoss ? SkipKind::kNonFiniteLoss
                                                                  : SkipKind::kNonFiniteGradient;
    ++counters_.skipped_nonfinite;
    ++skipped_in_a_row_;
    AZ_LOG(kWarning) << "batch skipped at step " << step << ": " << SkipKindName(out.skipped)
                     << " (loss " << stats.loss << ", grad norm " << stats.grad_norm << "; "
                     << skipped_in_a_row_ << " in a row)";
    // Its losses are not priorities: only the malformed records are withdrawn.
    SendPriorities(draws, {}, out);
    AZ_RETURN_IF_ERROR(MaybeRollback(out));
    out.next_beta = NextBeta();
    return out;
  }
  skipped_in_a_row_ = 0;
  const double train_seconds = SecondsSince(train_start);
  // With uniform sampling a priority changes nothing: the round trip is saved.
  SendPriorities(
      draws, batch->prioritized ? std::span<const float>(trained->loss) : std::span<const float>(),
      out);

  staleness_.clear();
  if (model) {
    for (std::uint32_t version : decoded_.model_version) {
      staleness_.push_back(std::max<double>(0, static_cast<double>(*model) - version));
    }
  }
  ++counters_.steps;
  counters_.samples_trained += decoded_.samples.size();
  out.kind = StepOutcome::Kind::kTrained;
  out.report = {.step = stats.step,
                .loss = stats.loss,
                .policy_loss = stats.policy_loss,
                .value_loss = stats.value_loss,
                .policy_accuracy = stats.policy_accuracy,
                .grad_norm = stats.grad_norm,
                .learning_rate = stats.learning_rate,
                .beta = beta,
                .samples = decoded_.samples.size(),
                .sample_seconds = sample_seconds,
                .train_seconds = train_seconds,
                .staleness = staleness_};
  out.next_beta = NextBeta();

  // The cadence, by the trainer's steps (restored from checkpoints, so it survives a restart).
  const std::uint64_t now = trainer.counters().steps;
  const bool publish = now % options_.publish_every == 0;
  const bool periodic = options_.checkpoint_every > 0 && now % options_.checkpoint_every == 0;
  if (publish || periodic) {
    AZ_RETURN_IF_ERROR(parts_.hooks->WriteCheckpoint(publish ? CheckpointReason::kPublish
                                                             : CheckpointReason::kPeriodic));
    out.checkpointed = true;
    ++counters_.checkpoints_written;
  }
  if (publish) {
    AZ_RETURN_IF_ERROR(parts_.hooks->PublishModel());
    out.published = true;
    ++counters_.models_published;
  }
  return out;
}

Result<LearnerLoop::GroupVotes> LearnerLoop::Vote(bool have_batch) {
  const bool stop = parts_.interrupted && parts_.interrupted();
  const bool pause = parts_.paused && parts_.paused();
  std::array<double, 3> votes = {have_batch ? 0.0 : 1.0, stop ? 1.0 : 0.0, pause ? 1.0 : 0.0};
  AZ_RETURN_IF_ERROR(parts_.group->AllReduceSum(votes));
  return GroupVotes{
      .everyone_has_a_batch = votes[0] == 0.0, .stop = votes[1] > 0.0, .pause = votes[2] > 0.0};
}

StepOutcome LearnerLoop::Waiting(const Status& why) {
  const Clock::time_point now = Clock::now();
  if (!waiting_) {
    waiting_ = true;
    wait_started_ = now;
    wait_logged_ = now;
    AZ_LOG(kInfo) << "waiting for " << parts_.source->name() << " to serve a batch of "
                  << options_.batch << ": " << why.ToString();
  } else if (std::chrono::duration<double>(now - wait_logged_).count() >= kRepeatLogSeconds) {
    wait_logged_ = now;
    AZ_LOG(kInfo) << "still waiting for " << parts_.source->name() << " (" << std::fixed
                  << std::setprecision(0) << SecondsSince(wait_started_)
                  << " s): " << why.ToString();
  }
  ++counters_.waits;
  // Errors that come back at once (a batch that can never be served, a source shutting down,
  // another game's records) would spin: pause a little, in slices, so that a stop is noticed. Not
  // after a wait that ran out, nor after a connection that dropped under the request (the source
  // died or is restarting: the next request waits on its own until the source is back, and a
  // pause would only add to the recovery).
  if (why.code() != StatusCode::kDeadlineExceeded && why.code() != StatusCode::kUnavailable) {
    PauseAfterError();
  }
  StepOutcome out;
  out.kind = StepOutcome::Kind::kWaiting;
  out.waiting_for = why;
  out.next_beta = NextBeta();
  return out;
}

void LearnerLoop::PauseAfterError() {
  const Clock::time_point end = Clock::now() + options_.retry_pause;
  while (Clock::now() < end) {
    if (parts_.interrupted && parts_.interrupted()) return;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    std::this_thread::sleep_for(std::min(kPauseSlice, left));
  }
}

void LearnerLoop::SendPriorities(std::span<const replay::SampledSlot> draws,
                                 std::span<const float> losses, StepOutcome& out) {
  // Malformed records are withdrawn, so that they are not drawn again until self-play overwrites
  // them (a priority, even the lowest, would not do that with uniform sampling).
  if (!decoded_.dropped.empty()) {
    withdrawals_.clear();
    for (const DroppedRecord& dropped : decoded_.dropped) {
      withdrawals_.push_back({draws[dropped.index].slot, draws[dropped.index].generation});
    }
    Result<replay::UpdateCounts> withdrawn = parts_.source->Withdraw(withdrawals_);
    if (withdrawn.ok()) {
      out.withdrawn = withdrawn->applied;
      counters_.withdrawn += withdrawn->applied;
    } else {
      AZ_LOG(kWarning) << "withdrawing " << withdrawals_.size()
                       << " malformed records failed: " << withdrawn.status().ToString();
    }
  }
  if (losses.empty()) return;
  updates_.clear();
  for (std::size_t k = 0; k < decoded_.source.size(); ++k) {
    const replay::SampledSlot& draw = draws[decoded_.source[k]];
    updates_.push_back({draw.slot, draw.generation, static_cast<double>(losses[k])});
  }
  out.priorities_sent = true;
  ++counters_.priority_updates_sent;
  Result<replay::UpdateCounts> counts = parts_.source->UpdatePriorities(updates_);
  if (!counts.ok()) {
    // Priorities are advice: a lost update leaves the old priority, and training goes on.
    ++counters_.priority_updates_failed;
    out.priority_error = counts.status();
    AZ_LOG(kDebug) << "priority update failed: " << counts.status().ToString();
    return;
  }
  out.priority_counts = *counts;
  counters_.priorities_applied += counts->applied;
  counters_.priorities_stale += counts->stale;
  counters_.priorities_rejected += counts->rejected;
}

Status LearnerLoop::MaybeRollback(StepOutcome& out) {
  if (options_.rollback_after_skips <= 0 || skipped_in_a_row_ < options_.rollback_after_skips) {
    return Status::Ok();
  }
  skipped_in_a_row_ = 0;
  AZ_ASSIGN_OR_RETURN(std::optional<RestoredCheckpoint> restored, parts_.hooks->Rollback());
  if (!restored) {
    AZ_LOG(kError) << options_.rollback_after_skips
                   << " non-finite batches in a row and no checkpoint to roll back to; going on";
    return Status::Ok();
  }
  AZ_LOG(kWarning) << options_.rollback_after_skips
                   << " non-finite batches in a row: rolled back to " << restored->path << " (step "
                   << restored->step << ")";
  ++counters_.rollbacks;
  out.rolled_back_to = std::move(restored);
  return Status::Ok();
}

}  // namespace az::learner
