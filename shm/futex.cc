#include "shm/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

#include "core/base/check.h"

namespace az::shm {

FutexWaitResult FutexWait(std::uint32_t* word, std::uint32_t expected,
                          std::chrono::nanoseconds timeout) {
  AZ_CHECK(timeout.count() >= 0);
  timespec relative;
  relative.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  relative.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  const long rc = ::syscall(SYS_futex, word, FUTEX_WAIT, expected, &relative, nullptr, 0);
  if (rc == 0) return FutexWaitResult::kWoken;
  switch (errno) {
    case EAGAIN: return FutexWaitResult::kValueChanged;
    case ETIMEDOUT: return FutexWaitResult::kTimedOut;
    case EINTR: return FutexWaitResult::kInterrupted;
    default: AZ_CHECK(false, "futex wait failed unexpectedly");
  }
  return FutexWaitResult::kWoken;
}

int FutexWake(std::uint32_t* word, int count) {
  const long rc = ::syscall(SYS_futex, word, FUTEX_WAKE, count, nullptr, nullptr, 0);
  AZ_CHECK(rc >= 0, "futex wake failed unexpectedly");
  return static_cast<int>(rc);
}

}  // namespace az::shm
