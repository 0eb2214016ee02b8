#include "ipc/event_subscriber.h"

#include <algorithm>

#include "core/base/log.h"
#include "ipc/connection_watch.h"
#include "ipc/curve.h"
#include "ipc/zmq_context.h"

namespace az::ipc {

struct EventSubscriber::State {
  SubscriberOptions options;
  std::shared_ptr<zmq::context_t> context;
  // One socket for the ipc:// publishers and one, with CURVE, for the tcp:// ones: security is a
  // socket option, so the two kinds cannot share a socket.
  std::vector<zmq::socket_t> sockets;
  // Watches the CURVE socket's handshakes (declared after sockets: destroyed first).
  std::unique_ptr<ConnectionWatch> watch;
  // (publisher, topic) -> (incarnation, seq) of the last event delivered.
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::uint64_t>> seen;

  bool Wanted(const std::string& topic) const {
    return options.topics.empty() ||
           std::find(options.topics.begin(), options.topics.end(), topic) != options.topics.end();
  }

  // True when the event is new, and records it.
  bool FirstTime(const Event& event) {
    auto key = std::make_pair(event.publisher, event.topic);
    auto it = seen.find(key);
    if (it != seen.end() && it->second.first == event.incarnation &&
        event.seq <= it->second.second) {
      return false;
    }
    seen[key] = {event.incarnation, event.seq};
    return true;
  }

  zmq::socket_t MakeSocket() {
    zmq::socket_t socket(*context, zmq::socket_type::sub);
    socket.set(zmq::sockopt::linger, 0);
    if (options.topics.empty()) {
      socket.set(zmq::sockopt::subscribe, "");
    } else {
      // Prefix filters in ZeroMQ; Next keeps exact matches only.
      for (const std::string& topic : options.topics) socket.set(zmq::sockopt::subscribe, topic);
    }
    return socket;
  }
};

Result<EventSubscriber> EventSubscriber::Create(SubscriberOptions options) {
  if (options.endpoints.empty()) return InvalidArgument("an event subscriber needs an endpoint");
  for (const std::string& topic : options.topics) AZ_RETURN_IF_ERROR(ValidateTopic(topic));
  std::vector<std::string> plain;
  std::vector<std::string> tcp;
  for (const std::string& endpoint : options.endpoints) {
    (IsTcpEndpoint(endpoint) ? tcp : plain).push_back(endpoint);
  }
  if (!tcp.empty()) {
    AZ_ASSIGN_OR_RETURN(options.curve,
                        CurveForConnecting(tcp.front(), std::move(options.curve), options.run_dir,
                                           "events endpoint " + tcp.front(),
                                           "SubscriberOptions::curve"));
  }
  auto state = std::make_unique<State>();
  state->context = SharedContext();
  state->options = std::move(options);
  try {
    if (!plain.empty()) {
      zmq::socket_t socket = state->MakeSocket();
      for (const std::string& endpoint : plain) socket.connect(endpoint);
      state->sockets.push_back(std::move(socket));
    }
    if (!tcp.empty()) {
      zmq::socket_t socket = state->MakeSocket();
      ApplyCurveClient(socket, *state->options.curve);
      state->sockets.push_back(std::move(socket));
      AZ_ASSIGN_OR_RETURN(state->watch,
                          ConnectionWatch::Create(*state->context, state->sockets.back(), true));
      for (const std::string& endpoint : tcp) state->sockets.back().connect(endpoint);
    }
  } catch (const zmq::error_t& e) {
    return InvalidArgument(std::string("setting up the event subscriber: ") + e.what());
  }
  return EventSubscriber(std::move(state));
}

EventSubscriber::EventSubscriber(std::unique_ptr<State> state) : state_(std::move(state)) {}
EventSubscriber::EventSubscriber(EventSubscriber&&) noexcept = default;
EventSubscriber& EventSubscriber::operator=(EventSubscriber&&) noexcept = default;
EventSubscriber::~EventSubscriber() = default;

Result<Event> EventSubscriber::Next(std::chrono::milliseconds timeout) {
  State& s = *state_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    std::vector<zmq::message_t> parts;
    try {
      zmq::pollitem_t items[2] = {};
      for (size_t i = 0; i < s.sockets.size(); ++i) {
        items[i] = {s.sockets[i].handle(), 0, ZMQ_POLLIN, 0};
      }
      if (zmq::poll(items, s.sockets.size(), std::max(remaining, std::chrono::milliseconds(0))) ==
          0) {
        if (s.watch) {
          std::string endpoints;
          for (const std::string& e : s.options.endpoints) {
            if (IsTcpEndpoint(e)) endpoints += (endpoints.empty() ? "" : ", ") + e;
          }
          s.watch->Drain();
          AZ_RETURN_IF_ERROR(s.watch->Diagnose(endpoints));
        }
        return DeadlineExceeded("no event within " + std::to_string(timeout.count()) + " ms");
      }
      zmq::socket_t& socket = s.sockets[(items[0].revents & ZMQ_POLLIN) != 0 ? 0 : 1];
      while (true) {
        zmq::message_t part;
        if (!socket.recv(part, zmq::recv_flags::dontwait)) break;
        const bool more = part.more();
        parts.push_back(std::move(part));
        if (!more) break;
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      return Unavailable(std::string("receiving events: ") + e.what());
    }
    if (parts.size() != 2) {
      if (!parts.empty()) {
        AZ_LOG(kWarning) << "skipping an event of " << parts.size() << " frames";
      }
      continue;
    }
    const std::string topic = parts[0].to_string();
    if (!s.Wanted(topic)) continue;
    nlohmann::json json =
        nlohmann::json::parse(parts[1].to_string_view(), nullptr, /*allow_exceptions=*/false);
    Result<Event> event = EventFromJson(json);
    if (!event.ok() || event->topic != topic) {
      AZ_LOG(kWarning) << "skipping a malformed event on topic '" << topic << "'";
      continue;
    }
    if (s.FirstTime(*event)) return event;
  }
}

}  // namespace az::ipc
