#include "ipc/endpoint.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

namespace az::ipc {
namespace {

constexpr std::string_view kIpcPrefix = "ipc://";
constexpr size_t kMaxServiceName = 32;

static_assert(kMaxUnixSocketPath + 1 == sizeof(sockaddr_un::sun_path));

std::uint64_t Fnv1a64(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

Status ValidateServiceName(std::string_view service) {
  if (service.empty() || service.size() > kMaxServiceName) {
    return InvalidArgument("service name must be 1 to 32 characters, got '" + std::string(service) +
                           "'");
  }
  for (size_t i = 0; i < service.size(); ++i) {
    const char c = service[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '-' && c != '_'))) {
      return InvalidArgument("service name '" + std::string(service) +
                             "' may only hold a-z, 0-9, '-' and '_', and start with a letter or "
                             "digit");
    }
  }
  return Status::Ok();
}

Result<std::string> NormalizeRunDir(std::string_view run_dir) {
  if (run_dir.empty()) return InvalidArgument("the run directory is empty");
  std::error_code error;
  std::filesystem::path path = std::filesystem::absolute(std::filesystem::path(run_dir), error);
  if (error)
    return InvalidArgument("run directory '" + std::string(run_dir) + "': " + error.message());
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, error);
  if (error) canonical = path.lexically_normal();
  std::string out = canonical.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Result<std::string> DefaultEndpoint(std::string_view run_dir, std::string_view service,
                                    EndpointKind kind) {
  AZ_RETURN_IF_ERROR(ValidateServiceName(service));
  AZ_ASSIGN_OR_RETURN(std::string dir, NormalizeRunDir(run_dir));
  const std::string file =
      std::string(service) + (kind == EndpointKind::kControl ? ".ctl" : ".pub");
  std::string path = dir + "/" + file;
  if (path.size() <= kMaxUnixSocketPath) return std::string(kIpcPrefix) + path;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(Fnv1a64(dir)));
  return std::string(kIpcPrefix) + "@az-" + hash + "-" + file;
}

Result<std::string> RunShmPrefix(std::string_view run_dir) {
  AZ_ASSIGN_OR_RETURN(std::string dir, NormalizeRunDir(run_dir));
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(Fnv1a64(dir)));
  return "az-" + std::string(hash);
}

std::optional<std::string> IpcPath(std::string_view endpoint) {
  if (!endpoint.starts_with(kIpcPrefix)) return std::nullopt;
  return std::string(endpoint.substr(kIpcPrefix.size()));
}

bool IpcEndpointInUse(std::string_view endpoint) {
  std::optional<std::string> path = IpcPath(endpoint);
  if (!path || path->empty() || path->size() > kMaxUnixSocketPath) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path->data(), path->size());
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path->size());
  if ((*path)[0] == '@') {
    address.sun_path[0] = '\0';  // abstract namespace, as libzmq spells it
  } else {
    length += 1;  // the terminating NUL of a filesystem path
  }
  // ZeroMQ's ipc transport uses SOCK_STREAM; a listener accepts the connection at once (EAGAIN: its
  // backlog is full, so it is alive too), a stale file refuses it. Non-blocking, so never waits.
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), length);
  const bool in_use = rc == 0 || errno == EAGAIN || errno == EINPROGRESS;
  ::close(fd);
  return in_use;
}

bool WaitForIpcEndpointRelease(std::string_view endpoint, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (IpcEndpointInUse(endpoint)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace az::ipc
