#pragma once

// A typed client of the replay daemon, for the learner, tools and tests: each call is one request
// on the control socket (ipc::Client: deadlines, retries with a fresh socket, stale replies
// dropped).
//
//   AZ_ASSIGN_OR_RETURN(auto replay, ReplayClient::Create({.run_dir = dir}));
//   AZ_ASSIGN_OR_RETURN(SampledBatch batch, replay.Sample({.batch = 256, .beta = beta}));
//   for (const SampledSlot& s : batch.draws()) ...      // slot, generation, probability, weight
//   batch.record(i)                                      // the i-th record's bytes
//   ... losses ...
//   AZ_ASSIGN_OR_RETURN(auto counts, replay.UpdatePriorities(updates));
//
// Not thread-safe: one ReplayClient per thread.

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "core/base/status.h"
#include "core/replay/replay_store.h"
#include "core/replay/sampling.h"
#include "ipc/client.h"

namespace az::replayd {

struct ReplayClientOptions {
  std::string run_dir;   // finds the daemon through its discovery record or default endpoint
  std::string endpoint;  // or talk to this endpoint
  std::string service = "replay";
  std::chrono::milliseconds attempt_timeout{5000};  // per attempt (sample adds its own wait)
  int max_attempts = 3;
};

struct SampleRequest {
  std::uint32_t batch = 0;
  double beta = 0.4;
  // How long the daemon may hold the request while its rate limiter says wait (each attempt of
  // the call waits this much longer than attempt_timeout for its reply).
  std::chrono::milliseconds timeout{10000};
  bool with_records = true;
  std::optional<std::int64_t> model_version;  // the learner's current model, for staleness
};

// A batch as it came off the wire: the records frame is kept, not copied.
class SampledBatch {
 public:
  std::span<const replay::SampledSlot> draws() const { return draws_; }
  std::size_t size() const { return draws_.size(); }
  std::size_t record_bytes() const { return record_bytes_; }
  // false when the daemon samples uniformly (alpha 0; a daemon that does not say is prioritized).
  bool prioritized() const { return body_.value("prioritized", true); }
  // All records back to back (empty when requested without records).
  std::span<const std::byte> records() const;
  std::span<const std::byte> record(std::size_t i) const {
    return records().subspan(i * record_bytes_, record_bytes_);
  }
  const nlohmann::json& body() const { return body_; }

 private:
  friend class ReplayClient;
  nlohmann::json body_;
  std::vector<replay::SampledSlot> draws_;  // copied: a received frame may be misaligned
  zmq::message_t records_;
  std::size_t record_bytes_ = 0;
};

struct InsertResult {
  std::vector<std::uint64_t> generations;  // one per record, in order; slot = generation % capacity
  std::uint64_t capacity = 0;
};

struct ReadRecord {
  bool found = false;
  std::uint64_t generation = 0;
  double priority = 0;
  std::vector<std::byte> bytes;
};

class ReplayClient {
 public:
  // INVALID_ARGUMENT without a run directory or endpoint.
  static Result<ReplayClient> Create(const ReplayClientOptions& options);

  // A prioritized batch. Errors: the daemon's (DEADLINE_EXCEEDED when its rate limiter held the
  // request past its timeout, FAILED_PRECONDITION for a batch that can never be served,
  // INVALID_ARGUMENT for bad arguments), or DEADLINE_EXCEEDED / DATA_LOSS from the transport.
  Result<SampledBatch> Sample(const SampleRequest& request);
  // Applies (slot, generation, loss) updates; idempotent, so retried freely.
  Result<replay::UpdateCounts> UpdatePriorities(std::span<const replay::PriorityUpdate> updates);
  // Withdraws records the caller cannot use (never drawn again until overwritten): the counts
  // withdrawn (as applied), stale and rejected. Idempotent, so retried freely.
  Result<replay::UpdateCounts> Withdraw(std::span<const replay::RecordKey> records);
  // Inserts records (n x record size bytes) and returns their generations once the daemon has
  // committed them. Sent once, never retried (a retry could insert twice): on DEADLINE_EXCEEDED the
  // records may or may not be in.
  Result<InsertResult> Insert(std::span<const std::byte> records);
  Result<std::vector<ReadRecord>> Read(std::span<const std::uint64_t> slots);
  // Writes a snapshot and waits up to `timeout` for it.
  Result<nlohmann::json> Snapshot(std::chrono::milliseconds timeout = std::chrono::minutes(10));
  Result<nlohmann::json> Set(const std::string& key, const nlohmann::json& value);
  Result<nlohmann::json> Status();

  ipc::Client& raw() { return client_; }

 private:
  ReplayClient(ipc::Client client, const ReplayClientOptions& options)
      : client_(std::move(client)), options_(options) {}
  ipc::Client client_;
  ReplayClientOptions options_;
};

}  // namespace az::replayd
