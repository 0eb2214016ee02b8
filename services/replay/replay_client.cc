#include "services/replay/replay_client.h"

#include <cstring>

#include "ipc/args.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "services/replay/replay_protocol.h"

namespace az::replayd {

std::span<const std::byte> SampledBatch::records() const {
  return {static_cast<const std::byte*>(records_.data()), records_.size()};
}

Result<ReplayClient> ReplayClient::Create(const ReplayClientOptions& options) {
  std::string endpoint = options.endpoint;
  if (endpoint.empty()) {
    if (options.run_dir.empty()) {
      return InvalidArgument("the replay client needs a run directory or an endpoint");
    }
    Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(options.run_dir, options.service);
    if (info.ok() && !info->control_endpoint.empty()) {
      endpoint = info->control_endpoint;
    } else {
      AZ_ASSIGN_OR_RETURN(endpoint, ipc::ControlEndpoint(options.run_dir, options.service));
    }
  }
  AZ_ASSIGN_OR_RETURN(ipc::Client client,
                      ipc::Client::Create({.endpoint = endpoint,
                                           .run_dir = options.run_dir,
                                           .attempt_timeout = options.attempt_timeout,
                                           .max_attempts = options.max_attempts}));
  return ReplayClient(std::move(client), options);
}

Result<SampledBatch> ReplayClient::Sample(const SampleRequest& request) {
  nlohmann::json args = {{"batch", request.batch},
                         {"beta", request.beta},
                         {"timeout_ms", request.timeout.count()},
                         {"records", request.with_records}};
  if (request.model_version) args["model_version"] = *request.model_version;
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply, client_.Call(kSampleCommand, std::move(args), {},
                                                     {.attempt_timeout = options_.attempt_timeout +
                                                                         request.timeout}));
  const std::size_t expected_frames = request.with_records ? 2 : 1;
  if (reply.frames.size() != expected_frames ||
      reply.frames[0].size() != request.batch * sizeof(replay::SampledSlot)) {
    return DataLoss("sample reply has " + std::to_string(reply.frames.size()) +
                    " frames of unexpected sizes for a batch of " + std::to_string(request.batch));
  }
  SampledBatch batch;
  batch.record_bytes_ = reply.body.value("record_bytes", std::size_t{0});
  if (request.with_records && reply.frames[1].size() != request.batch * batch.record_bytes_) {
    return DataLoss("sample reply's record frame has " + std::to_string(reply.frames[1].size()) +
                    " bytes, expected " + std::to_string(request.batch) + " x " +
                    std::to_string(batch.record_bytes_));
  }
  batch.draws_.resize(request.batch);
  std::memcpy(batch.draws_.data(), reply.frames[0].data(), reply.frames[0].size());
  if (request.with_records) batch.records_ = std::move(reply.frames[1]);
  batch.body_ = std::move(reply.body);
  return batch;
}

Result<replay::UpdateCounts> ReplayClient::UpdatePriorities(
    std::span<const replay::PriorityUpdate> updates) {
  std::vector<zmq::message_t> frames;
  frames.push_back(ipc::MakeFrame(updates.data(), updates.size_bytes()));
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply, client_.Call(kUpdatePrioritiesCommand,
                                                     nlohmann::json::object(), std::move(frames)));
  replay::UpdateCounts counts;
  counts.applied = reply.body.value("applied", std::uint64_t{0});
  counts.stale = reply.body.value("stale", std::uint64_t{0});
  counts.rejected = reply.body.value("rejected", std::uint64_t{0});
  return counts;
}

Result<replay::UpdateCounts> ReplayClient::Withdraw(std::span<const replay::RecordKey> records) {
  std::vector<zmq::message_t> frames;
  frames.push_back(ipc::MakeFrame(records.data(), records.size_bytes()));
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply,
                      client_.Call(kWithdrawCommand, nlohmann::json::object(), std::move(frames)));
  replay::UpdateCounts counts;
  counts.applied = reply.body.value("withdrawn", std::uint64_t{0});
  counts.stale = reply.body.value("stale", std::uint64_t{0});
  counts.rejected = reply.body.value("rejected", std::uint64_t{0});
  return counts;
}

Result<InsertResult> ReplayClient::Insert(std::span<const std::byte> records) {
  std::vector<zmq::message_t> frames;
  frames.push_back(ipc::MakeFrame(records.data(), records.size()));
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply, client_.Call(kInsertCommand, nlohmann::json::object(),
                                                     std::move(frames), {.max_attempts = 1}));
  if (reply.frames.size() != 1) return DataLoss("insert reply without its generations frame");
  const std::size_t inserted = reply.body.value("inserted", std::size_t{0});
  if (reply.frames[0].size() != inserted * sizeof(std::uint64_t)) {
    return DataLoss("insert reply's generations frame does not hold " + std::to_string(inserted) +
                    " generations");
  }
  InsertResult result;
  result.generations.resize(reply.frames[0].size() / sizeof(std::uint64_t));
  std::memcpy(result.generations.data(), reply.frames[0].data(),
              result.generations.size() * sizeof(std::uint64_t));
  result.capacity = reply.body.value("capacity", std::uint64_t{0});
  return result;
}

Result<std::vector<ReadRecord>> ReplayClient::Read(std::span<const std::uint64_t> slots) {
  nlohmann::json list = nlohmann::json::array();
  for (std::uint64_t slot : slots) list.push_back(slot);
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply, client_.Call(kReadCommand, {{"slots", std::move(list)}}));
  const std::size_t record_bytes = reply.body.value("record_bytes", std::size_t{0});
  const nlohmann::json& generations = reply.body["generations"];
  const nlohmann::json& priorities = reply.body["priorities"];
  if (reply.frames.size() != 1 || reply.frames[0].size() != slots.size() * record_bytes ||
      generations.size() != slots.size() || priorities.size() != slots.size()) {
    return DataLoss("read reply does not match the " + std::to_string(slots.size()) +
                    " slots asked for");
  }
  std::vector<ReadRecord> out(slots.size());
  const auto* bytes = static_cast<const std::byte*>(reply.frames[0].data());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (generations[i].is_null()) continue;
    out[i].found = true;
    out[i].generation = generations[i].get<std::uint64_t>();
    out[i].priority = priorities[i].get<double>();
    out[i].bytes.assign(bytes + i * record_bytes, bytes + (i + 1) * record_bytes);
  }
  return out;
}

Result<nlohmann::json> ReplayClient::Snapshot(std::chrono::milliseconds timeout) {
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply,
                      client_.Call(kSnapshotCommand, nlohmann::json::object(), {},
                                   {.attempt_timeout = timeout, .max_attempts = 1}));
  return std::move(reply.body);
}

Result<nlohmann::json> ReplayClient::Set(const std::string& key, const nlohmann::json& value) {
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply,
                      client_.Call(kSetCommand, {{"key", key}, {"value", value}}));
  return std::move(reply.body);
}

Result<nlohmann::json> ReplayClient::Status() {
  AZ_ASSIGN_OR_RETURN(ipc::Reply reply, client_.Call("status"));
  return std::move(reply.body);
}

}  // namespace az::replayd
