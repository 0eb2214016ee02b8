#pragma once

// Short hands for the unlabelled metric families every service's metrics file builds on its
// registry, and for mirroring a total kept elsewhere into a Prometheus counter. Header-only, on
// prometheus-cpp's core, so that any service's metrics file can use it.

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>
#include <vector>

namespace az::service {

inline prometheus::Counter& MakeCounter(prometheus::Registry& registry, const std::string& name,
                                        const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
}

inline prometheus::Gauge& MakeGauge(prometheus::Registry& registry, const std::string& name,
                                    const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

inline prometheus::Histogram& MakeHistogram(prometheus::Registry& registry,
                                            const std::string& name, const std::string& help,
                                            const std::vector<double>& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry).Add({}, buckets);
}

// Counters only go up; the sources are totals (a service's own counters), so add what is new.
inline void AdvanceTo(prometheus::Counter& counter, double total) {
  const double now = counter.Value();
  if (total > now) counter.Increment(total - now);
}

}  // namespace az::service
