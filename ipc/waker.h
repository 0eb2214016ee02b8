#pragma once

// An eventfd that a ZeroMQ poll loop watches next to its sockets, so another thread can wake the
// loop at once (to stop it, or to hand it work) without a socket of its own and without busy
// polling.

#include "core/base/status.h"

namespace az::ipc {

class Waker {
 public:
  static Result<Waker> Create();
  Waker(Waker&& other) noexcept;
  Waker& operator=(Waker&& other) noexcept;
  Waker(const Waker&) = delete;
  Waker& operator=(const Waker&) = delete;
  ~Waker();

  // The fd to poll for readability (zmq::pollitem_t{nullptr, fd(), ZMQ_POLLIN, 0}).
  int fd() const { return fd_; }
  // Makes fd() readable. Thread-safe, never blocks.
  void Wake();
  // Makes fd() unreadable again; call from the polling thread after it woke.
  void Drain();

 private:
  explicit Waker(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace az::ipc
