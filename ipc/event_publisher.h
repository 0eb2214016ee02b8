#pragma once

// Publishes pipeline events (ipc/event.h) on an XPUB socket bound to the publishing service's
// events endpoint, ipc://<run-dir>/<service>.pub by default, and keeps the latest event of every
// topic (a last-value cache). Late subscribers catch up without asking: whenever a subscription
// arrives (a new subscriber, or one that reconnects after either side restarted) the publisher
// sends it the latest event of each topic it subscribed to. With `persist`, the cache and the
// sequence number live in <run-dir>/<service>.events.json, replaced atomically before each event is
// sent, so a restarted publisher still answers late subscribers with the last event its previous
// run published.
//
// The welcome replay goes to every subscriber of the topic (XPUB cannot address one), so
// subscribers see duplicates; EventSubscriber drops them by (incarnation, seq). Only the latest
// event per topic is guaranteed to reach a subscriber that was away; events are for "what is
// current", not a log.

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <zmq.hpp>

#include "core/base/status.h"
#include "ipc/curve.h"
#include "ipc/event.h"
#include "ipc/waker.h"

namespace az::ipc {

struct PublisherOptions {
  // The publishing service's name (ipc/endpoint.h rules); required.
  std::string service;
  // Default endpoint ipc://<run_dir>/<service>.pub and the last-value file. May be empty only when
  // `endpoint` is set and `persist` is false.
  std::string run_dir;
  // Binds here instead, e.g. "tcp://0.0.0.0:5556" for subscribers on other machines. A tcp://
  // endpoint always speaks CURVE (ipc/curve.h).
  std::string endpoint;
  // The CURVE keys of a tcp:// endpoint; unset: the run directory's keys/ (made if missing).
  std::optional<CurveServerKeys> curve;
  bool persist = true;
};

class EventPublisher {
 public:
  // Loads the last-value file (a corrupt one is logged and ignored), binds the endpoint and starts
  // the sending thread. INVALID_ARGUMENT for bad options (a tcp:// endpoint with neither keys nor
  // a run directory); ALREADY_EXISTS when a live process listens on the ipc endpoint; UNAVAILABLE
  // when the bind fails; the errors of LoadServerKeys.
  static Result<std::unique_ptr<EventPublisher>> Create(PublisherOptions options);

  EventPublisher(const EventPublisher&) = delete;
  EventPublisher& operator=(const EventPublisher&) = delete;
  // Sends what Publish queued (ZeroMQ goes on flushing for up to 0.5 s), closes the socket and
  // waits (up to 2 s) until the ipc endpoint is released.
  ~EventPublisher();

  // Publishes `data` under `topic`: assigns the next sequence number, makes it the topic's latest
  // event, writes the last-value file (when persisting) and queues it for every current subscriber;
  // returns the event. Thread-safe; blocks only for the file write, never on subscribers (a
  // subscriber whose queue is full misses it, and gets the latest on reconnect). INVALID_ARGUMENT
  // for a bad topic; the file's error when it cannot be written (the event is then not sent).
  Result<Event> Publish(std::string_view topic, nlohmann::json data);

  // The latest event of `topic`, from this run or a previous one (persisted).
  std::optional<Event> Latest(std::string_view topic) const;

  const std::string& endpoint() const { return endpoint_; }
  const std::string& incarnation() const { return incarnation_; }

 private:
  EventPublisher(PublisherOptions options, std::shared_ptr<zmq::context_t> context,
                 zmq::socket_t socket, Waker waker, std::string endpoint);
  void Loop();
  void Send(const Event& event);
  void FlushOutbox();  // with mutex_ held
  std::string PersistPath() const;
  Status Persist() const;  // with mutex_ held

  PublisherOptions options_;
  std::shared_ptr<zmq::context_t> context_;
  std::optional<ZapRegistration> zap_;  // outlives socket_ (ipc/server.h says why)
  zmq::socket_t socket_;  // used by the thread only
  Waker waker_;
  std::string endpoint_;
  std::string incarnation_;

  mutable std::mutex mutex_;
  std::uint64_t last_seq_ = 0;
  std::map<std::string, Event, std::less<>> latest_;
  std::deque<Event> outbox_;

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace az::ipc
