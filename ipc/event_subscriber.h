#pragma once

// Receives pipeline events (ipc/event.h) from one or more publishers. It connects at once and keeps
// reconnecting, so it may start before its publishers; on every (re)connection the publisher sends
// the latest event of each subscribed topic (ipc/event_publisher.h), so a subscriber that was down
// or started late still learns the current model. Events already delivered are dropped: per
// publisher and topic, an event with the same incarnation and a sequence number not above the last
// delivered one is a duplicate.
//
// Not thread-safe: one thread calls Next.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "core/base/status.h"
#include "ipc/curve.h"
#include "ipc/event.h"

namespace az::ipc {

struct SubscriberOptions {
  // The publishers' events endpoints, e.g. EventsEndpoint(run_dir, "learner").
  std::vector<std::string> endpoints;
  // Exact topic names to receive; empty for every topic.
  std::vector<std::string> topics;
  // For tcp:// endpoints, which always speak CURVE (ipc/curve.h): the run directory whose keys/
  // the handshake uses, unless `curve` is set.
  std::string run_dir;
  std::optional<CurveClientKeys> curve;
};

class EventSubscriber {
 public:
  // INVALID_ARGUMENT for no endpoints, a bad topic, an endpoint ZeroMQ rejects, or a tcp://
  // endpoint with neither keys nor a run directory; the errors of LoadClientKeys.
  static Result<EventSubscriber> Create(SubscriberOptions options);

  EventSubscriber(EventSubscriber&&) noexcept;
  EventSubscriber& operator=(EventSubscriber&&) noexcept;
  ~EventSubscriber();

  // The next event not delivered before, waiting up to `timeout`. DEADLINE_EXCEEDED when none came
  // in time (malformed messages are logged and skipped); PERMISSION_DENIED instead when a tcp://
  // publisher refused this subscriber's key or no CURVE handshake completed; UNAVAILABLE if the
  // socket failed.
  Result<Event> Next(std::chrono::milliseconds timeout);

 private:
  struct State;
  explicit EventSubscriber(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace az::ipc
