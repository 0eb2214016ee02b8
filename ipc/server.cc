#include "ipc/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>

#include "core/base/log.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "ipc/zmq_context.h"

namespace az::ipc {

namespace internal {
// Replies of deferred handlers on their way to the serving thread, which alone may use the socket.
struct Outbox {
  struct Pending {
    std::vector<zmq::message_t> envelope;
    nlohmann::json id;
    Result<Reply> result;
  };
  std::mutex mutex;
  Waker* waker = nullptr;  // null once the server is gone
  std::vector<Pending> queue;
};
}  // namespace internal

namespace {

// Requests answered per wake-up before the stop flag (or the caller of Serve) gets a look in.
constexpr int kBatch = 64;
constexpr std::string_view kBuiltins[] = {"status", "pause", "resume", "shutdown", "commands"};

std::int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Takes an exclusive lock on <run_dir>/<service>.lock, held until the fd is closed (the kernel
// drops it when the process dies, even by SIGKILL). ALREADY_EXISTS when another process holds it.
Result<int> LockInstance(const std::string& run_dir, const std::string& service) {
  const std::string path = run_dir + "/" + service + ".lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return FailedPrecondition("opening lock file " + path + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error != EWOULDBLOCK) {
      return FailedPrecondition("locking " + path + ": " + std::strerror(error));
    }
    std::string owner;
    Result<ServiceInfo> info = ReadServiceInfo(run_dir, service);
    if (info.ok()) owner = " (pid " + std::to_string(info->pid) + ")";
    return AlreadyExists("service '" + service + "' is already running in " + run_dir + owner);
  }
  return fd;
}

}  // namespace

Responder::Responder(std::shared_ptr<internal::Outbox> outbox, std::vector<zmq::message_t> envelope,
                     nlohmann::json id, std::string cmd)
    : outbox_(std::move(outbox)),
      envelope_(std::move(envelope)),
      id_(std::move(id)),
      cmd_(std::move(cmd)) {}

Responder::Responder(Responder&& other) noexcept = default;

Responder& Responder::operator=(Responder&& other) noexcept {
  if (this != &other) {
    if (pending()) Send(Cancelled("'" + cmd_ + "' was dropped without an answer"));
    outbox_ = std::move(other.outbox_);
    envelope_ = std::move(other.envelope_);
    id_ = std::move(other.id_);
    cmd_ = std::move(other.cmd_);
  }
  return *this;
}

Responder::~Responder() {
  if (pending()) Send(Cancelled("'" + cmd_ + "' was dropped without an answer"));
}

void Responder::Send(Result<Reply> reply) {
  AZ_CHECK(pending(), "Responder::Send called twice for '" + cmd_ + "'");
  std::shared_ptr<internal::Outbox> outbox = std::move(outbox_);
  outbox_ = nullptr;
  std::lock_guard lock(outbox->mutex);
  if (outbox->waker == nullptr) return;  // the server is gone: the client's attempt times out
  outbox->queue.push_back({std::move(envelope_), std::move(id_), std::move(reply)});
  outbox->waker->Wake();
}

Result<std::unique_ptr<Server>> Server::Create(ServerOptions options) {
  AZ_RETURN_IF_ERROR(ValidateServiceName(options.service));
  if (options.run_dir.empty() && options.endpoint.empty()) {
    return InvalidArgument("server '" + options.service + "' needs a run directory or an endpoint");
  }
  if (options.max_request_bytes == 0) return InvalidArgument("max_request_bytes must be positive");

  int lock_fd = -1;
  if (!options.run_dir.empty()) {
    AZ_ASSIGN_OR_RETURN(options.run_dir, NormalizeRunDir(options.run_dir));
    std::error_code error;
    std::filesystem::create_directories(options.run_dir, error);
    if (error) {
      return FailedPrecondition("creating run directory " + options.run_dir + ": " +
                                error.message());
    }
    AZ_ASSIGN_OR_RETURN(lock_fd, LockInstance(options.run_dir, options.service));
  }
  auto fail = [&](Status status) {
    if (lock_fd >= 0) ::close(lock_fd);
    return status;
  };

  std::string endpoint = options.endpoint;
  if (endpoint.empty()) {
    Result<std::string> by_default = ControlEndpoint(options.run_dir, options.service);
    if (!by_default.ok()) return fail(by_default.status());
    endpoint = *by_default;
    if (!IpcPath(endpoint)->starts_with("/")) {
      AZ_LOG(kWarning) << "control socket path " << options.run_dir << "/" << options.service
                       << ".ctl is longer than " << kMaxUnixSocketPath
                       << " bytes; using the abstract socket " << endpoint;
    }
  }
  if (IpcEndpointInUse(endpoint)) {
    return fail(AlreadyExists("another process is listening on " + endpoint));
  }

  // A tcp:// endpoint can be reached beyond the run directory's file permissions: CURVE, always.
  Result<std::optional<BindingCurve>> curve =
      CurveForBinding(endpoint, options.curve, options.run_dir,
                      "control server '" + options.service + "' on " + endpoint,
                      "ServerOptions::curve");
  if (!curve.ok()) return fail(curve.status());

  Result<Waker> waker = Waker::Create();
  if (!waker.ok()) return fail(waker.status());
  std::shared_ptr<zmq::context_t> context = SharedContext();
  std::string bound;
  zmq::socket_t socket;
  try {
    socket = zmq::socket_t(*context, zmq::socket_type::router);
    if (*curve) ApplyCurveServer(socket, (*curve)->keys, (*curve)->zap.domain());
    const size_t hard_limit =
        options.max_request_bytes + std::max(options.max_request_bytes, size_t{1} << 20);
    socket.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(hard_limit));
    // Long enough to flush the reply to `shutdown` when the service exits right after it.
    socket.set(zmq::sockopt::linger, 500);
    socket.bind(endpoint);
    bound = socket.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return fail(Unavailable("binding the control endpoint " + endpoint + ": " + e.what()));
  }

  std::unique_ptr<Server> server(new Server(std::move(options), std::move(context),
                                            std::move(socket), std::move(waker).value(),
                                            std::move(bound), lock_fd));
  if (*curve) server->zap_ = std::move((*curve)->zap);
  if (!server->options_.run_dir.empty()) {
    ServiceInfo info;
    info.service = server->options_.service;
    info.pid = ::getpid();
    info.host = HostName();
    info.control_endpoint = server->endpoint_;
    info.events_endpoint = server->options_.events_endpoint;
    info.metrics_port = server->options_.metrics_port;
    info.start_time_unix_ms = server->start_unix_ms_;
    info.state = "running";
    // The destructor releases the socket and the lock if this fails.
    AZ_RETURN_IF_ERROR(WriteServiceInfo(server->options_.run_dir, info)
                           .WithContext("writing the discovery record"));
  }
  AZ_LOG(kInfo) << "control server '" << server->options_.service << "' listening on "
                << server->endpoint_
                << (*curve ? " (CURVE, " + std::to_string((*curve)->keys.authorized_clients.size()) +
                                " authorized client key(s))"
                          : std::string());
  return server;
}

Server::Server(ServerOptions options, std::shared_ptr<zmq::context_t> context, zmq::socket_t socket,
               Waker waker, std::string endpoint, int lock_fd)
    : options_(std::move(options)),
      context_(std::move(context)),
      socket_(std::move(socket)),
      waker_(std::move(waker)),
      outbox_(std::make_shared<internal::Outbox>()),
      endpoint_(std::move(endpoint)),
      lock_fd_(lock_fd),
      start_(std::chrono::steady_clock::now()),
      start_unix_ms_(UnixMillis()) {
  outbox_->waker = &waker_;
}

Server::~Server() {
  Stop();
  {
    // Responders still held by the service now drop their replies instead of waking a dead loop.
    std::lock_guard lock(outbox_->mutex);
    outbox_->waker = nullptr;
    outbox_->queue.clear();
  }
  socket_.close();
  // Hand the endpoint back before returning, so that a successor can bind it at once.
  if (!WaitForIpcEndpointRelease(endpoint_, std::chrono::seconds(2))) {
    AZ_LOG(kWarning) << "control endpoint " << endpoint_ << " still busy after close";
  }
  if (!options_.run_dir.empty()) WriteDiscovery("stopped");
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void Server::WriteDiscovery(const std::string& state) {
  Result<ServiceInfo> info = ReadServiceInfo(options_.run_dir, options_.service);
  if (!info.ok() || info->pid != ::getpid()) return;
  info->state = state;
  Status status = WriteServiceInfo(options_.run_dir, *info);
  if (!status.ok()) {
    AZ_LOG(kWarning) << "updating the discovery record: " << status.ToString();
  }
}

void Server::Register(std::string cmd, Handler handler, std::string help) {
  AZ_CHECK(!running_.load(), "Register after Start");
  AZ_CHECK(!cmd.empty() && handler, "a command needs a name and a handler");
  for (std::string_view builtin : kBuiltins) {
    AZ_CHECK(cmd != builtin, "'" + cmd + "' is a built-in command");
  }
  const bool inserted =
      commands_.emplace(cmd, Command{std::move(handler), nullptr, std::move(help)}).second;
  AZ_CHECK(inserted, "command '" + cmd + "' registered twice");
}

void Server::RegisterDeferred(std::string cmd, DeferredHandler handler, std::string help) {
  AZ_CHECK(!running_.load(), "RegisterDeferred after Start");
  AZ_CHECK(!cmd.empty() && handler, "a command needs a name and a handler");
  for (std::string_view builtin : kBuiltins) {
    AZ_CHECK(cmd != builtin, "'" + cmd + "' is a built-in command");
  }
  const bool inserted =
      commands_.emplace(cmd, Command{nullptr, std::move(handler), std::move(help)}).second;
  AZ_CHECK(inserted, "command '" + cmd + "' registered twice");
}

Status Server::Start() {
  if (running_.exchange(true)) return FailedPrecondition("server already started");
  stop_.store(false);
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void Server::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  waker_.Wake();
  thread_.join();
  running_.store(false);
}

void Server::Loop() {
  zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0},
                             {nullptr, waker_.fd(), ZMQ_POLLIN, 0}};
  while (!stop_.load(std::memory_order_acquire)) {
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(-1));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      AZ_LOG(kError) << "control server '" << options_.service << "' stopped: " << e.what();
      return;
    }
    if (items[1].revents & ZMQ_POLLIN) {
      waker_.Drain();
      FlushOutbox();
    }
    if ((items[0].revents & ZMQ_POLLIN) && !HandleReady(kBatch)) return;
  }
  FlushOutbox();  // replies queued while stopping still go out
}

void Server::FlushOutbox() {
  std::vector<internal::Outbox::Pending> ready;
  {
    std::lock_guard lock(outbox_->mutex);
    ready.swap(outbox_->queue);
  }
  for (internal::Outbox::Pending& pending : ready) {
    SendReply(pending.envelope, std::move(pending.id), std::move(pending.result));
  }
}

Status Server::Serve(std::chrono::milliseconds timeout) {
  if (running_.load()) return FailedPrecondition("Serve while the server thread runs");
  zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0},
                             {nullptr, waker_.fd(), ZMQ_POLLIN, 0}};
  try {
    zmq::poll(items, 2, timeout);
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return Status::Ok();
    return Unavailable(std::string("polling the control socket: ") + e.what());
  }
  if (items[1].revents & ZMQ_POLLIN) {
    waker_.Drain();
    FlushOutbox();
  }
  // One batch at most, so that a stream of requests cannot starve the caller's own loop.
  if ((items[0].revents & ZMQ_POLLIN) && !HandleReady(kBatch)) {
    return Unavailable("the control socket failed");
  }
  return Status::Ok();
}

bool Server::HandleReady(int max_requests) {
  for (int i = 0; i < max_requests; ++i) {
    std::vector<zmq::message_t> parts;
    try {
      while (true) {
        zmq::message_t part;
        if (!socket_.recv(part, zmq::recv_flags::dontwait)) break;
        const bool more = part.more();
        parts.push_back(std::move(part));
        if (!more) break;
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      AZ_LOG(kError) << "control server '" << options_.service << "' receive failed: " << e.what();
      return false;
    }
    if (parts.empty()) return true;  // nothing more is ready
    HandleOne(parts);
  }
  return true;
}

void Server::HandleOne(std::vector<zmq::message_t>& parts) {
  // The envelope is everything up to the first empty frame (the identity ROUTER added, any hops,
  // the delimiter a DEALER or REQ client sent). Without a delimiter, the identity alone.
  size_t body_begin = 1;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].size() == 0) {
      body_begin = i + 1;
      break;
    }
  }
  std::vector<zmq::message_t> body;
  body.reserve(parts.size() - body_begin);
  for (size_t i = body_begin; i < parts.size(); ++i) body.push_back(std::move(parts[i]));
  parts.resize(body_begin);
  received_bytes_total_.fetch_add(FramesBytes(body), std::memory_order_relaxed);
  requests_total_.fetch_add(1, std::memory_order_relaxed);

  nlohmann::json id;  // null unless the request carried one
  bool shutdown = false;
  bool deferred = false;
  Result<Reply> result = Dispatch(body, parts, &id, &shutdown, &deferred);
  body.clear();          // release the request's frames before sending
  if (deferred) return;  // the Responder sends it

  SendReply(parts, std::move(id), std::move(result));

  if (shutdown) {
    AZ_LOG(kInfo) << "control server '" << options_.service << "': shutdown requested";
    RequestShutdown();
    if (options_.on_shutdown) {
      try {
        options_.on_shutdown();
      } catch (const std::exception& e) {
        AZ_LOG(kError) << "on_shutdown callback failed: " << e.what();
      }
    }
  }
}

void Server::SendReply(std::vector<zmq::message_t>& parts, nlohmann::json id,
                       Result<Reply> result) {
  nlohmann::json reply_json;
  std::vector<zmq::message_t> frames;
  if (result.ok()) {
    Reply& reply = *result;
    if (reply.body.is_object()) {
      reply_json = std::move(reply.body);
    } else {
      reply_json = nlohmann::json::object();
      reply_json["result"] = std::move(reply.body);
    }
    reply_json["ok"] = true;
    frames = std::move(reply.frames);
  } else {
    request_errors_total_.fetch_add(1, std::memory_order_relaxed);
    reply_json = {{"ok", false}, {"error", ErrorJson(result.status())}};
    AZ_LOG(kDebug) << "control server '" << options_.service
                   << "' answered an error: " << result.status().ToString();
  }
  reply_json["id"] = std::move(id);
  const std::string text =
      reply_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  sent_bytes_total_.fetch_add(text.size() + FramesBytes(frames), std::memory_order_relaxed);

  try {
    for (zmq::message_t& part : parts) socket_.send(part, zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(text),
                 frames.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
    for (size_t i = 0; i < frames.size(); ++i) {
      socket_.send(frames[i],
                   i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    }
  } catch (const zmq::error_t& e) {
    // ROUTER drops replies to peers that are gone without an error; anything else is logged, and
    // the client's retry covers it.
    AZ_LOG(kWarning) << "control server '" << options_.service << "' send failed: " << e.what();
  }
}

Result<Reply> Server::Dispatch(std::vector<zmq::message_t>& body,
                               std::vector<zmq::message_t>& envelope, nlohmann::json* id,
                               bool* shutdown, bool* deferred) {
  if (body.empty()) return InvalidArgument("empty request: expected a JSON frame");
  const size_t bytes = FramesBytes(body);
  auto too_large = [&] {
    return ResourceExhausted("request of " + std::to_string(bytes) +
                             " bytes exceeds the limit of " +
                             std::to_string(options_.max_request_bytes) + " bytes");
  };
  // The JSON frame is parsed even when the frames after it are too large, so that the error reply
  // carries the request's id and the client can match it.
  if (body[0].size() > options_.max_request_bytes) return too_large();
  const std::string_view text(static_cast<const char*>(body[0].data()), body[0].size());
  Result<ParsedRequest> parsed = ParseRequestJson(text, id);
  if (!parsed.ok()) return parsed.status();
  if (bytes > options_.max_request_bytes) return too_large();
  Request request;
  request.args = std::move(parsed->args);
  request.cmd = std::move(parsed->cmd);

  for (std::string_view builtin : kBuiltins) {
    if (request.cmd == builtin) return Builtin(request.cmd, shutdown);
  }
  auto it = commands_.find(request.cmd);
  if (it == commands_.end()) {
    std::string known;
    for (std::string_view builtin : kBuiltins) {
      if (!known.empty()) known += ", ";
      known += builtin;
    }
    for (const auto& [name, command] : commands_) known += ", " + name;
    return NotFound("unknown command '" + request.cmd + "'; '" + options_.service +
                    "' answers: " + known);
  }
  request.frames.reserve(body.size() - 1);
  for (size_t i = 1; i < body.size(); ++i) request.frames.push_back(std::move(body[i]));
  if (it->second.deferred) {
    *deferred = true;
    Responder responder(outbox_, std::move(envelope), *id, request.cmd);
    Status failed;
    try {
      it->second.deferred(request, responder);
    } catch (const nlohmann::json::exception& e) {
      failed = InvalidArgument("'" + request.cmd + "': " + e.what());
    } catch (const std::exception& e) {
      failed = Internal("'" + request.cmd + "' failed: " + e.what());
    } catch (...) {
      failed = Internal("'" + request.cmd + "' failed with an unknown exception");
    }
    if (responder.pending()) {
      responder.Send(failed.ok() ? Internal("'" + request.cmd +
                                            "': the handler neither answered nor kept the request")
                                 : failed);
    }
    return Reply{};
  }
  try {
    return it->second.handler(request);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("'" + request.cmd + "': " + e.what());
  } catch (const std::exception& e) {
    return Internal("'" + request.cmd + "' failed: " + e.what());
  } catch (...) {
    return Internal("'" + request.cmd + "' failed with an unknown exception");
  }
}

Result<Reply> Server::Builtin(const std::string& cmd, bool* shutdown) {
  Reply reply;
  if (cmd == "status") {
    reply.body = StatusJson();
  } else if (cmd == "pause" || cmd == "resume") {
    const bool pause = cmd == "pause";
    const bool was = paused_.exchange(pause, std::memory_order_acq_rel);
    if (was != pause) {
      AZ_LOG(kInfo) << "control server '" << options_.service << "': " << cmd;
      const auto& callback = pause ? options_.on_pause : options_.on_resume;
      if (callback) {
        try {
          callback();
        } catch (const std::exception& e) {
          return Internal(cmd + " callback failed: " + e.what());
        }
      }
    }
    reply.body = {{"paused", pause}, {"changed", was != pause}};
  } else if (cmd == "shutdown") {
    *shutdown = true;
    reply.body = {{"shutting_down", true}};
  } else if (cmd == "commands") {
    nlohmann::json list = {{"status", "the service's state and counters"},
                           {"pause", "pause the service's work"},
                           {"resume", "resume the service's work"},
                           {"shutdown", "stop the service cleanly"},
                           {"commands", "this list"}};
    for (const auto& [name, command] : commands_) list[name] = command.help;
    reply.body = {{"commands", std::move(list)}};
  }
  return reply;
}

nlohmann::json Server::StatusJson() {
  nlohmann::json out = nlohmann::json::object();
  if (options_.status) {
    try {
      nlohmann::json extra = options_.status();
      if (extra.is_object()) {
        out = std::move(extra);
      } else if (!extra.is_null()) {
        out["result"] = std::move(extra);
      }
    } catch (const std::exception& e) {
      out["status_error"] = e.what();
    }
  }
  const double uptime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // The server's own fields win over the service's, so scripts can rely on them.
  out["service"] = options_.service;
  out["pid"] = static_cast<std::int64_t>(::getpid());
  if (zap_) out["curve_refused"] = zap_->refused();
  out["host"] = HostName();
  out["protocol"] = kProtocolVersion;
  out["state"] = shutdown_requested() ? "stopping" : (paused() ? "paused" : "running");
  out["paused"] = paused();
  out["uptime_seconds"] = uptime;
  out["start_time_unix_ms"] = start_unix_ms_;
  out["requests_total"] = requests_total_.load(std::memory_order_relaxed);
  out["request_errors_total"] = request_errors_total_.load(std::memory_order_relaxed);
  return out;
}

bool Server::WaitForShutdown(std::chrono::milliseconds timeout) {
  std::unique_lock lock(shutdown_mutex_);
  return shutdown_cv_.wait_for(lock, timeout, [this] { return shutdown_requested(); });
}

void Server::RequestShutdown() {
  {
    std::lock_guard lock(shutdown_mutex_);
    shutdown_.store(true, std::memory_order_release);
  }
  shutdown_cv_.notify_all();
}

ServerStats Server::stats() const {
  ServerStats stats;
  stats.requests_total = requests_total_.load(std::memory_order_relaxed);
  stats.request_errors_total = request_errors_total_.load(std::memory_order_relaxed);
  stats.received_bytes_total = received_bytes_total_.load(std::memory_order_relaxed);
  stats.sent_bytes_total = sent_bytes_total_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace az::ipc
