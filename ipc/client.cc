#include "ipc/client.h"

#include <filesystem>
#include <optional>

#include "core/base/log.h"
#include "ipc/endpoint.h"
#include "ipc/zmq_context.h"

namespace az::ipc {

struct Client::State {
  ClientOptions options;
  std::shared_ptr<zmq::context_t> context;
  std::optional<zmq::socket_t> socket;
  std::uint64_t next_id = 1;
  int last_attempts = 0;

  Status Open() {
    try {
      zmq::socket_t s(*context, zmq::socket_type::dealer);
      // A closed socket must not keep unsent requests around: the retry resends them.
      s.set(zmq::sockopt::linger, 0);
      s.connect(options.endpoint);
      socket = std::move(s);
    } catch (const zmq::error_t& e) {
      return InvalidArgument("connecting to " + options.endpoint + ": " + e.what());
    }
    return Status::Ok();
  }
};

Result<Client> Client::Create(ClientOptions options) {
  if (options.endpoint.empty()) return InvalidArgument("client endpoint is empty");
  if (options.attempt_timeout.count() <= 0) {
    return InvalidArgument("client attempt_timeout must be positive");
  }
  if (options.max_attempts < 1) return InvalidArgument("client max_attempts must be at least 1");
  auto state = std::make_unique<State>();
  state->options = std::move(options);
  state->context = SharedContext();
  AZ_RETURN_IF_ERROR(state->Open());
  return Client(std::move(state));
}

Client::Client(std::unique_ptr<State> state) : state_(std::move(state)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

const std::string& Client::endpoint() const { return state_->options.endpoint; }
int Client::last_attempts() const { return state_->last_attempts; }

Result<Reply> Client::Call(std::string_view cmd, nlohmann::json args,
                           std::vector<zmq::message_t> frames, const CallOptions& call) {
  if (args.is_null()) args = nlohmann::json::object();
  if (!args.is_object()) {
    return InvalidArgument("arguments of '" + std::string(cmd) + "' must be a JSON object");
  }
  args["cmd"] = cmd;
  AZ_ASSIGN_OR_RETURN(Reply reply, Exchange(std::move(args), std::move(frames), call));
  AZ_RETURN_IF_ERROR(ReplyStatus(reply.body));
  return reply;
}

Result<Reply> Client::Exchange(nlohmann::json request, std::vector<zmq::message_t> frames,
                               const CallOptions& call) {
  State& s = *state_;
  s.last_attempts = 0;
  if (!request.is_object()) return InvalidArgument("a request must be a JSON object");
  auto cmd_it = request.find("cmd");
  if (cmd_it == request.end() || !cmd_it->is_string()) {
    return InvalidArgument("a request needs a string \"cmd\"");
  }
  const std::string cmd = cmd_it->get<std::string>();
  const auto timeout =
      call.attempt_timeout.count() > 0 ? call.attempt_timeout : s.options.attempt_timeout;
  const int attempts = call.max_attempts > 0 ? call.max_attempts : s.options.max_attempts;

  for (int attempt = 1; attempt <= attempts; ++attempt) {
    s.last_attempts = attempt;
    if (!s.socket) AZ_RETURN_IF_ERROR(s.Open());
    const std::uint64_t id = s.next_id++;
    request["id"] = id;
    const std::string text = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const size_t bytes = text.size() + FramesBytes(frames);
    if (bytes > s.options.max_request_bytes) {
      return ResourceExhausted("request '" + cmd + "' of " + std::to_string(bytes) +
                               " bytes exceeds the limit of " +
                               std::to_string(s.options.max_request_bytes) + " bytes");
    }
    const bool last = attempt == attempts;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool sent = true;
    try {
      zmq::socket_t& socket = *s.socket;
      // Sending never blocks for long: the DEALER queues on its (re)connecting pipe.
      socket.set(zmq::sockopt::sndtimeo, static_cast<int>(timeout.count()));
      socket.send(zmq::message_t(), zmq::send_flags::sndmore);
      if (!socket.send(zmq::buffer(text),
                       frames.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore)) {
        sent = false;
      }
      for (size_t i = 0; sent && i < frames.size(); ++i) {
        const auto flags = i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
        // Keep the caller's frames for a retry: copy shares the buffer of a large frame (a
        // reference count, not a memcpy). The last attempt sends the originals.
        if (last) {
          sent = socket.send(frames[i], flags).has_value();
        } else {
          zmq::message_t copy;
          copy.copy(frames[i]);
          sent = socket.send(copy, flags).has_value();
        }
      }
    } catch (const zmq::error_t& e) {
      AZ_LOG(kDebug) << "sending '" << cmd << "' to " << s.options.endpoint << ": " << e.what();
      sent = false;
    }

    while (sent) {
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (remaining.count() <= 0) break;
      zmq::pollitem_t items[] = {{s.socket->handle(), 0, ZMQ_POLLIN, 0}};
      try {
        if (zmq::poll(items, 1, remaining) == 0) break;
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        return Unavailable("polling for the reply from " + s.options.endpoint + ": " + e.what());
      }
      std::vector<zmq::message_t> parts;
      try {
        while (true) {
          zmq::message_t part;
          if (!s.socket->recv(part, zmq::recv_flags::dontwait)) break;
          const bool more = part.more();
          parts.push_back(std::move(part));
          if (!more) break;
        }
      } catch (const zmq::error_t& e) {
        return Unavailable("receiving the reply from " + s.options.endpoint + ": " + e.what());
      }
      if (parts.size() < 2 || parts[0].size() != 0) {
        AZ_LOG(kDebug) << "dropping a reply without the empty delimiter from "
                       << s.options.endpoint;
        continue;
      }
      nlohmann::json body = nlohmann::json::parse(parts[1].to_string_view(), nullptr,
                                                  /*allow_exceptions=*/false);
      if (body.is_discarded() || !body.is_object()) {
        return DataLoss("reply to '" + cmd + "' from " + s.options.endpoint +
                        " is not a JSON object");
      }
      auto reply_id = body.find("id");
      if (reply_id == body.end() || !reply_id->is_number_unsigned() ||
          reply_id->get<std::uint64_t>() != id) {
        // A late reply to a request that already timed out.
        AZ_LOG(kDebug) << "dropping a stale reply from " << s.options.endpoint;
        continue;
      }
      Reply reply;
      reply.body = std::move(body);
      reply.frames.reserve(parts.size() - 2);
      for (size_t i = 2; i < parts.size(); ++i) reply.frames.push_back(std::move(parts[i]));
      return reply;
    }
    // No reply in time: the server may be gone or restarted. A fresh socket drops whatever the old
    // one had queued for a dead connection, and its late replies go nowhere.
    s.socket.reset();
    AZ_LOG(kDebug) << "no reply to '" << cmd << "' from " << s.options.endpoint << " (attempt "
                   << attempt << " of " << attempts << ")";
  }

  std::string hint;
  if (std::optional<std::string> path = IpcPath(s.options.endpoint);
      path && path->starts_with("/") && !std::filesystem::exists(*path)) {
    hint = " (no socket at " + *path + ": is the service running?)";
  }
  return DeadlineExceeded("no reply to '" + cmd + "' from " + s.options.endpoint + " after " +
                          std::to_string(attempts) + " attempt(s) of " +
                          std::to_string(timeout.count()) + " ms" + hint);
}

}  // namespace az::ipc
