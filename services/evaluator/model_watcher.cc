#include "services/evaluator/model_watcher.h"

#include <chrono>
#include <utility>

#include "core/base/log.h"

namespace az::evaluator {

Result<std::unique_ptr<ModelWatcher>> ModelWatcher::Start(const std::string& events_endpoint) {
  AZ_ASSIGN_OR_RETURN(ipc::EventSubscriber subscriber,
                      ipc::EventSubscriber::Create({.endpoints = {events_endpoint},
                                                    .topics = {std::string(ipc::kModelTopic)}}));
  std::unique_ptr<ModelWatcher> watcher(new ModelWatcher(std::move(subscriber)));
  // The socket moves to the thread; starting a thread is a full memory barrier, which is what
  // ZeroMQ asks of a socket that changes threads.
  watcher->thread_ = std::thread([raw = watcher.get()] { raw->Loop(); });
  return watcher;
}

ModelWatcher::ModelWatcher(ipc::EventSubscriber subscriber) : subscriber_(std::move(subscriber)) {}

ModelWatcher::~ModelWatcher() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

std::optional<ipc::ModelPublished> ModelWatcher::TakeNewer() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::optional<ipc::ModelPublished> taken = std::move(pending_);
  pending_.reset();
  if (taken) taken_version_ = taken->version;
  return taken;
}

void ModelWatcher::Loop() {
  while (!stop_.load(std::memory_order_acquire)) {
    Result<ipc::Event> event = subscriber_.Next(std::chrono::milliseconds(200));
    if (!event.ok()) {
      if (event.status().code() != StatusCode::kDeadlineExceeded) {
        AZ_LOG(kWarning) << "model events: " << event.status().ToString();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      continue;
    }
    received_.fetch_add(1, std::memory_order_relaxed);
    Result<ipc::ModelPublished> model = ipc::ModelPublishedFromEvent(*event);
    if (!model.ok()) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
      AZ_LOG(kWarning) << "ignoring a malformed model event from " << event->publisher << ": "
                       << model.status().ToString();
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // Events say what is current, not a log: only a version newer than everything seen matters.
    const std::int64_t newest = pending_ ? pending_->version : taken_version_;
    if (model->version > newest) pending_ = std::move(*model);
  }
}

}  // namespace az::evaluator
