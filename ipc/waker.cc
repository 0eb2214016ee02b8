#include "ipc/waker.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace az::ipc {

Result<Waker> Waker::Create() {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) return Internal(std::string("eventfd: ") + std::strerror(errno));
  return Waker(fd);
}

Waker::Waker(Waker&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

Waker& Waker::operator=(Waker&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Waker::~Waker() {
  if (fd_ >= 0) ::close(fd_);
}

void Waker::Wake() {
  const std::uint64_t one = 1;
  // EAGAIN means the counter is already non-zero: the poller will wake anyway.
  [[maybe_unused]] ssize_t n = ::write(fd_, &one, sizeof one);
}

void Waker::Drain() {
  std::uint64_t value = 0;
  [[maybe_unused]] ssize_t n = ::read(fd_, &value, sizeof value);
}

}  // namespace az::ipc
