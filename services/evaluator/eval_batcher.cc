#include "services/evaluator/eval_batcher.h"

#include <algorithm>
#include <array>
#include <random>
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
  GameEvalBatcher(shm::RequestServer server, const BatchOptions& options, EvalCache<G> cache)
      : server_(std::move(server)),
        options_(options),
        cache_(std::move(cache)),
        symmetry_rng_(options.symmetry_seed) {
    const auto n = static_cast<std::size_t>(options.max_batch);
    records_.reserve(n);
    envelopes_.reserve(n);
    invalid_.reserve(n);
    offsets_.reserve(n + 1);
    actions_.reserve(n * G::kMaxMoves);
    priors_.reserve(n * G::kMaxMoves);
    wdl_.reserve(n * 3);
    if (cache_.enabled()) {
      hits_.reserve(n);
      hit_priors_.reserve(n * G::kMaxMoves);
    }
  }

  BatchReport Step(nn::Network& network) override {
    BatchReport report;
    report.model_version = network.model_version();
    FollowNetwork(network);
    Clear();
    const auto visit = [this](const shm::Envelope& envelope, std::span<const std::byte> payload) {
      Take(envelope, payload);
    };
    const auto max = static_cast<std::size_t>(options_.max_batch);
    Result<std::size_t> first = server_.TakeRequests(max, options_.first_wait, visit);
    if (!first.ok()) return report;  // DeadlineExceeded: nothing came
    const Clock::time_point start = Clock::now();
    AnswerHits(report);
    const std::chrono::nanoseconds stall = Stall();
    report.stall_seconds = Seconds(stall);
    // Keep collecting while requests keep arriving; fire on a stall, a full batch or max_collect.
    // Cache hits are answered after each take: they arrive (and so keep the batch collecting) but
    // never fill it.
    while (Taken() < max && Clock::now() - start < options_.max_collect) {
      if (!server_.TakeRequests(max - Taken(), stall, visit).ok()) break;
      AnswerHits(report);
    }
    const Clock::time_point fired = Clock::now();
    report.collect_seconds = Seconds(fired - start);
    report.taken = static_cast<int>(Taken()) + report.cache_hits;
    report.invalid = static_cast<int>(invalid_.size());
    report.cache_lookups = static_cast<int>(lookups_);

    const int n = static_cast<int>(records_.size());
    if (n > 0) {
      offsets_.push_back(static_cast<std::int32_t>(actions_.size()));  // closes the CSR list
      priors_.assign(actions_.size(), 0.0f);
      wdl_.assign(static_cast<std::size_t>(n) * 3, 0.0f);
      report.forward_status = Forward(network);
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
    // After the answers, so that storing them delays no one; the network is the one FollowNetwork
    // saw, so every entry belongs to the current epoch's model.
    if (report.evaluated > 0) StoreAnswers();
    return report;
  }

  shm::ChannelServerStats ChannelStats() const override { return server_.Stats(); }
  std::size_t ReclaimDead() override { return server_.ReclaimDead(); }
  void InvalidateCache() override { cache_.Clear(); }
  EvalCacheStats CacheStats() const override { return cache_.stats(); }

 private:
  // A hit waiting to be answered: its priors are hit_priors_[offset, offset + count).
  struct Hit {
    shm::Envelope envelope;
    std::uint32_t offset;
    std::uint32_t count;
    std::array<float, 3> wdl;
  };

  // Requests that go into the network's batch (valid misses) or are answered with it (invalid).
  std::size_t Taken() const { return records_.size() + invalid_.size(); }

  std::chrono::nanoseconds Stall() const {
    if (options_.stall_fraction <= 0 || forward_average_ == 0) return options_.stall;
    const auto adaptive = std::chrono::nanoseconds(
        static_cast<std::int64_t>(options_.stall_fraction * forward_average_ * 1e9));
    return std::clamp<std::chrono::nanoseconds>(adaptive, std::chrono::microseconds(5),
                                                options_.stall);
  }

  // The batch through the network: the records and legal lists as asked, or each position under
  // a board symmetry drawn at random. A legal list mapped entry by entry keeps its order, so the
  // priors come back in the order of the request's moves either way.
  Status Forward(nn::Network& network) {
    if constexpr (G::kSymmetries > 1) {
      if (options_.random_symmetry) {
        mapped_records_.resize(records_.size());
        mapped_actions_.resize(actions_.size());
        for (std::size_t i = 0; i < records_.size(); ++i) {
          const int symmetry = static_cast<int>(symmetry_rng_() % G::kSymmetries);
          mapped_records_[i] = G::TransformRecord(records_[i], symmetry);
          for (std::int32_t k = offsets_[i]; k < offsets_[i + 1]; ++k) {
            const auto at = static_cast<std::size_t>(k);
            mapped_actions_[at] = G::TransformAction(actions_[at], symmetry);
          }
        }
        return nn::ForwardRecords<G>(network, mapped_records_, {offsets_, mapped_actions_},
                                     priors_.data(), wdl_.data());
      }
    }
    return nn::ForwardRecords<G>(network, records_, {offsets_, actions_}, priors_.data(),
                                 wdl_.data());
  }

  // Clears the cache when the weights cannot be the ones its entries came from.
  void FollowNetwork(const nn::Network& network) {
    if (&network == network_ && network.model_version() == network_version_) return;
    if (network_ != nullptr) cache_.Clear();
    network_ = &network;
    network_version_ = network.model_version();
  }

  void Clear() {
    records_.clear();
    envelopes_.clear();
    invalid_.clear();
    offsets_.clear();
    actions_.clear();
    hits_.clear();
    hit_priors_.clear();
    blocked_workers_.clear();
    lookups_ = 0;
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
    const std::span<const std::uint16_t> indices(request_.policy_indices.data(),
                                                 request_.header.num_moves);
    if (cache_.enabled()) {
      ++lookups_;
      const std::size_t offset = hit_priors_.size();
      hit_priors_.resize(offset + indices.size());
      Hit hit{.envelope = envelope,
              .offset = static_cast<std::uint32_t>(offset),
              .count = static_cast<std::uint32_t>(indices.size()),
              .wdl = {}};
      if (cache_.Lookup(request_.record, indices, hit_priors_.data() + offset, hit.wdl.data())) {
        hits_.push_back(hit);
        return;
      }
      hit_priors_.resize(offset);
    }
    offsets_.push_back(static_cast<std::int32_t>(actions_.size()));
    actions_.insert(actions_.end(), indices.begin(), indices.end());
    records_.push_back(request_.record);
    envelopes_.push_back(envelope);
  }

  // Sends one answer unless this step already timed out on its worker's response ring.
  template <typename Fill>
  void Send(BatchReport& report, const shm::Envelope& to, Fill&& fill) {
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
  }

  // Answers the hits taken so far, with the network's numbers from the cache.
  void AnswerHits(BatchReport& report) {
    const std::uint64_t version = report.model_version;
    for (const Hit& hit : hits_) {
      Send(report, hit.envelope, [&](std::span<std::byte> payload) {
        service::WriteEvalResponse<G>(
            service::EvalStatus::kOk, version, hit.wdl,
            std::span<const float>(hit_priors_.data() + hit.offset, hit.count), payload);
      });
    }
    report.cache_hits += static_cast<int>(hits_.size());
    hits_.clear();
    hit_priors_.clear();
  }

  void Respond(BatchReport& report) {
    const std::uint64_t version = report.model_version;
    const bool ok = report.forward_status.ok();
    for (std::size_t i = 0; i < envelopes_.size(); ++i) {
      const std::size_t begin = static_cast<std::size_t>(offsets_[i]);
      const std::size_t count = static_cast<std::size_t>(offsets_[i + 1]) - begin;
      Send(report, envelopes_[i], [&](std::span<std::byte> payload) {
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
      Send(report, to, [&](std::span<std::byte> payload) {
        service::WriteEvalResponse<G>(service::EvalStatus::kInvalidRequest, version, {}, {},
                                      payload);
      });
    }
  }

  void StoreAnswers() {
    if (!cache_.enabled()) return;
    for (std::size_t i = 0; i < records_.size(); ++i) {
      const std::size_t begin = static_cast<std::size_t>(offsets_[i]);
      const std::size_t count = static_cast<std::size_t>(offsets_[i + 1]) - begin;
      cache_.Insert(records_[i], std::span<const std::int32_t>(actions_.data() + begin, count),
                    std::span<const float>(priors_.data() + begin, count),
                    std::span<const float, 3>(wdl_.data() + 3 * i, 3));
    }
  }

  shm::RequestServer server_;
  BatchOptions options_;
  EvalCache<G> cache_;
  const nn::Network* network_ = nullptr;  // the network of the last step, and its version
  std::uint64_t network_version_ = 0;
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
  // The batch under random symmetries (options_.random_symmetry), as the network sees it.
  std::mt19937_64 symmetry_rng_;
  std::vector<typename G::Record> mapped_records_;
  std::vector<std::int32_t> mapped_actions_;
  // Cache hits of the current take, answered when it returns.
  std::vector<Hit> hits_;
  std::vector<float> hit_priors_;
  std::size_t lookups_ = 0;                     // this step's
  std::vector<std::uint32_t> blocked_workers_;  // this step's: a response timed out
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
  AZ_ASSIGN_OR_RETURN(EvalCache<G> cache, EvalCache<G>::Create(options.cache_size));
  return std::unique_ptr<EvalBatcher>(
      new GameEvalBatcher<G>(std::move(server), options, std::move(cache)));
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
  AZ_RETURN_IF_ERROR(ValidateCacheSize(options.cache_size, "cache size"));
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
