#pragma once

// Watches a connecting socket's connections through a ZeroMQ socket monitor, so that a client can
// tell what happened while it waited for a reply:
//   - the connection dropped (the server died or restarted): a request sent on it is lost, and
//     waiting out the attempt's deadline would only add seconds to every recovery;
//   - a CURVE server refused this client's key, or connections were made but no CURVE handshake
//     completed (a wrong server key, a server without CURVE): retrying will not help, and the
//     error should say which key to check.
//
// Create it before the socket connects; destroy it before the socket. Not thread-safe: the
// socket's thread uses it.

#include <memory>
#include <string_view>
#include <zmq.hpp>

#include "core/base/status.h"

namespace az::ipc {

class ConnectionWatch {
 public:
  // `curve`: the socket speaks CURVE, so handshake failures are worth diagnosing.
  static Result<std::unique_ptr<ConnectionWatch>> Create(zmq::context_t& context,
                                                         zmq::socket_t& socket, bool curve);
  ~ConnectionWatch();
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;

  // The monitor's socket, to poll beside the watched one (readable when events arrived).
  zmq::socket_t& events() { return pair_; }

  // Reads the events that arrived; returns how many of them were the loss of a connection whose
  // handshake had completed (one that may have carried a request). A connection that drops during
  // its handshake carried nothing: ZeroMQ keeps the messages and connects again.
  int Drain();

  // After Drain: PERMISSION_DENIED naming `endpoint` when a CURVE handshake failed, or
  // connections were made but none completed its handshake; OK otherwise (nothing to blame on
  // keys: the server may simply be down or slow). Always OK for a socket without CURVE.
  Status Diagnose(std::string_view endpoint);

 private:
  ConnectionWatch(zmq::socket_t& watched, zmq::socket_t pair, bool curve)
      : watched_(&watched), pair_(std::move(pair)), curve_(curve) {}
  zmq::socket_t* watched_;
  zmq::socket_t pair_;
  bool curve_;
  int connected_ = 0;
  int succeeded_ = 0;
  bool live_ = false;  // the current connection completed its handshake
  int failed_auth_ = 0;
  int failed_other_ = 0;
  int last_auth_status_ = 0;
};

}  // namespace az::ipc
