#include "services/learner/replay_batch_source.h"

namespace az::learner {

Result<SourceBatch> ReplayBatchSource::Sample(const BatchRequest& request) {
  last_.reset();
  AZ_ASSIGN_OR_RETURN(replayd::SampledBatch batch,
                      client_.Sample({.batch = request.batch,
                                      .beta = request.beta,
                                      .timeout = request.timeout,
                                      .with_records = true,
                                      .model_version = request.model_version}));
  last_.emplace(std::move(batch));
  return SourceBatch{.draws = last_->draws(),
                     .records = last_->records(),
                     .record_bytes = last_->record_bytes(),
                     .prioritized = last_->prioritized()};
}

Result<replay::UpdateCounts> ReplayBatchSource::UpdatePriorities(
    std::span<const replay::PriorityUpdate> updates) {
  return client_.UpdatePriorities(updates);
}

Result<replay::UpdateCounts> ReplayBatchSource::Withdraw(
    std::span<const replay::RecordKey> records) {
  return client_.Withdraw(records);
}

}  // namespace az::learner
