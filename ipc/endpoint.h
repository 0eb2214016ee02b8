#pragma once

// Names of the ZeroMQ endpoints of a run. Every process of a run derives them from the run
// directory and the service name alone, so a client or subscriber can connect before the service
// has started (ZeroMQ keeps reconnecting) and no registry is needed to find a service on this host.
//
//   control endpoint  ipc://<run-dir>/<service>.ctl
//   events endpoint   ipc://<run-dir>/<service>.pub   (only services that publish events bind one)
//
// A unix socket path holds at most 107 bytes. When <run-dir>/<service>.ctl is longer, the endpoint
// falls back to the Linux abstract namespace, ipc://@az-<16 hex digits of a hash of the run dir>-
// <service>.ctl: still unique per run directory and derivable by every process, with no file in the
// run directory (it disappears with the process) and no file permissions (any local user may
// connect; use a short run directory where that matters).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::ipc {

// The longest filesystem path a unix domain socket can have (sizeof(sockaddr_un::sun_path) - 1).
inline constexpr size_t kMaxUnixSocketPath = 107;

// A service name is 1 to 32 characters of [a-z0-9_-], starting with a letter or digit; it is used
// in file and endpoint names. INVALID_ARGUMENT otherwise.
Status ValidateServiceName(std::string_view service);

// The absolute, normalised run directory (symlinks resolved where the path exists), so that every
// process computes the same endpoint from it whatever its working directory. INVALID_ARGUMENT when
// empty.
Result<std::string> NormalizeRunDir(std::string_view run_dir);

enum class EndpointKind { kControl, kEvents };

// The default endpoint of `service` in `run_dir` (see the top of this file). INVALID_ARGUMENT for a
// bad service name or an empty run directory.
Result<std::string> DefaultEndpoint(std::string_view run_dir, std::string_view service,
                                    EndpointKind kind);
inline Result<std::string> ControlEndpoint(std::string_view run_dir, std::string_view service) {
  return DefaultEndpoint(run_dir, service, EndpointKind::kControl);
}
inline Result<std::string> EventsEndpoint(std::string_view run_dir, std::string_view service) {
  return DefaultEndpoint(run_dir, service, EndpointKind::kEvents);
}

// The shared-memory name prefix of a run, "az-<16 hex digits of FNV-1a(normalised run dir)>", for
// shm::Scope::Prefix: every process of the run derives the same segment names (the sample ring, the
// eval ring) from the run directory alone, and the segments live in /dev/shm (tmpfs) whatever disk
// the run directory is on. INVALID_ARGUMENT for an empty run directory.
Result<std::string> RunShmPrefix(std::string_view run_dir);

// The socket path of an ipc:// endpoint ("@name" for the abstract namespace); nullopt for other
// transports.
std::optional<std::string> IpcPath(std::string_view endpoint);

// Whether a process accepts connections on this ipc:// endpoint right now (a unix-socket connect
// probe that returns at once). False for other transports and for a stale socket file left by a
// killed process. Used to refuse to steal the endpoint of a live server: libzmq unlinks an existing
// socket file when it binds.
bool IpcEndpointInUse(std::string_view endpoint);

// Waits until nothing listens on this ipc:// endpoint any more, up to `timeout`; returns whether it
// was released. ZeroMQ closes a socket's listener asynchronously on its I/O thread, so an owner
// that has just closed its socket calls this to hand the endpoint back before it returns. True at
// once for other transports.
bool WaitForIpcEndpointRelease(std::string_view endpoint, std::chrono::milliseconds timeout);

}  // namespace az::ipc
