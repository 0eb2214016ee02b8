#include "ipc/zmq_context.h"

#include <mutex>

namespace az::ipc {

std::shared_ptr<zmq::context_t> SharedContext() {
  // Weak so that the context is terminated once the last owner is gone, and a later owner gets a
  // fresh one; a strong static would be terminated during static destruction with sockets still
  // open.
  static std::mutex mutex;
  static std::weak_ptr<zmq::context_t> weak;
  std::lock_guard lock(mutex);
  std::shared_ptr<zmq::context_t> context = weak.lock();
  if (!context) {
    context = std::make_shared<zmq::context_t>(1);
    weak = context;
  }
  return context;
}

}  // namespace az::ipc
