#include "shm/process.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>  // std::once_flag
#include <string>

namespace az::shm {
namespace {

// Cached packed identity (0 = not yet known), cleared in fork children by an atfork handler:
// getpid() is a real syscall since glibc 2.25, too slow to call on every ring operation.
std::atomic<std::uint64_t> g_self_packed{0};
std::once_flag g_atfork_once;

void InvalidateSelfInChild() { g_self_packed.store(0, std::memory_order_relaxed); }

}  // namespace

Result<ProcessStat> ReadProcessStat(std::uint32_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return NotFound("no process " + std::to_string(pid));
    return Unavailable("cannot open " + path + ": " + std::strerror(errno));
  }
  char buffer[1024];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  if (n <= 0) return NotFound("no process " + std::to_string(pid) + " (empty " + path + ")");
  buffer[n] = '\0';
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so parse after the last ')'.
  const char* close_paren = std::strrchr(buffer, ')');
  if (close_paren == nullptr || close_paren[1] != ' ') {
    return DataLoss("cannot parse " + path);
  }
  ProcessStat stat;
  const char* p = close_paren + 2;
  stat.state = *p;
  // Field 3 is the state; field 22 is starttime. Skip 19 more space-separated fields.
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return DataLoss("cannot parse " + path + ": too few fields");
    ++p;
  }
  stat.start_ticks = std::strtoull(p, nullptr, 10);
  return stat;
}

ProcessIdentity Self() {
  std::uint64_t packed = g_self_packed.load(std::memory_order_relaxed);
  if (packed != 0) [[likely]]
    return ProcessIdentity::Unpack(packed);
  std::call_once(g_atfork_once, [] { pthread_atfork(nullptr, nullptr, InvalidateSelfInChild); });
  const auto pid = static_cast<std::uint32_t>(::getpid());
  AZ_CHECK(pid <= kPidMask, "pid " + std::to_string(pid) + " does not fit in 22 bits");
  Result<ProcessStat> stat = ReadProcessStat(pid);
  AZ_CHECK(stat.ok(), "cannot read our own /proc/self/stat: " + stat.status().ToString());
  // Idempotent: racing threads compute and store the same value.
  packed = ProcessIdentity{pid, stat->start_ticks}.Packed();
  g_self_packed.store(packed, std::memory_order_relaxed);
  return ProcessIdentity::Unpack(packed);
}

bool IsAlive(const ProcessIdentity& process) {
  if (process.pid == 0) return false;
  if (::kill(static_cast<pid_t>(process.pid), 0) != 0 && errno == ESRCH) return false;
  Result<ProcessStat> stat = ReadProcessStat(process.pid);
  if (!stat.ok()) return stat.status().code() != StatusCode::kNotFound;  // unsure: assume alive
  if (stat->state == 'Z' || stat->state == 'X' || stat->state == 'x') return false;
  return (stat->start_ticks & kStartTicksMask) == (process.start_ticks & kStartTicksMask);
}

}  // namespace az::shm
