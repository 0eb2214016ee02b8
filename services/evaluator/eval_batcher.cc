#include "services/evaluator/eval_batcher.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "services/common/eval_protocol.h"
#include "core/games/registry.h"
#include "core/nn/game_network.h"
#include "core/nn/network_evaluator.h"

namespace az::evaluator {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

template <games::GameDefinition G>
class GameEvalBatcher final : public EvalBatcher {
 public:
  GameEvalBatcher(shm::RequestServer server, const BatchOptions& options)
      : server_(std::move(server)), options_(options) {
    const auto n = static_cast<std::size_t>(options.max_batch);
    records_.reserve(n);
    envelopes_.reserve(n);
    invalid_.reserve(n);
    offsets_.reserve(n + 1);
    actions_.reserve(n * G::kMaxMoves);
    priors_.reserve(n * G::kMaxMoves);
    wdl_.reserve(n * 3);
  }

  BatchReport Step(nn::Network& network) override {
    BatchReport report;
    report.model_version = network.model_version();
    Clear();
    const auto visit = [this](const shm::Envelope& envelope, std::span<const std::byte> payload) {
      Take(envelope, payload);
    };
    const auto max = static_cast<std::size_t>(options_.max_batch);
    Result<std::size_t> first = server_.TakeRequests(max, options_.first_wait, visit);
    if (!first.ok()) return report;  // DeadlineExceeded: nothing came
    const Clock::time_point start = Clock::now();
    const std::chrono::nanoseconds stall = Stall();
    report.stall_seconds = Seconds(stall);
    // Keep collecting while requests keep arriving; fire on a stall, a full batch or max_collect.
    while (Taken() < max && Clock::now() - start < options_.max_collect) {
      if (!server_.TakeRequests(max - Taken(), stall, visit).ok()) break;
    }
    const Clock::time_point fired = Clock::now();
    report.collect_seconds = Seconds(fired - start);
    report.taken = static_cast<int>(Taken());
    report.invalid = static_cast<int>(invalid_.size());

    const int n = static_cast<int>(records_.size());
    if (n > 0) {
      offsets_.push_back(static_cast<std::int32_t>(actions_.size()));  // closes the CSR list
      priors_.assign(actions_.size(), 0.0f);
      wdl_.assign(static_cast<std::size_t>(n) * 3, 0.0f);
      const nn::LegalMovesView legal{offsets_, actions_};
      report.forward_status =
          nn::ForwardRecords<G>(network, records_, legal, priors_.data(), wdl_.data());
      report.evaluated = report.forward_status.ok() ? n : 0;
    }
    const Clock::time_point forwarded = Clock::now();
    report.forward_seconds = Seconds(forwarded - fired);
    if (report.evaluated > 0) {
      forward_average_ = forward_average_ == 0
                             ? report.forward_seconds
                             : 0.9 * forward_average_ + 0.1 * report.forward_seconds;
    }

    Respond(report);
    report.respond_seconds = Seconds(Clock::now() - forwarded);
    return report;
  }

  shm::ChannelServerStats ChannelStats() const override { return server_.Stats(); }
  std::size_t ReclaimDead() override { return server_.ReclaimDead(); }

 private:
  std::size_t Taken() const { return records_.size() + invalid_.size(); }

  std::chrono::nanoseconds Stall() const {
    if (options_.stall_fraction <= 0 || forward_average_ == 0) return options_.stall;
    const auto adaptive = std::chrono::nanoseconds(
        static_cast<std::int64_t>(options_.stall_fraction * forward_average_ * 1e9));
    return std::clamp<std::chrono::nanoseconds>(adaptive, std::chrono::microseconds(5),
                                                options_.stall);
  }

  void Clear() {
    records_.clear();
    envelopes_.clear();
    invalid_.clear();
    offsets_.clear();
    actions_.clear();
  }

  // Called in place on each request (its ring slot is held meanwhile: copy and go).
  void Take(const shm::Envelope& envelope, std::span<const std::byte> payload) {
    const Status status = service::ReadEvalRequest<G>(payload, request_);
    if (!status.ok()) {
      invalid_.push_back(envelope);
      // One line per bad request would flood the log if a broken worker sends thousands.
      if (++invalid_logged_ <= 10 || invalid_logged_ % 1000 == 0) {
        AZ_LOG(kWarning) << "refused an eval request of worker " << envelope.worker_id << " ("
                         << invalid_logged_ << " so far): " << status.ToString();
      }
      return;
    }
    offsets_.push_back(static_cast<std::int32_t>(actions_.size()));
    for (int i = 0; i < request_.header.num_moves; ++i) {
      actions_.push_back(request_.policy_indices[i]);
    }
    records_.push_back(request_.record);
    envelopes_.push_back(envelope);
  }

  void Respond(BatchReport& report) {
    const std::uint64_t version = report.model_version;
    const bool ok = report.forward_status.ok();
    blocked_workers_.clear();
    const auto send = [&](const shm::Envelope& to, auto&& fill) {
      if (std::find(blocked_workers_.begin(), blocked_workers_.end(), to.worker_id) !=
          blocked_workers_.end()) {
        ++report.response_timeouts;
        return;
      }
      const Status status = server_.RespondWith(to, options_.respond_timeout, fill);
      if (status.ok()) {
        ++report.answered;
        return;
      }
      ++report.response_timeouts;
      if (status.code() == StatusCode::kDeadlineExceeded) blocked_workers_.push_back(to.worker_id);
      AZ_LOG(kWarning) << "answering worker " << to.worker_id << ": " << status.ToString();
    };
    for (std::size_t i = 0; i < envelopes_.size(); ++i) {
      const std::size_t begin = static_cast<std::size_t>(offsets_[i]);
      const std::size_t count = static_cast<std::size_t>(offsets_[i + 1]) - begin;
      send(envelopes_[i], [&](std::span<std::byte> payload) {
        if (ok) {
          service::WriteEvalResponse<G>(
              service::EvalStatus::kOk, version, std::span<const float>(wdl_.data() + 3 * i, 3),
              std::span<const float>(priors_.data() + begin, count), payload);
        } else {
          service::WriteEvalResponse<G>(service::EvalStatus::kEvaluationFailed, version, {}, {},
                                        payload);
        }
      });
    }
    for (const shm::Envelope& to : invalid_) {
      send(to, [&](std::span<std::byte> payload) {
        service::WriteEvalResponse<G>(service::EvalStatus::kInvalidRequest, version, {}, {},
                                      payload);
      });
    }
  }

  shm::RequestServer server_;
  BatchOptions options_;
  service::EvalRequest<G> request_{};
  std::uint64_t invalid_logged_ = 0;
  double forward_average_ = 0;  // seconds per batch in the network, exponentially averaged
  // The batch being collected: valid requests' records and envelopes, the CSR legal lists.
  std::vector<typename G::Record> records_;
  std::vector<shm::Envelope> envelopes_;
  std::vector<shm::Envelope> invalid_;
  std::vector<std::int32_t> offsets_;
  std::vector<std::int32_t> actions_;
  std::vector<float> priors_;
  std::vector<float> wdl_;
  std::vector<std::uint32_t> blocked_workers_;
};

template <games::GameDefinition G>
Result<std::unique_ptr<EvalBatcher>> Make(shm::RequestServer server, const BatchOptions& options) {
  const shm::ChannelSpec& spec = server.spec();
  if (spec.request_bytes != sizeof(service::EvalRequest<G>) ||
      spec.response_bytes != sizeof(service::EvalResponse<G>)) {
    return InvalidArgument("the eval channel carries " + std::to_string(spec.request_bytes) +
                           "-byte requests and " + std::to_string(spec.response_bytes) +
                           "-byte responses, not this game's " +
                           std::to_string(sizeof(service::EvalRequest<G>)) + " and " +
                           std::to_string(sizeof(service::EvalResponse<G>)));
  }
  return std::unique_ptr<EvalBatcher>(new GameEvalBatcher<G>(std::move(server), options));
}

}  // namespace

Result<std::unique_ptr<EvalBatcher>> CreateEvalBatcher(service::GameKind game,
                                                       shm::RequestServer server,
                                                       const BatchOptions& options) {
  if (options.max_batch < 1 || options.max_batch > 65536) {
    return InvalidArgument("max batch " + std::to_string(options.max_batch) +
                           " is not in 1..65536");
  }
  if (!(options.stall_fraction >= 0 && options.stall_fraction <= 1)) {
    return InvalidArgument("stall fraction must be in [0, 1]");
  }
  if (options.stall.count() < 0 || options.max_collect.count() < 0 ||
      options.first_wait.count() <= 0 || options.respond_timeout.count() < 0) {
    return InvalidArgument("batch timing options must not be negative");
  }
  if (games::FindGameById(game) == nullptr) return InvalidArgument("unknown game");
  return games::VisitGame(game, [&]<games::GameDefinition G>() {
    return Make<G>(std::move(server), options);
  });
}

Status CheckNetworkFitsGame(service::GameKind game, const nn::NetConfig& net) {
  const games::GameInfo* info = games::FindGameById(game);
  AZ_CHECK(info != nullptr, "CheckNetworkFitsGame: unregistered game");
  if (nn::NetFitsGame(net, *info)) return Status::Ok();
  return FailedPrecondition("the network (" + net.ToString() + ") is not a " +
                            std::string(info->name) + " network (" +
                            DefaultNetConfig(game).ToString() + " is)");
}

nn::NetConfig DefaultNetConfig(service::GameKind game) {
  const games::GameInfo* info = games::FindGameById(game);
  AZ_CHECK(info != nullptr, "DefaultNetConfig: unregistered game");
  return nn::DefaultNetConfig(*info);
}

nn::InputLayout GameInputLayout(service::GameKind game) {
  const games::GameInfo* info = games::FindGameById(game);
  AZ_CHECK(info != nullptr, "GameInputLayout: unregistered game");
  return nn::ToInputLayout(info->input.layout);
}

}  // namespace az::evaluator
