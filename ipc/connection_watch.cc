#include "ipc/connection_watch.h"

#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

namespace az::ipc {
namespace {
std::atomic<std::uint64_t> next_id{0};
}  // namespace

Result<std::unique_ptr<ConnectionWatch>> ConnectionWatch::Create(zmq::context_t& context,
                                                                 zmq::socket_t& socket,
                                                                 bool curve) {
  const std::string address = "inproc://az-connection-watch-" + std::to_string(::getpid()) + "-" +
                              std::to_string(next_id.fetch_add(1));
  // HANDSHAKE_SUCCEEDED comes for every mechanism (NULL too), so a connection is known to have
  // been able to carry a request.
  int events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
  if (curve) {
    events |= ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
              ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
  }
  if (zmq_socket_monitor(socket.handle(), address.c_str(), events) != 0) {
    return Internal(std::string("monitoring a socket's connections: ") + zmq_strerror(zmq_errno()));
  }
  try {
    zmq::socket_t pair(context, zmq::socket_type::pair);
    pair.set(zmq::sockopt::linger, 0);
    pair.connect(address);
    return std::unique_ptr<ConnectionWatch>(new ConnectionWatch(socket, std::move(pair), curve));
  } catch (const zmq::error_t& e) {
    zmq_socket_monitor(socket.handle(), nullptr, 0);
    return Internal(std::string("monitoring a socket's connections: ") + e.what());
  }
}

ConnectionWatch::~ConnectionWatch() {
  if (watched_->handle() != nullptr) zmq_socket_monitor(watched_->handle(), nullptr, 0);
}

int ConnectionWatch::Drain() {
  int disconnected = 0;
  while (true) {
    zmq::message_t head;
    zmq::message_t address;
    try {
      if (!pair_.recv(head, zmq::recv_flags::dontwait)) return disconnected;
      if (head.more()) (void)pair_.recv(address, zmq::recv_flags::none);
    } catch (const zmq::error_t&) {
      return disconnected;
    }
    if (head.size() < 6) continue;
    // Frame 1 of a monitor event: the event (16 bits) and its value (32 bits), native order.
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    std::memcpy(&event, head.data(), 2);
    std::memcpy(&value, static_cast<const char*>(head.data()) + 2, 4);
    switch (event) {
      case ZMQ_EVENT_CONNECTED: ++connected_; break;
      case ZMQ_EVENT_DISCONNECTED:
        if (live_) ++disconnected;
        live_ = false;
        break;
      case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        ++succeeded_;
        live_ = true;
        break;
      case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        ++failed_auth_;
        last_auth_status_ = static_cast<int>(value);
        break;
      default: ++failed_other_; break;
    }
  }
}

Status ConnectionWatch::Diagnose(std::string_view endpoint) {
  if (!curve_) return Status::Ok();
  const std::string where(endpoint);
  if (failed_auth_ > 0) {
    return PermissionDenied(
        "the server at " + where + " refused this client's CURVE key (ZAP status " +
        std::to_string(last_auth_status_) +
        "): add the client's public key (keys/client.public) to the server's "
        "keys/authorized_clients and restart the server");
  }
  // Two connections at least: one that drops mid-handshake may be a server dying, not a key.
  if (succeeded_ == 0 && connected_ >= 2) {
    return PermissionDenied(
        "connected to " + where + " " + std::to_string(connected_) + " time(s) (" +
        std::to_string(failed_other_) +
        " handshake failure(s) seen) but no CURVE handshake completed: this client's keys/server.public is not that "
        "server's key, or the server does not speak CURVE");
  }
  return Status::Ok();
}

}  // namespace az::ipc
