#pragma once

// The client side of the control protocol: a DEALER socket that sends a request, waits for its
// reply with a deadline, and on a timeout closes the socket, opens a fresh one and sends again
// ("lazy pirate"). A REQ socket would wedge after a lost reply; a DEALER with a request id in every
// request does not, and a reply that arrives late for an earlier request is recognised by its id
// and dropped. So a client survives a server that is restarted while it waits: the next attempt
// reaches the new server.
//
// Retries make delivery at-least-once: a request whose reply was lost may have been carried out.
// Commands that must not run twice should be called with max_attempts = 1 or be idempotent. An
// attempt ends early when the connection it was sent on drops (ipc/connection_watch.h): the
// request went down with the server, so the next attempt goes at once instead of after the
// deadline, and with no attempt left the call fails with UNAVAILABLE at once.
//
// Not thread-safe: one Client per thread.

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "core/base/status.h"
#include "ipc/curve.h"
#include "ipc/message.h"

namespace az::ipc {

struct ClientOptions {
  // Where the server listens (ipc/endpoint.h names the defaults). A tcp:// endpoint always speaks
  // CURVE (ipc/curve.h).
  std::string endpoint;
  // The run directory whose keys/ a tcp:// endpoint's handshake uses (unless `curve` is set).
  std::string run_dir;
  std::optional<CurveClientKeys> curve;
  // How long one attempt waits for the reply.
  std::chrono::milliseconds attempt_timeout{2000};
  // Attempts per call, the first included; at least 1.
  int max_attempts = 3;
  // Requests larger than this are refused locally with RESOURCE_EXHAUSTED (servers default to the
  // same limit).
  size_t max_request_bytes = size_t{64} << 20;
};

// Per-call overrides of ClientOptions; zero keeps the client's value.
struct CallOptions {
  std::chrono::milliseconds attempt_timeout{0};
  int max_attempts = 0;
};

class Client {
 public:
  // Checks the options and opens the socket (connecting does not wait for the server).
  // INVALID_ARGUMENT for an empty endpoint, a non-positive timeout or attempt count, an endpoint
  // ZeroMQ rejects, or a tcp:// endpoint with neither keys nor a run directory; the errors of
  // LoadClientKeys.
  static Result<Client> Create(ClientOptions options);

  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  // Sends {"cmd": cmd, ...args} with `frames` and returns the reply when it says {"ok": true}.
  // Blocks up to max_attempts x attempt_timeout. Errors: the server's own error (its code and
  // message) for {"ok": false}; DEADLINE_EXCEEDED when no attempt got a reply; UNAVAILABLE when
  // the last attempt's connection dropped before its reply (it may have been carried out);
  // PERMISSION_DENIED
  // when a CURVE server refused this client's key or no handshake completed (ipc/curve.h);
  // RESOURCE_EXHAUSTED for a request over max_request_bytes; INVALID_ARGUMENT when args is not an object;
  // DATA_LOSS for a reply that is not a protocol reply.
  Result<Reply> Call(std::string_view cmd, nlohmann::json args = nlohmann::json::object(),
                     std::vector<zmq::message_t> frames = {}, const CallOptions& call = {});

  // Like Call but takes the whole request object (it must hold a string "cmd"; "id" is replaced)
  // and returns any reply, {"ok": false} included: errors are only those of the transport. For
  // tools that show the server's answer as it is (azctl call).
  Result<Reply> Exchange(nlohmann::json request, std::vector<zmq::message_t> frames = {},
                         const CallOptions& call = {});

  const std::string& endpoint() const;
  // Attempts the last call made (1 when the first attempt was answered).
  int last_attempts() const;

 private:
  struct State;
  explicit Client(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace az::ipc
