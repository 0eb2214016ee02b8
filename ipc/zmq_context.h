#pragma once

// The one ZeroMQ context of the process. Every socket in az_ipc is made from it; each owner keeps a
// shared_ptr so the context outlives its last socket (zmq_ctx_term blocks while sockets are open).
// Not for use across fork(): a child must exec before it touches ZeroMQ.

#include <memory>
#include <zmq.hpp>

namespace az::ipc {

std::shared_ptr<zmq::context_t> SharedContext();

}  // namespace az::ipc
