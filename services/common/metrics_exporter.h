#pragma once

// The Prometheus /metrics endpoint of a service: a prometheus-cpp Exposer bound to
// `bind:port` (port 0: any free port) serving one registry. Services build their metric families
// on registry() in their own metrics file; nothing below the services sees prometheus-cpp.
//
// (services/replay/replay_metrics.cc sets up its Exposer the same way; the two can merge.)

#include <memory>
#include <string>

#include "core/base/status.h"

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace az::service {

class MetricsExporter {
 public:
  // Binds and starts serving (one civetweb thread). Unavailable when the address cannot be bound,
  // with a message that names it and the flags that help.
  static Result<std::unique_ptr<MetricsExporter>> Start(const std::string& bind_address, int port);
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  prometheus::Registry& registry() { return *registry_; }
  // The port actually bound.
  int port() const { return port_; }

 private:
  MetricsExporter() = default;
  int port_ = 0;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace az::service
