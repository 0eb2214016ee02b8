#pragma once

// Follows the learner's "model published" events (ipc/event.h) on a thread of its own and keeps
// the newest one not yet taken, so the evaluator's batching loop can pick it up between batches
// without ever waiting on ZeroMQ. The publisher's last-value cache means a watcher that starts
// after the learner published still receives the current model.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/base/status.h"
#include "ipc/event.h"
#include "ipc/event_subscriber.h"

namespace az::evaluator {

class ModelWatcher {
 public:
  // Subscribes to the "model" topic of `events_endpoint` and starts the thread. INVALID_ARGUMENT
  // for an endpoint ZeroMQ refuses.
  static Result<std::unique_ptr<ModelWatcher>> Start(const std::string& events_endpoint);
  // Stops the thread (within 200 ms).
  ~ModelWatcher();
  ModelWatcher(const ModelWatcher&) = delete;
  ModelWatcher& operator=(const ModelWatcher&) = delete;

  // The newest event with a version above every event taken before, if one arrived; it is then
  // taken. Never blocks beyond a short mutex.
  std::optional<ipc::ModelPublished> TakeNewer();

  std::uint64_t events_received() const { return received_.load(std::memory_order_relaxed); }
  std::uint64_t malformed_events() const { return malformed_.load(std::memory_order_relaxed); }

 private:
  explicit ModelWatcher(ipc::EventSubscriber subscriber);
  void Loop();

  ipc::EventSubscriber subscriber_;  // used by the thread only
  std::mutex mutex_;
  std::optional<ipc::ModelPublished> pending_;
  std::int64_t taken_version_ = -1;
  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> malformed_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace az::evaluator
