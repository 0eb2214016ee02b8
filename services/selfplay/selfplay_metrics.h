#pragma once

// The self-play worker's Prometheus metrics (docs/selfplay.md, "Metrics"). This file alone turns
// the engine's counters and events into metrics.

#include <memory>

#include "services/selfplay/driver/selfplay_engine.h"
#include "shm/request_channel.h"
#include "shm/ring.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace az::selfplay {

class SelfPlayMetrics {
 public:
  explicit SelfPlayMetrics(prometheus::Registry& registry);
  ~SelfPlayMetrics();

  // Thread-safe.
  void ObserveGame(int plies);
  void ObserveRoundTrip(double seconds);
  // Advances the counters to the engine's totals and sets the gauges.
  void Update(const EngineCounters& counters, const shm::ChannelClientStats& channel,
              const shm::RingStats& samples);

 private:
  struct Families;
  std::unique_ptr<Families> m_;
};

}  // namespace az::selfplay
