#pragma once

// The Prometheus /metrics endpoint of a service: a small HTTP/1.1 server on `bind:port` (port 0:
// any free port) that answers `GET /metrics` with one registry in Prometheus' text format, on a
// thread of its own. Services build their metric families on registry() in their own metrics
// file; nothing below the services sees prometheus-cpp.
//
// Why not prometheus-cpp's Exposer: it serves through civetweb, which starts its threads with a
// fixed 100 KB stack, and glibc refuses (EINVAL) to start a thread whose stack is smaller than the
// process's static TLS. A process that loads LibTorch maps ~290 libraries whose static TLS adds
// up to more than that (OpenBLAS alone 60 KB, glog 30 KB), so the Exposer cannot start in the
// evaluator (or the learner). This server needs one ordinary thread and prometheus-cpp's core.
//
// One connection at a time, `Connection: close`: a scraper every few seconds is the whole load. A
// request head must arrive within 2 s and 8 KB (else 431, or nothing when it stalls), and the
// answer must be taken within 2 s more, so a client that stops reading holds the server (and its
// shutdown) for at most 4 s. Anything but GET /metrics (or /) is answered 400, 404 or 405. An empty
// bind address means 127.0.0.1: metrics are reachable from other hosts only when asked for
// (docs/security.md).

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "core/base/status.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace az::service {

inline constexpr std::string_view kDefaultMetricsBind = "127.0.0.1";

class MetricsExporter {
 public:
  // Binds, listens and starts serving. InvalidArgument for a bad address or port; Unavailable when
  // it cannot be bound (the message names it and the flags that help).
  static Result<std::unique_ptr<MetricsExporter>> Start(const std::string& bind_address, int port);
  // Stops serving (within 100 ms) and closes the socket.
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  prometheus::Registry& registry() { return *registry_; }
  // The port actually bound, and the address (the default filled in).
  int port() const { return port_; }
  const std::string& host() const { return host_; }
  // Scrapes answered so far.
  std::uint64_t scrapes() const { return scrapes_.load(std::memory_order_relaxed); }

 private:
  MetricsExporter() = default;
  void Loop();
  void Serve(int connection);

  static constexpr std::chrono::seconds kReadTimeout{2};
  static constexpr std::chrono::seconds kWriteTimeout{2};
  static constexpr std::size_t kMaxRequestHead = 8192;

  int listen_fd_ = -1;
  int port_ = 0;
  std::string host_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> scrapes_{0};
  std::thread thread_;
};

}  // namespace az::service
