// The replay daemon's own commands (ReplayApp's handlers). They run on the control server's thread:
// each does its store work (microseconds to a few milliseconds) and answers; `sample` and
// `snapshot` may wait, and hand their Responder to the sampler or the snapshotter instead. This
// file is where the server library's transport-neutral answers become ZeroMQ replies.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>

#include "core/base/log.h"
#include "ipc/args.h"
#include "services/replay/replay_app.h"
#include "services/replay/replay_protocol.h"

namespace az::replayd {
namespace {

// A number from JSON or from text (azctl sends `set` values as typed on the command line).
Result<double> NumberValue(const nlohmann::json& value, std::string_view key) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    char* end = nullptr;
    const double parsed = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(parsed)) return parsed;
  }
  return InvalidArgument("\"" + std::string(key) + "\" needs a number, got " + value.dump());
}

Result<bool> BoolValue(const nlohmann::json& value, std::string_view key) {
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_integer()) return value.get<std::int64_t>() != 0;
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "true" || text == "1" || text == "on" || text == "yes") return true;
    if (text == "false" || text == "0" || text == "off" || text == "no") return false;
  }
  return InvalidArgument("\"" + std::string(key) + "\" needs true or false, got " + value.dump());
}

Result<std::uint64_t> CountValue(const nlohmann::json& value, std::string_view key) {
  AZ_ASSIGN_OR_RETURN(double number, NumberValue(value, key));
  if (number < 0 || number != std::floor(number) || number > 1e15) {
    return InvalidArgument("\"" + std::string(key) + "\" needs a whole number >= 0, got " +
                           value.dump());
  }
  return static_cast<std::uint64_t>(number);
}

// A JSON array of unsigned integers.
Result<std::vector<std::uint64_t>> UnsignedArray(const nlohmann::json& args, std::string_view key) {
  AZ_ASSIGN_OR_RETURN(nlohmann::json array, ipc::GetArg<nlohmann::json>(args, key));
  if (!array.is_array()) {
    return InvalidArgument("\"" + std::string(key) + "\" must be an array, got " + array.dump());
  }
  std::vector<std::uint64_t> out;
  out.reserve(array.size());
  for (const nlohmann::json& v : array) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
      return InvalidArgument("\"" + std::string(key) + "\" must hold integers >= 0, got " +
                             v.dump());
    }
    out.push_back(v.get<std::uint64_t>());
  }
  return out;
}

// A block of bytes as a ZeroMQ frame, without a copy: the message takes the memory over and frees
// it when it has been sent.
zmq::message_t TakeFrame(ByteBlock block) {
  const std::size_t size = block.size;
  std::byte* data = block.data.release();
  return zmq::message_t(
      data, size, [](void* bytes, void* /*hint*/) { delete[] static_cast<std::byte*>(bytes); },
      nullptr);
}

// The elements of a request's one frame, copied: a received frame may sit at any offset of
// ZeroMQ's receive buffer (small messages are received in place), so it cannot be viewed as T[]
// safely. `what` names the command and the element type in errors.
template <typename T>
Result<std::vector<T>> OneFrameOf(const ipc::Request& request, std::string_view what) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (request.frames.size() != 1) {
    return InvalidArgument(std::string(what) + ": one frame expected, got " +
                           std::to_string(request.frames.size()));
  }
  const zmq::message_t& frame = request.frames[0];
  if (frame.size() % sizeof(T) != 0) {
    return InvalidArgument(std::string(what) + ": frame of " + std::to_string(frame.size()) +
                           " bytes is not a whole number of " + std::to_string(sizeof(T)) +
                           "-byte elements");
  }
  std::vector<T> out(frame.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), frame.data(), frame.size());
  return out;
}

}  // namespace

void ReplayApp::RegisterCommands() {
  server_->RegisterDeferred(
      std::string(kSampleCommand),
      [this](ipc::Request& request, ipc::Responder& responder) {
        HandleSample(request, responder);
      },
      "a prioritized batch: {batch, beta, [timeout_ms], [records], [model_version]} -> frames "
      "SampledSlot[batch], records");
  server_->Register(
      std::string(kUpdatePrioritiesCommand),
      [this](ipc::Request& request) { return HandleUpdatePriorities(request); },
      "new priorities from losses: frame PriorityUpdate[n] (slot, generation, loss), or JSON "
      "slots/generations/losses");
  server_->Register(
      std::string(kWithdrawCommand),
      [this](ipc::Request& request) { return HandleWithdraw(request); },
      "never draw these records again (malformed): frame RecordKey[n] (slot, generation), or JSON "
      "slots/generations");
  server_->Register(
      std::string(kInsertCommand), [this](ipc::Request& request) { return HandleInsert(request); },
      "add records: one frame of n x record_bytes; replies after they are committed, with their "
      "generations");
  server_->Register(
      std::string(kReadCommand), [this](ipc::Request& request) { return HandleRead(request); },
      "the records in {slots: [...]} with their generations and priorities");
  server_->RegisterDeferred(
      std::string(kSnapshotCommand),
      [this](ipc::Request& request, ipc::Responder& responder) {
        HandleSnapshot(request, responder);
      },
      "write a snapshot now; replies when it is on disk");
  server_->Register(
      std::string(kSetCommand), [this](ipc::Request& request) { return HandleSet(request); },
      "change a run-time setting: {key, value}; keys: samples_per_insert, min_size_to_sample, "
      "error_buffer, block_inserts, snapshot_interval, snapshot_keep, prefetch, prefetch_max_age, "
      "sample_timeout, log_level");
}

void ReplayApp::HandleSample(ipc::Request& request, ipc::Responder& responder) {
  auto parse = [&]() -> Result<SampleArgs> {
    SampleArgs args;
    AZ_ASSIGN_OR_RETURN(args.batch,
                        ipc::GetIntArg<std::uint32_t>(request.args, "batch", 1, config_.max_batch));
    AZ_ASSIGN_OR_RETURN(args.beta, ipc::GetArg<double>(request.args, "beta"));
    if (!(args.beta >= 0 && args.beta <= 1)) {
      return InvalidArgument("\"beta\" must be in [0, 1], got " + request.args["beta"].dump());
    }
    AZ_ASSIGN_OR_RETURN(
        std::int64_t timeout_ms,
        ipc::GetArg<std::int64_t>(request.args, "timeout_ms",
                                  static_cast<std::int64_t>(config_.sample_timeout * 1000)));
    if (timeout_ms < 0 || timeout_ms > 3'600'000) {
      return InvalidArgument("\"timeout_ms\" must be in [0, 3600000], got " +
                             std::to_string(timeout_ms));
    }
    args.timeout = std::chrono::milliseconds(timeout_ms);
    AZ_ASSIGN_OR_RETURN(args.with_records, ipc::GetArg<bool>(request.args, "records", true));
    AZ_ASSIGN_OR_RETURN(std::int64_t model_version,
                        ipc::GetArg<std::int64_t>(request.args, "model_version", -1));
    if (model_version >= 0) UpdateModelVersion(model_version);
    return args;
  };
  Result<SampleArgs> args = parse();
  if (!args.ok()) {
    responder.Send(args.status());
    return;
  }
  // The answer may be copied (std::function); the Responder may not: share it.
  auto shared = std::make_shared<ipc::Responder>(std::move(responder));
  sampler_->Submit(*args, [this, shared](Result<SampledBatch> batch) {
    if (!batch.ok()) {
      shared->Send(batch.status());
      return;
    }
    shared->Send(SampleReply(std::move(batch).value()));
  });
}

ipc::Reply ReplayApp::SampleReply(SampledBatch batch) {
  const SampleArgs& args = batch.args;
  ipc::Reply reply;
  reply.body = {
      {"batch", args.batch},
      {"beta", args.beta},
      {"record_bytes", batch.record_bytes},
      {"records", args.with_records},
      {"size", batch.size},
      {"prefetched", batch.prefetched},
      {"waited_ms", batch.waited_ms},
      // With uniform sampling (alpha 0) a priority update changes nothing: the learner skips it.
      {"prioritized", !store_->uniform()}};
  const std::int64_t current = model_version_.load(std::memory_order_relaxed);
  if (current >= 0) reply.body["model_version"] = current;
  if (current >= 0 && metrics_ && args.with_records) {
    // Staleness of each served record: how many model versions behind the newest it is.
    std::vector<std::uint32_t> staleness;
    staleness.reserve(args.batch);
    for (std::uint32_t i = 0; i < args.batch; ++i) {
      const std::optional<std::uint32_t> version = ModelVersionOf(config_.layout, batch.Record(i));
      if (!version) break;  // the layout carries no model version
      staleness.push_back(*version < current ? static_cast<std::uint32_t>(current - *version) : 0);
    }
    metrics_->ObserveStaleness(staleness);
  }
  reply.frames.push_back(TakeFrame(std::move(batch.draws)));
  if (args.with_records) reply.frames.push_back(TakeFrame(std::move(batch.records)));
  return reply;
}

Result<ipc::Reply> ReplayApp::HandleUpdatePriorities(ipc::Request& request) {
  std::vector<replay::PriorityUpdate> updates;
  if (!request.frames.empty()) {
    AZ_ASSIGN_OR_RETURN(updates, OneFrameOf<replay::PriorityUpdate>(
                                     request, "update-priorities (24-byte PriorityUpdate)"));
  } else {
    AZ_ASSIGN_OR_RETURN(std::vector<std::uint64_t> slots, UnsignedArray(request.args, "slots"));
    AZ_ASSIGN_OR_RETURN(std::vector<std::uint64_t> generations,
                        UnsignedArray(request.args, "generations"));
    AZ_ASSIGN_OR_RETURN(nlohmann::json losses, ipc::GetArg<nlohmann::json>(request.args, "losses"));
    if (!losses.is_array() || losses.size() != slots.size() || generations.size() != slots.size()) {
      return InvalidArgument(
          "\"slots\", \"generations\" and \"losses\" must be arrays of equal "
          "length");
    }
    updates.resize(slots.size());
    for (std::size_t i = 0; i < slots.size(); ++i) {
      // JSON has no NaN; a non-number loss is passed on as NaN so it is rejected and counted.
      const double loss = losses[i].is_number() ? losses[i].get<double>() : std::nan("");
      updates[i] = {slots[i], generations[i], loss};
    }
  }
  const replay::UpdateCounts counts = store_->UpdatePriorities(updates);
  return ipc::Reply{
      {{"applied", counts.applied}, {"stale", counts.stale}, {"rejected", counts.rejected}}, {}};
}

Result<ipc::Reply> ReplayApp::HandleWithdraw(ipc::Request& request) {
  std::vector<replay::RecordKey> keys;
  if (!request.frames.empty()) {
    AZ_ASSIGN_OR_RETURN(keys,
                        OneFrameOf<replay::RecordKey>(request, "withdraw (16-byte RecordKey)"));
  } else {
    AZ_ASSIGN_OR_RETURN(std::vector<std::uint64_t> slots, UnsignedArray(request.args, "slots"));
    AZ_ASSIGN_OR_RETURN(std::vector<std::uint64_t> generations,
                        UnsignedArray(request.args, "generations"));
    if (generations.size() != slots.size()) {
      return InvalidArgument("\"slots\" and \"generations\" must be arrays of equal length");
    }
    keys.resize(slots.size());
    for (std::size_t i = 0; i < slots.size(); ++i) keys[i] = {slots[i], generations[i]};
  }
  const replay::UpdateCounts counts = store_->Withdraw(keys);
  if (counts.applied > 0) {
    AZ_LOG(kWarning) << "withdrew " << counts.applied << " records a client could not use "
                     << "(malformed); " << store_->Stats().withdrawn
                     << " withdrawn records held, never drawn until overwritten";
  }
  return ipc::Reply{
      {{"withdrawn", counts.applied}, {"stale", counts.stale}, {"rejected", counts.rejected}}, {}};
}

Result<ipc::Reply> ReplayApp::HandleInsert(ipc::Request& request) {
  const std::size_t record_bytes = store_->record_size();
  if (request.frames.size() != 1) {
    return InvalidArgument("insert takes one frame of records (n x " +
                           std::to_string(record_bytes) + " bytes), got " +
                           std::to_string(request.frames.size()) + " frames");
  }
  const zmq::message_t& frame = request.frames[0];
  if (frame.size() == 0 || frame.size() % record_bytes != 0) {
    return InvalidArgument("insert frame of " + std::to_string(frame.size()) +
                           " bytes is not a whole, non-zero number of " +
                           std::to_string(record_bytes) + "-byte records");
  }
  const std::size_t count = frame.size() / record_bytes;
  AZ_ASSIGN_OR_RETURN(std::int64_t expected, ipc::GetArg<std::int64_t>(request.args, "count", -1));
  if (expected >= 0 && static_cast<std::size_t>(expected) != count) {
    return InvalidArgument("\"count\" says " + std::to_string(expected) +
                           " records, the frame holds " + std::to_string(count));
  }
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(frame.data()), frame.size());
  // All or nothing: a request with a malformed record stores none of its records.
  std::size_t invalid = 0;
  Status first_error;
  std::size_t first_index = 0;
  for (std::size_t i = 0; i < count; ++i) {
    Status valid = CheckRecord(config_.layout, bytes.subspan(i * record_bytes, record_bytes));
    if (!valid.ok() && invalid++ == 0) {
      first_error = valid;
      first_index = i;
    }
  }
  if (invalid > 0) {
    rejected_control_.fetch_add(invalid, std::memory_order_relaxed);
    return InvalidArgument(std::to_string(invalid) + " of " + std::to_string(count) +
                           " records are malformed, the first (record " +
                           std::to_string(first_index) + "): " + first_error.message() +
                           "; nothing was inserted");
  }
  ipc::Reply reply;
  zmq::message_t generations_frame(count * sizeof(std::uint64_t));
  std::span<std::uint64_t> generations(static_cast<std::uint64_t*>(generations_frame.data()),
                                       count);
  AZ_RETURN_IF_ERROR(store_->Insert(bytes, generations));
  limiter_->OnInsert(count);
  inserted_control_.fetch_add(count, std::memory_order_relaxed);
  reply.body = {{"inserted", count},
                {"first_generation", generations.front()},
                {"last_generation", generations.back()},
                {"capacity", store_->capacity()}};
  reply.frames.push_back(std::move(generations_frame));
  return reply;
}

Result<ipc::Reply> ReplayApp::HandleRead(ipc::Request& request) {
  AZ_ASSIGN_OR_RETURN(std::vector<std::uint64_t> slots, UnsignedArray(request.args, "slots"));
  if (slots.empty() || slots.size() > static_cast<std::size_t>(kMaxReadSlots)) {
    return InvalidArgument("\"slots\" must name 1 to " + std::to_string(kMaxReadSlots) +
                           " slots, got " + std::to_string(slots.size()));
  }
  const std::size_t record_bytes = store_->record_size();
  zmq::message_t records(slots.size() * record_bytes);
  std::memset(records.data(), 0, records.size());
  nlohmann::json generations = nlohmann::json::array();
  nlohmann::json priorities = nlohmann::json::array();
  std::uint64_t found = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    std::span<std::byte> out(static_cast<std::byte*>(records.data()) + i * record_bytes,
                             record_bytes);
    Result<replay::RecordInfo> info = store_->ReadRecord(slots[i], out);
    if (info.ok()) {
      generations.push_back(info->generation);
      priorities.push_back(info->priority);
      ++found;
    } else if (info.status().code() == StatusCode::kNotFound) {
      generations.push_back(nullptr);  // empty (or being written)
      priorities.push_back(nullptr);
    } else {
      return info.status();
    }
  }
  ipc::Reply reply;
  reply.body = {{"found", found},
                {"record_bytes", record_bytes},
                {"generations", std::move(generations)},
                {"priorities", std::move(priorities)}};
  reply.frames.push_back(std::move(records));
  return reply;
}

void ReplayApp::HandleSnapshot(ipc::Request& /*request*/, ipc::Responder& responder) {
  // The callback may be copied (std::function); the Responder may not: share it.
  auto shared = std::make_shared<ipc::Responder>(std::move(responder));
  snapshotter_->RequestNow([shared](const Result<SnapshotResult>& result) {
    if (!result.ok()) {
      shared->Send(result.status());
      return;
    }
    shared->Send(ipc::Reply{{{"path", result->path},
                             {"records", result->records},
                             {"bytes", result->bytes},
                             {"seconds", result->seconds}},
                            {}});
  });
}

Result<ipc::Reply> ReplayApp::HandleSet(ipc::Request& request) {
  AZ_ASSIGN_OR_RETURN(std::string key, ipc::GetArg<std::string>(request.args, "key"));
  AZ_ASSIGN_OR_RETURN(nlohmann::json value, ipc::GetArg<nlohmann::json>(request.args, "value"));
  std::replace(key.begin(), key.end(), '-', '_');
  nlohmann::json previous;
  nlohmann::json now;

  RateLimiterOptions rate = limiter_->options();
  auto set_rate = [&](auto apply) -> Status {
    AZ_RETURN_IF_ERROR(apply());
    return limiter_->SetOptions(rate);  // validated as a whole; nothing changes on error
  };
  const SnapshotterStats snapshots = snapshotter_->Stats();
  const SamplerOptions sampling = sampler_->options();

  if (key == "samples_per_insert") {
    previous = rate.samples_per_insert;
    AZ_RETURN_IF_ERROR(set_rate([&]() -> Status {
      AZ_ASSIGN_OR_RETURN(rate.samples_per_insert, NumberValue(value, key));
      return Status::Ok();
    }));
    now = rate.samples_per_insert;
  } else if (key == "min_size_to_sample") {
    previous = rate.min_size_to_sample;
    AZ_RETURN_IF_ERROR(set_rate([&]() -> Status {
      AZ_ASSIGN_OR_RETURN(rate.min_size_to_sample, CountValue(value, key));
      return Status::Ok();
    }));
    now = rate.min_size_to_sample;
  } else if (key == "error_buffer") {
    previous = rate.error_buffer;
    AZ_RETURN_IF_ERROR(set_rate([&]() -> Status {
      AZ_ASSIGN_OR_RETURN(rate.error_buffer, NumberValue(value, key));
      return Status::Ok();
    }));
    now = rate.error_buffer;
  } else if (key == "block_inserts") {
    previous = rate.block_inserts;
    AZ_RETURN_IF_ERROR(set_rate([&]() -> Status {
      AZ_ASSIGN_OR_RETURN(rate.block_inserts, BoolValue(value, key));
      return Status::Ok();
    }));
    now = rate.block_inserts;
  } else if (key == "snapshot_interval") {
    previous = snapshots.interval_seconds;
    AZ_ASSIGN_OR_RETURN(double seconds, NumberValue(value, key));
    AZ_RETURN_IF_ERROR(snapshotter_->SetInterval(seconds));
    now = seconds;
  } else if (key == "snapshot_keep") {
    previous = snapshots.keep;
    AZ_ASSIGN_OR_RETURN(std::uint64_t keep, CountValue(value, key));
    if (keep < 1 || keep > 1000) return InvalidArgument("snapshot_keep must be in [1, 1000]");
    AZ_RETURN_IF_ERROR(snapshotter_->SetKeep(static_cast<int>(keep)));
    now = keep;
  } else if (key == "prefetch") {
    previous = sampling.prefetch;
    AZ_ASSIGN_OR_RETURN(bool prefetch, BoolValue(value, key));
    sampler_->SetPrefetch(prefetch, sampling.prefetch_max_age);
    now = prefetch;
  } else if (key == "prefetch_max_age") {
    previous = sampling.prefetch_max_age.count() / 1000.0;
    AZ_ASSIGN_OR_RETURN(double seconds, NumberValue(value, key));
    if (seconds < 0 || seconds > 3600)
      return InvalidArgument("prefetch_max_age must be in [0, 3600]");
    sampler_->SetPrefetch(sampling.prefetch,
                          std::chrono::milliseconds(static_cast<long long>(seconds * 1000)));
    now = seconds;
  } else if (key == "sample_timeout") {
    previous = config_.sample_timeout;
    AZ_ASSIGN_OR_RETURN(double seconds, NumberValue(value, key));
    if (seconds < 0 || seconds > 3600)
      return InvalidArgument("sample_timeout must be in [0, 3600]");
    config_.sample_timeout = seconds;  // read by handlers, on this same thread
    now = seconds;
  } else if (key == "log_level") {
    previous = config_.log_level;
    const std::string level = value.is_string() ? value.get<std::string>() : value.dump();
    if (level != "debug" && level != "info" && level != "warning" && level != "error") {
      return InvalidArgument("log_level must be debug, info, warning or error, got " + level);
    }
    config_.log_level = level;
    SetLogLevel(level == "debug"     ? LogLevel::kDebug
                : level == "warning" ? LogLevel::kWarning
                : level == "error"   ? LogLevel::kError
                                     : LogLevel::kInfo);
    now = level;
  } else if (key == "capacity" || key == "record_bytes" || key == "alpha" || key == "epsilon" ||
             key == "record_layout" || key == "store") {
    return FailedPrecondition("'" + key +
                              "' is fixed when the store file is created; to change it, take a "
                              "snapshot and restore it into a new store (--store NEW --restore "
                              "FILE)");
  } else {
    return InvalidArgument(
        "unknown setting '" + key +
        "'; settable at run time: samples_per_insert, min_size_to_sample, error_buffer, "
        "block_inserts, snapshot_interval, snapshot_keep, prefetch, prefetch_max_age, "
        "sample_timeout, log_level");
  }
  AZ_LOG(kInfo) << "set " << key << " = " << now.dump() << " (was " << previous.dump() << ")";
  return ipc::Reply{{{"key", key}, {"value", now}, {"previous", previous}}, {}};
}

}  // namespace az::replayd
