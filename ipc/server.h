#pragma once

// The control server every service embeds: a ZeroMQ ROUTER socket bound to the service's control
// endpoint that answers every request (docs/protocol.md). It dispatches JSON requests to handlers
// the service registers and answers the built-in commands itself:
//
//   status    who the service is, its state and request counters, plus the service's own fields
//   pause     sets paused() (and calls on_pause); the service's loops decide what pausing means
//   resume    clears paused() (and calls on_resume)
//   shutdown  sets shutdown_requested() (and calls on_shutdown after the reply is sent)
//   commands  the names and help lines of every command
//
// Bad input never stops it: a request that is not JSON, not an object, has no string "cmd", names
// an unknown command, is larger than max_request_bytes, or whose handler returns an error or throws
// gets an error reply ({"ok": false, "error": {"code", "message"}}) and the server goes on serving.
//
// It serves either on its own thread (Start) or on the caller's thread (Serve), never both.
// Handlers run on that thread, one at a time: a slow handler delays every other request, so long
// work belongs on the service's own threads. A command registered with RegisterDeferred may keep
// its request (a Responder) and answer later from any thread: a request that has to wait (a rate
// limiter, a snapshot in progress) then holds no thread of the server.
//
//   AZ_ASSIGN_OR_RETURN(auto server, ipc::Server::Create({.service = "replay", .run_dir = dir}));
//   server->Register("sample", [&](ipc::Request& r) -> Result<ipc::Reply> { ... }, "a batch");
//   AZ_RETURN_IF_ERROR(server->Start());
//   while (!server->WaitForShutdown(std::chrono::seconds(1))) { ... }

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "core/base/status.h"
#include "ipc/curve.h"
#include "ipc/message.h"
#include "ipc/waker.h"

namespace az::ipc {

// A handler answers one command. Its Status becomes an error reply with that code; an exception is
// caught and answered as INVALID_ARGUMENT (nlohmann::json errors: a missing or mistyped field) or
// INTERNAL (anything else).
using Handler = std::function<Result<Reply>(Request& request)>;

namespace internal {
struct Outbox;
}  // namespace internal

// The pending reply of a request registered with Server::RegisterDeferred: a handler that must wait
// (for a rate limiter, for a snapshot to finish) keeps it and answers later from any thread, so the
// serving thread goes on answering other requests meanwhile. Move-only.
class Responder {
 public:
  Responder(Responder&& other) noexcept;
  Responder& operator=(Responder&& other) noexcept;
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;
  // A Responder destroyed without Send answers CANCELLED, so every request still gets one reply.
  ~Responder();

  // Queues the reply (an error Status becomes an error reply) and wakes the serving thread, which
  // sends it. Thread-safe; never blocks beyond a short mutex. At most once per request (a second
  // call is a bug). When the server is already destroyed the reply is dropped and the client's
  // attempt times out.
  void Send(Result<Reply> reply);
  // False once Send was called (or after a move from this object).
  bool pending() const { return outbox_ != nullptr; }
  const std::string& cmd() const { return cmd_; }

 private:
  friend class Server;
  Responder(std::shared_ptr<internal::Outbox> outbox, std::vector<zmq::message_t> envelope,
            nlohmann::json id, std::string cmd);

  std::shared_ptr<internal::Outbox> outbox_;
  std::vector<zmq::message_t> envelope_;
  nlohmann::json id_;
  std::string cmd_;
};

// A handler whose reply may come later: it either calls responder.Send() before returning or moves
// the responder somewhere and sends from there. Returning with the responder neither sent nor moved
// away answers INTERNAL; an exception is answered as for Handler.
using DeferredHandler = std::function<void(Request& request, Responder& responder)>;

struct ServerOptions {
  // The service's name (ipc/endpoint.h rules); required.
  std::string service;
  // The run directory: the default endpoint ipc://<run_dir>/<service>.ctl, the discovery record
  // <run_dir>/<service>.json and the instance lock <run_dir>/<service>.lock live there. Created if
  // missing. May be empty only when `endpoint` is set (no discovery record then).
  std::string run_dir;
  // Binds here instead of the default, e.g. "tcp://0.0.0.0:5555" or "tcp://127.0.0.1:*" (any free
  // port; endpoint() then says which). A tcp:// endpoint always speaks CURVE (ipc/curve.h).
  std::string endpoint;
  // The CURVE keys of a tcp:// endpoint; unset: the run directory's keys/ (made if missing).
  std::optional<CurveServerKeys> curve;
  // Recorded in the discovery record so that azctl and subscribers can find them.
  std::string events_endpoint;
  int metrics_port = 0;
  // Requests whose frames add up to more are answered RESOURCE_EXHAUSTED. A single frame larger
  // than twice this is refused by ZeroMQ itself (ZMQ_MAXMSGSIZE): the sender's connection is
  // dropped without a reply, so a large request cannot make the server allocate without bound.
  size_t max_request_bytes = size_t{64} << 20;
  // The service's own fields for `status` (called on the serving thread; an exception is reported
  // in the reply as "status_error").
  std::function<nlohmann::json()> status;
  // Called on the serving thread: on_pause/on_resume before the reply, on_shutdown after it.
  std::function<void()> on_pause;
  std::function<void()> on_resume;
  std::function<void()> on_shutdown;
};

struct ServerStats {
  std::uint64_t requests_total = 0;
  std::uint64_t request_errors_total = 0;  // requests answered {"ok": false}
  std::uint64_t received_bytes_total = 0;
  std::uint64_t sent_bytes_total = 0;
};

class Server {
 public:
  // Binds the endpoint and writes the discovery record. ALREADY_EXISTS when another live process
  // serves this service in the run directory (held lock) or listens on the ipc endpoint;
  // INVALID_ARGUMENT for a bad name or endpoint, or a tcp:// endpoint with neither keys nor a run
  // directory; UNAVAILABLE when the bind fails (address in use, path too long, permissions); errors
  // of the run directory, the record file and the keys (LoadServerKeys).
  static Result<std::unique_ptr<Server>> Create(ServerOptions options);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  // Stops serving, closes the socket (ZeroMQ goes on flushing queued replies for up to 0.5 s),
  // waits (up to 2 s) until the ipc endpoint is released, and marks the discovery record "stopped".
  ~Server();

  // Adds a command. Only before Start (or, in Serve mode, from the serving thread). A built-in or
  // already registered name is a bug (AZ_CHECK).
  void Register(std::string cmd, Handler handler, std::string help = {});
  // Adds a command whose handler may answer later, from another thread (see Responder). Same rules
  // as Register.
  void RegisterDeferred(std::string cmd, DeferredHandler handler, std::string help = {});

  // Serves on a new thread until Stop or destruction. FAILED_PRECONDITION if already started.
  Status Start();
  // Stops the serving thread, waiting for the handler in progress to finish. Idempotent.
  void Stop();

  // Serves on the caller's thread: waits up to `timeout` for a request, then answers the requests
  // that are ready (at most 64, so a stream of requests cannot starve the caller) and returns. For
  // services that poll from their own loop instead of Start(). FAILED_PRECONDITION while the server
  // thread runs; UNAVAILABLE if the socket failed.
  Status Serve(std::chrono::milliseconds timeout);

  // The bound endpoint (with the actual port for "tcp://host:*").
  const std::string& endpoint() const { return endpoint_; }
  const std::string& service() const { return options_.service; }

  // Thread-safe.
  bool paused() const { return paused_.load(std::memory_order_acquire); }
  bool shutdown_requested() const { return shutdown_.load(std::memory_order_acquire); }
  // Blocks until `shutdown` was requested (true) or `timeout` passed (false).
  bool WaitForShutdown(std::chrono::milliseconds timeout);
  // Requests shutdown from inside the process (e.g. a SIGTERM handler's thread), as the command
  // does.
  void RequestShutdown();
  ServerStats stats() const;

 private:
  struct Command {
    Handler handler;
    DeferredHandler deferred;  // set instead of handler for RegisterDeferred commands
    std::string help;
  };

  Server(ServerOptions options, std::shared_ptr<zmq::context_t> context, zmq::socket_t socket,
         Waker waker, std::string endpoint, int lock_fd);
  void Loop();
  // Receives and answers up to `max_requests` requests that are ready; false on a socket failure.
  bool HandleReady(int max_requests);
  void HandleOne(std::vector<zmq::message_t>& parts);
  // Answers the request in `body` (the frames after the envelope); sets *id to the request's id.
  // For a deferred command it moves `envelope` and the id into a Responder, sets *deferred and
  // returns an unused value: the reply goes through the outbox.
  Result<Reply> Dispatch(std::vector<zmq::message_t>& body, std::vector<zmq::message_t>& envelope,
                         nlohmann::json* id, bool* shutdown, bool* deferred);
  // Sends the reply (or error) to the peer named by `envelope`; counts errors and bytes.
  void SendReply(std::vector<zmq::message_t>& envelope, nlohmann::json id, Result<Reply> result);
  // Sends the replies deferred handlers queued; on the serving thread.
  void FlushOutbox();
  Result<Reply> Builtin(const std::string& cmd, bool* shutdown);
  nlohmann::json StatusJson();
  void WriteDiscovery(const std::string& state);

  ServerOptions options_;
  std::shared_ptr<zmq::context_t> context_;
  // Declared before socket_ so that it outlives it: a CURVE socket without its ZAP domain would let
  // any client in.
  std::optional<ZapRegistration> zap_;
  zmq::socket_t socket_;
  Waker waker_;
  std::shared_ptr<internal::Outbox> outbox_;
  std::string endpoint_;
  int lock_fd_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::int64_t start_unix_ms_ = 0;
  std::map<std::string, Command, std::less<>> commands_;

  std::thread thread_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<bool> shutdown_{false};
  std::mutex shutdown_mutex_;
  std::condition_variable shutdown_cv_;

  std::atomic<std::uint64_t> requests_total_{0};
  std::atomic<std::uint64_t> request_errors_total_{0};
  std::atomic<std::uint64_t> received_bytes_total_{0};
  std::atomic<std::uint64_t> sent_bytes_total_{0};
};

}  // namespace az::ipc
