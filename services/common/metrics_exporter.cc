#include "services/common/metrics_exporter.h"

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <exception>
#include <vector>

namespace az::service {

Result<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(const std::string& bind_address,
                                                                int port) {
  if (port < 0 || port > 65535) {
    return InvalidArgument("metrics port " + std::to_string(port) + " is not in 0..65535");
  }
  std::unique_ptr<MetricsExporter> exporter(new MetricsExporter());
  exporter->registry_ = std::make_shared<prometheus::Registry>();
  const std::string address = bind_address + ":" + std::to_string(port);
  try {
    exporter->exposer_ = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    return Unavailable("serving metrics on " + address + ": " + e.what() +
                       " (is the port in use? --metrics-port 0 picks a free one, -1 turns metrics "
                       "off)");
  }
  exporter->exposer_->RegisterCollectable(exporter->registry_);
  const std::vector<int> ports = exporter->exposer_->GetListeningPorts();
  exporter->port_ = ports.empty() ? port : ports.front();
  return exporter;
}

MetricsExporter::~MetricsExporter() = default;

}  // namespace az::service
