#include "ipc/client.h"

#include <filesystem>
#include <optional>

#include "core/base/log.h"
#include "ipc/connection_watch.h"
#include "ipc/endpoint.h"
#include "ipc/zmq_context.h"

namespace az::ipc {

struct Client::State {
  ClientOptions options;
  std::shared_ptr<zmq::context_t> context;
  std::optional<zmq::socket_t> socket;
  // Watches socket's connections and CURVE handshakes; reset before socket.
  std::unique_ptr<ConnectionWatch> watch;
  std::uint64_t next_id = 1;
  int last_attempts = 0;

  Status Open() {
    try {
      zmq::socket_t s(*context, zmq::socket_type::dealer);
      // A closed socket must not keep unsent requests around: the retry resends them.
      s.set(zmq::sockopt::linger, 0);
      if (options.curve) ApplyCurveClient(s, *options.curve);
      socket = std::move(s);
      Result<std::unique_ptr<ConnectionWatch>> made =
          ConnectionWatch::Create(*context, *socket, options.curve.has_value());
      if (!made.ok()) {
        Close();
        return made.status();
      }
      watch = std::move(made).value();
      socket->connect(options.endpoint);
    } catch (const zmq::error_t& e) {
      Close();
      return InvalidArgument("connecting to " + options.endpoint + ": " + e.what());
    }
    return Status::Ok();
  }

  void Close() {
    watch.reset();
    socket.reset();
  }
};

Result<Client> Client::Create(ClientOptions options) {
  if (options.endpoint.empty()) return InvalidArgument("client endpoint is empty");
  if (options.attempt_timeout.count() <= 0) {
    return InvalidArgument("client attempt_timeout must be positive");
  }
  if (options.max_attempts < 1) return InvalidArgument("client max_attempts must be at least 1");
  AZ_ASSIGN_OR_RETURN(options.curve,
                      CurveForConnecting(options.endpoint, std::move(options.curve),
                                         options.run_dir, "endpoint " + options.endpoint,
                                         "ClientOptions::curve"));
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
    bool dropped = false;  // the connection went down after the request was sent
    s.watch->Drain();       // disconnections before this request are not its business
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
      zmq::pollitem_t items[] = {{s.socket->handle(), 0, ZMQ_POLLIN, 0},
                                 {s.watch->events().handle(), 0, ZMQ_POLLIN, 0}};
      try {
        if (zmq::poll(items, 2, remaining) == 0) break;
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        return Unavailable("polling for the reply from " + s.options.endpoint + ": " + e.what());
      }
      if ((items[0].revents & ZMQ_POLLIN) == 0) {
        // A dropped connection lost the request with it (the server died or is restarting):
        // waiting out the deadline would only add to every recovery.
        if ((items[1].revents & ZMQ_POLLIN) != 0 && s.watch->Drain() > 0) {
          dropped = true;
          break;
        }
        continue;
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
    // A refused key will not be accepted on the next attempt: say so now.
    s.watch->Drain();
    if (Status keys = s.watch->Diagnose(s.options.endpoint); !keys.ok()) {
      s.Close();
      return keys;
    }
    if (dropped && last) {
      s.Close();
      return Unavailable("the connection to " + s.options.endpoint +
                         " dropped while waiting for the reply to '" + cmd +
                         "' (the server died or is restarting); it may or may not have been "
                         "carried out");
    }
    // No reply in time: the server may be gone or restarted. A fresh socket drops whatever the old
    // one had queued for a dead connection, and its late replies go nowhere.
    s.Close();
    AZ_LOG(kDebug) << (dropped ? "connection dropped waiting for '" : "no reply to '") << cmd
                   << "' from " << s.options.endpoint << " (attempt " << attempt << " of "
                   << attempts << ")";
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
