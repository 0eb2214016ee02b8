#pragma once

// The learner loop's BatchSource over the replay daemon's control socket (ReplayClient): `sample`
// with records, `update-priorities` and `withdraw`. The batch's records stay in the received frame
// (no copy) until the next Sample.

#include "services/learner/loop/batch_source.h"
#include "services/replay/replay_client.h"

namespace az::learner {

class ReplayBatchSource final : public BatchSource {
 public:
  explicit ReplayBatchSource(replayd::ReplayClient client) : client_(std::move(client)) {}

  // ReplayClient::Sample with records: the daemon's errors and the transport's.
  Result<SourceBatch> Sample(const BatchRequest& request) override;
  // ReplayClient::UpdatePriorities (sent once: a lost update is not retried here).
  Result<replay::UpdateCounts> UpdatePriorities(
      std::span<const replay::PriorityUpdate> updates) override;
  // ReplayClient::Withdraw (retried: withdrawing twice is harmless).
  Result<replay::UpdateCounts> Withdraw(std::span<const replay::RecordKey> records) override;
  std::string_view name() const override { return "the replay daemon"; }

 private:
  replayd::ReplayClient client_;
  std::optional<replayd::SampledBatch> last_;  // what the spans of the last batch point into
};

}  // namespace az::learner
