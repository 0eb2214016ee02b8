// The replay daemon's remote endpoint: what self-play hosts (az-relay) may ask for, and nothing
// else (no sampling, no snapshots, no settings): `push` their samples and fetch the newest `model`.

#include <chrono>
#include <string>

#include "core/base/log.h"
#include "core/nn/checksum.h"
#include "ipc/args.h"
#include "ipc/curve.h"
#include "ipc/file_util.h"
#include "services/replay/record_layout.h"
#include "services/replay/replay_app.h"
#include "services/replay/replay_protocol.h"

namespace az::replayd {

Status ReplayApp::StartRemote() {
  const RecordLayout layout = config_.layout;
  RemoteIngestOptions options;
  options.dir = config_.remote_dir;
  options.crash_after = config_.crash_after_remote;
  options.check = [layout](std::span<const std::byte> record) {
    return CheckRecord(layout, record);
  };
  options.model_version = [layout](std::span<const std::byte> record) {
    return ModelVersionOf(layout, record);
  };
  AZ_ASSIGN_OR_RETURN(remote_, RemoteIngest::Open(options, *store_, *limiter_));

  ipc::ServerOptions server_options;
  server_options.service = config_.service + "-remote";
  server_options.endpoint = config_.remote_endpoint;  // no run directory: no discovery record
  AZ_ASSIGN_OR_RETURN(server_options.curve, ipc::LoadServerKeys(config_.run_dir));
  server_options.max_request_bytes = std::size_t{64} << 20;
  server_options.status = [this] { return RemoteStatusJson(); };
  AZ_ASSIGN_OR_RETURN(remote_server_, ipc::Server::Create(server_options));
  remote_bound_ = remote_server_->endpoint();
  remote_server_->Register(
      std::string(kPushCommand), [this](ipc::Request& request) { return HandlePush(request); },
      "store a host's samples: {host, first_seq, count}, one frame of count x record_bytes; "
      "replies once they are stored, with the last sequence number handled");
  remote_server_->Register(
      std::string(kModelCommand), [this](ipc::Request& request) { return HandleModel(request); },
      "the newest model's weights file when it is newer than {have}");
  AZ_LOG(kInfo) << "remote endpoint " << remote_bound_ << ": " << remote_->Stats().size()
                << " known hosts, journals in " << config_.remote_dir;
  return Status::Ok();
}

std::string ReplayApp::remote_endpoint() const { return remote_bound_; }

Result<ipc::Reply> ReplayApp::HandlePush(ipc::Request& request) {
  AZ_ASSIGN_OR_RETURN(std::string host, ipc::GetArg<std::string>(request.args, "host"));
  AZ_ASSIGN_OR_RETURN(
      std::uint64_t first_seq,
      ipc::GetIntArg<std::uint64_t>(request.args, "first_seq", 1, std::uint64_t{1} << 62));
  if (request.frames.size() != 1) {
    return InvalidArgument("push takes one frame of records, got " +
                           std::to_string(request.frames.size()) + " frames");
  }
  const zmq::message_t& frame = request.frames[0];
  AZ_ASSIGN_OR_RETURN(std::int64_t expected, ipc::GetArg<std::int64_t>(request.args, "count", -1));
  if (expected >= 0 && static_cast<std::size_t>(expected) * store_->record_size() != frame.size()) {
    return InvalidArgument("\"count\" says " + std::to_string(expected) +
                           " records, the frame has " + std::to_string(frame.size()) + " bytes");
  }
  AZ_ASSIGN_OR_RETURN(
      PushResult pushed,
      remote_->Push(host, first_seq,
                    std::span(static_cast<const std::byte*>(frame.data()), frame.size())));
  nlohmann::json body = {{"host", host},
                         {"committed_through", pushed.committed_through},
                         {"stored", pushed.stored},
                         {"duplicates", pushed.duplicates},
                         {"rejected", pushed.rejected}};
  if (pushed.rejected > 0) body["first_rejection"] = pushed.first_rejection;
  return ipc::Reply{std::move(body), {}};
}

Result<ipc::Reply> ReplayApp::HandleModel(ipc::Request& request) {
  AZ_ASSIGN_OR_RETURN(std::int64_t have, ipc::GetArg<std::int64_t>(request.args, "have", -1));
  std::optional<ipc::ModelPublished> model;
  {
    std::lock_guard lock(model_mutex_);
    model = latest_model_;
  }
  if (!model || model->version <= have) {
    return ipc::Reply{{{"version", model ? model->version : -1}, {"unchanged", true}}, {}};
  }
  AZ_ASSIGN_OR_RETURN(std::string bytes, ipc::ReadSmallFile(model->path));
  const std::string checksum = nn::Xxh64Text(std::as_bytes(std::span(bytes.data(), bytes.size())));
  if (checksum != model->checksum) {
    // Pruned and rewritten, or being replaced: the host asks again and gets a newer one.
    return Unavailable("model " + std::to_string(model->version) + "'s file " + model->path +
                       " no longer has the published checksum " + model->checksum + " (it has " +
                       checksum + "); ask again");
  }
  models_served_.fetch_add(1, std::memory_order_relaxed);
  zmq::message_t frame(bytes.data(), bytes.size());
  std::vector<zmq::message_t> frames;
  frames.push_back(std::move(frame));
  return ipc::Reply{{{"version", model->version},
                     {"checksum", model->checksum},
                     {"bytes", bytes.size()},
                     {"unchanged", false}},
                    std::move(frames)};
}

nlohmann::json ReplayApp::RemoteStatusJson() const {
  nlohmann::json hosts = nlohmann::json::object();
  for (const auto& [name, stats] : remote_->Stats()) {
    hosts[name] = {{"committed_through", stats.committed_through},
                   {"stored", stats.stored},
                   {"duplicates", stats.duplicates},
                   {"rejected", stats.rejected},
                   {"gaps", stats.gaps},
                   {"pushes", stats.pushes},
                   {"last_push_unix_ms", stats.last_push_unix_ms},
                   {"last_rejection", stats.last_rejection}};
  }
  return {{"endpoint", remote_bound_},
          {"journal_dir", config_.remote_dir},
          {"models_served", models_served_.load(std::memory_order_relaxed)},
          {"hosts", std::move(hosts)}};
}

}  // namespace az::replayd
