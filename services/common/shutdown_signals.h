#pragma once

// SIGTERM and SIGINT as a clean shutdown request. Start() blocks both signals in the calling thread
// (call it first thing in main, before any thread exists, so that every thread inherits the mask
// and none is interrupted) and starts a thread that waits for them and calls `on_signal(signo)`
// for each one that arrives. A second SIGINT/SIGTERM after the first is passed to the callback too
// (services log it and keep shutting down; the supervisor's SIGKILL is the hard stop).

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "core/base/status.h"

namespace az::service {

class ShutdownSignals {
 public:
  // Internal when the signal mask cannot be set.
  static Result<std::unique_ptr<ShutdownSignals>> Start(std::function<void(int)> on_signal);
  // Stops the waiting thread (within 100 ms). The signals stay blocked.
  ~ShutdownSignals();
  ShutdownSignals(const ShutdownSignals&) = delete;
  ShutdownSignals& operator=(const ShutdownSignals&) = delete;

  // How many signals arrived.
  int received() const { return received_.load(std::memory_order_acquire); }

 private:
  ShutdownSignals() = default;
  void Loop();

  std::function<void(int)> on_signal_;
  std::atomic<bool> stop_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

}  // namespace az::service
