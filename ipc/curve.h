#pragma once

// ZeroMQ CURVE for every tcp:// endpoint of a run (docs/security.md). An ipc:// endpoint is a unix
// socket in the run directory and is guarded by the file system; a tcp:// endpoint can be reached
// by anyone who can reach the port, so its traffic is encrypted and both ends are authenticated:
//
//   <run-dir>/keys/                     0700, made on first use by the first service that needs it
//     server.public   server.secret     the key pair of the run's servers (control and events)
//     client.public   client.secret     the key pair of the run's clients (services, azctl)
//     authorized_clients                client public keys the servers accept, one a line
//                                       ('#' comments); the run's own client key is the first
//
// Keys are Z85 text (40 characters). Secret files are 0600 and are refused when group or others
// may read them (as ssh refuses a private key). A client needs client.public, client.secret and
// server.public; another host of the same run gets a copy of the keys directory (or its own client
// pair, with its public key added to authorized_clients, read when a server starts).
//
// A server refuses a client whose key is not authorized through the process's ZAP handler
// (ZeroMQ's authentication protocol, RFC 27), which logs every refusal; a client told so by the
// server, or whose handshake never completes (a wrong server key, a plain-text peer), fails its
// call with PERMISSION_DENIED and says which key to check (ipc/connection_watch.h).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "core/base/status.h"

namespace az::ipc {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters
};

// What a server (ROUTER, XPUB) needs: its own pair and the client keys it lets in.
struct CurveServerKeys {
  CurveKeyPair server;
  std::vector<std::string> authorized_clients;  // Z85 public keys
};

// What a client (DEALER, SUB) needs: its own pair and the public key of the server it trusts.
struct CurveClientKeys {
  CurveKeyPair client;
  std::string server_public_key;  // Z85
};

// Whether traffic on this endpoint leaves the host's file-system protection (tcp://).
bool IsTcpEndpoint(std::string_view endpoint);

// A fresh key pair. INTERNAL if libzmq was built without CURVE.
Result<CurveKeyPair> GenerateCurveKeyPair();

// Whether `key` is a 40-character Z85 text that decodes to 32 bytes.
bool IsZ85Key(std::string_view key);

// The keys directory of a run: <run_dir>/keys.
std::string RunKeysDir(std::string_view run_dir);

// Makes the keys directory with both pairs and authorized_clients unless it exists; safe when
// several processes of the run do it at once (the first complete directory wins). FAILED_PRECONDITION
// on I/O errors.
Status EnsureRunKeys(const std::string& run_dir);

// The server's keys of a run, made first when missing (EnsureRunKeys). FAILED_PRECONDITION for a
// secret file that group or others may read, DATA_LOSS for a file that holds no valid key, with
// the file's path in the message.
Result<CurveServerKeys> LoadServerKeys(const std::string& run_dir);

// The client's keys of a run, read from `keys_dir` (a run's keys directory, or a copy on another
// host). Made first when `keys_dir` is a run's own and missing. Errors as LoadServerKeys; NOT_FOUND
// when a copy lacks a file.
Result<CurveClientKeys> LoadClientKeys(const std::string& run_dir);

// Sets CURVE on a socket that binds (server side), with the ZAP domain that authorizes its clients.
// Throws zmq::error_t as the socket options do.
void ApplyCurveServer(zmq::socket_t& socket, const CurveServerKeys& keys, const std::string& domain);
// Sets CURVE on a socket that connects (client side).
void ApplyCurveClient(zmq::socket_t& socket, const CurveClientKeys& keys);

// A set of authorized client keys registered with the process's ZAP handler under a domain of its
// own, for the life of this object. The handler (one thread, a REP socket on
// inproc://zeromq.zap.01 of the shared context) runs while any registration exists. A ZAP request
// for an unknown domain, or a key outside the domain's set, is answered 400 and logged.
class ZapRegistration {
 public:
  // `owner` names the socket in the refusal log lines (e.g. "control server 'replay'").
  static Result<ZapRegistration> Create(std::vector<std::string> authorized_clients,
                                        std::string owner);
  ZapRegistration(ZapRegistration&& other) noexcept;
  ZapRegistration& operator=(ZapRegistration&& other) noexcept;
  ZapRegistration(const ZapRegistration&) = delete;
  ZapRegistration& operator=(const ZapRegistration&) = delete;
  ~ZapRegistration();

  const std::string& domain() const { return domain_; }
  // Clients refused under this domain so far.
  std::uint64_t refused() const;

 private:
  ZapRegistration(std::string domain) : domain_(std::move(domain)) {}
  std::string domain_;
};

// The CURVE side of a socket that binds `endpoint`: empty for an endpoint that is not tcp://; for
// tcp://, the `given` keys or else the run directory's (LoadServerKeys), registered with the ZAP
// handler under `owner` (e.g. "control server 'replay' on tcp://..."). INVALID_ARGUMENT when there
// are neither keys nor a run directory; `options_field` names the option to set in that message.
struct BindingCurve {
  CurveServerKeys keys;
  ZapRegistration zap;
};
Result<std::optional<BindingCurve>> CurveForBinding(const std::string& endpoint,
                                                    std::optional<CurveServerKeys> given,
                                                    const std::string& run_dir,
                                                    const std::string& owner,
                                                    std::string_view options_field);

// The CURVE keys of a socket that connects to `endpoint`: the `given` keys, else for a tcp://
// endpoint the run directory's (LoadClientKeys), else none. Errors as CurveForBinding; `what`
// names the endpoint in them (e.g. "events endpoint tcp://...").
Result<std::optional<CurveClientKeys>> CurveForConnecting(const std::string& endpoint,
                                                         std::optional<CurveClientKeys> given,
                                                         const std::string& run_dir,
                                                         const std::string& what,
                                                         std::string_view options_field);

}  // namespace az::ipc
