#pragma once

// Where the learner loop gets its batches and sends its priorities: a prioritized replay buffer.
// The service implements it over the replay daemon's control socket
// (services/learner/replay_batch_source.h); tests use an in-process fake.
//
//   AZ_ASSIGN_OR_RETURN(SourceBatch batch, source.Sample({.batch = 256, .beta = beta}));
//   ... train on batch.records, weighted by batch.draws[i].weight ...
//   source.UpdatePriorities({{draw.slot, draw.generation, loss}, ...});   when batch.prioritized
//   source.Withdraw({{draw.slot, draw.generation}, ...});                  records it cannot use
//
// One thread uses a source.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/base/status.h"
#include "core/replay/replay_store.h"
#include "core/replay/sampling.h"

namespace az::learner {

struct BatchRequest {
  std::uint32_t batch = 0;  // records wanted, >= 1
  double beta = 0.4;        // the importance-sampling exponent of the weights
  // How long the source may hold the request while it has nothing to serve (below its minimum
  // size, rate-limited); the transport adds its own deadline on top.
  std::chrono::milliseconds timeout{1000};
  std::optional<std::int64_t> model_version;  // the learner's newest model, for staleness figures
};

// A batch as the source serves it. The spans stay valid until the next Sample on the same source.
struct SourceBatch {
  // Per record: its key (slot, generation, to echo in the priority update), P(i) and its
  // importance weight (N P(i))^-beta normalised to a maximum of 1.
  std::span<const replay::SampledSlot> draws;
  std::span<const std::byte> records;  // draws.size() records of record_bytes, any alignment
  std::size_t record_bytes = 0;
  // false when the source samples uniformly (replay alpha 0): priority updates would change
  // nothing, so the loop sends none.
  bool prioritized = true;
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;

  // Draws a batch of request.batch records. Blocks up to about request.timeout plus the
  // transport's deadline. DEADLINE_EXCEEDED when nothing could be served in time (too few records,
  // rate-limited, the source is down or restarting); FAILED_PRECONDITION or INVALID_ARGUMENT for
  // a request it can never serve; UNAVAILABLE or CANCELLED while it shuts down. The loop waits and
  // tries again on every error.
  virtual Result<SourceBatch> Sample(const BatchRequest& request) = 0;

  // Sets the priorities of drawn records from their losses; an update for a slot that was
  // overwritten since it was drawn (another generation) is dropped by the source. Blocks up to the
  // transport's deadline. Returns the counts applied, stale and rejected; an error when the update
  // got no answer (it may or may not have been applied: priorities are advice, the loop counts it
  // and goes on).
  virtual Result<replay::UpdateCounts> UpdatePriorities(
      std::span<const replay::PriorityUpdate> updates) = 0;

  // Withdraws drawn records the loop cannot use (malformed): the source never serves them again
  // until they are overwritten, with prioritized or uniform sampling. Blocks up to the transport's
  // deadline. The counts withdrawn (as applied), stale and rejected; an error when it got no
  // answer (the loop logs it and goes on: the record is dropped again when drawn again).
  virtual Result<replay::UpdateCounts> Withdraw(std::span<const replay::RecordKey> records) = 0;

  // For logs: what serves the batches ("the replay daemon").
  virtual std::string_view name() const = 0;
};

}  // namespace az::learner
