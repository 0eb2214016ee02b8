#include "services/common/shutdown_signals.h"

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

namespace az::service {
namespace {

sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

Result<std::unique_ptr<ShutdownSignals>> ShutdownSignals::Start(
    std::function<void(int)> on_signal) {
  const sigset_t set = ShutdownSet();
  if (const int error = pthread_sigmask(SIG_BLOCK, &set, nullptr); error != 0) {
    return Internal(std::string("blocking SIGTERM/SIGINT: ") + std::strerror(error));
  }
  std::unique_ptr<ShutdownSignals> signals(new ShutdownSignals());
  signals->on_signal_ = std::move(on_signal);
  signals->thread_ = std::thread([raw = signals.get()] { raw->Loop(); });
  return signals;
}

ShutdownSignals::~ShutdownSignals() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

void ShutdownSignals::Loop() {
  const sigset_t set = ShutdownSet();
  // A timed wait rather than sigwait, so that the destructor can stop the thread without sending
  // it a signal.
  const timespec interval{0, 100'000'000};
  while (!stop_.load(std::memory_order_acquire)) {
    const int signo = sigtimedwait(&set, nullptr, &interval);
    if (signo < 0) continue;  // EAGAIN (timeout) or EINTR
    received_.fetch_add(1, std::memory_order_acq_rel);
    if (on_signal_) on_signal_(signo);
  }
}

}  // namespace az::service
