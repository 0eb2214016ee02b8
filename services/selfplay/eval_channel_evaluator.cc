#include "services/selfplay/eval_channel_evaluator.h"

#include <array>
#include <cstring>
#include <string>

#include "core/games/registry.h"
#include "services/common/eval_protocol.h"

namespace az::selfplay {
namespace {

template <games::GameDefinition G>
class ChannelEvaluator final : public EvalChannelEvaluator {
  using Record = typename G::Record;

 public:
  explicit ChannelEvaluator(shm::RequestClient client)
      : client_(std::move(client)), capacity_(client_.Stats().responses.capacity) {}

  Result<std::size_t> Submit(std::span<const LeafRequest> requests,
                             std::chrono::milliseconds timeout) override {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const LeafRequest& request = requests[i];
      AZ_CHECK(request.record.size() == sizeof(Record), "a leaf record of another game");
      mcts::Leaf<G> leaf;
      // The span points at the search's own record (aligned); WriteEvalRequest copies it.
      leaf.record = reinterpret_cast<const Record*>(request.record.data());
      leaf.policy_indices = request.policy_indices;
      const Status status =
          client_.SubmitWith(request.request_id, timeout, [&](std::span<std::byte> payload) {
            service::WriteEvalRequest<G>(leaf, request.game_id, payload);
          });
      if (!status.ok()) {
        if (i > 0) return i;
        return status;
      }
    }
    return requests.size();
  }

  Result<std::size_t> Receive(std::size_t max_answers, std::chrono::milliseconds timeout,
                              const AnswerVisitor& visit) override {
    return client_.Receive(max_answers, timeout,
                           [&](std::uint64_t request_id, std::span<const std::byte> payload) {
                             visit(Read(request_id, payload));
                           });
  }

  std::uint32_t Reset() override { return client_.Reset(); }
  std::uint64_t EvaluatorsLost() override { return client_.ServersLost(); }
  std::uint64_t max_in_flight() const override { return capacity_; }
  std::string_view name() const override { return "az-evaluator"; }
  shm::ChannelClientStats Stats() const override { return client_.Stats(); }

 private:
  EvalAnswer Read(std::uint64_t request_id, std::span<const std::byte> payload) {
    EvalAnswer answer;
    answer.request_id = request_id;
    service::EvalResponseHeader header;
    // The prior count is the driver's to check (it knows the leaf); the rest is checked here.
    std::memcpy(&header, payload.data(), sizeof header);
    Status status = service::ReadEvalResponseHeader<G>(payload, header.num_moves, header);
    if (status.ok() && header.status == static_cast<std::uint8_t>(service::EvalStatus::kOk) &&
        header.num_moves > service::kEvalMaxMoves<G>) {
      status = InvalidArgument("eval response: " + std::to_string(header.num_moves) +
                               " priors, more than the protocol lists");
    }
    if (!status.ok()) {
      answer.status = EvalAnswerStatus::kMalformed;
      answer.error = std::move(status);
      return answer;
    }
    answer.model_version = header.model_version;
    answer.wdl = header.wdl;
    switch (static_cast<service::EvalStatus>(header.status)) {
      case service::EvalStatus::kOk: {
        const std::span<float> priors(priors_.data(), header.num_moves);
        service::CopyPriors<G>(payload, priors);
        answer.priors = priors;
        break;
      }
      case service::EvalStatus::kInvalidRequest:
        answer.status = EvalAnswerStatus::kInvalidRequest;
        break;
      default:  // kEvaluationFailed, or a status this build does not know: not usable
        answer.status = EvalAnswerStatus::kEvaluationFailed;
        break;
    }
    return answer;
  }

  shm::RequestClient client_;
  std::uint64_t capacity_;
  std::array<float, service::kEvalMaxMoves<G>> priors_{};  // the answer being visited
};

template <games::GameDefinition G>
Result<std::unique_ptr<EvalChannelEvaluator>> Make(shm::RequestClient client) {
  const shm::ChannelClientStats stats = client.Stats();
  if (stats.requests.record_bytes != sizeof(shm::Envelope) + sizeof(service::EvalRequest<G>)) {
    return FailedPrecondition("the eval channel does not carry this game's requests");
  }
  return std::unique_ptr<EvalChannelEvaluator>(new ChannelEvaluator<G>(std::move(client)));
}

}  // namespace

Result<std::unique_ptr<EvalChannelEvaluator>> EvalChannelEvaluator::Create(
    service::GameKind game, shm::RequestClient client) {
  if (games::FindGameById(game) == nullptr) {
    return InvalidArgument("unknown game id " + std::to_string(game));
  }
  return games::VisitGame(
      game, [&]<games::GameDefinition G>() -> Result<std::unique_ptr<EvalChannelEvaluator>> {
        return Make<G>(std::move(client));
      });
}

}  // namespace az::selfplay
