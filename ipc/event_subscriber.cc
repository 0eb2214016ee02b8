#include "ipc/event_subscriber.h"

#include <algorithm>

#include "core/base/log.h"
#include "ipc/zmq_context.h"

namespace az::ipc {

struct EventSubscriber::State {
  SubscriberOptions options;
  std::shared_ptr<zmq::context_t> context;
  zmq::socket_t socket;
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
};

Result<EventSubscriber> EventSubscriber::Create(SubscriberOptions options) {
  if (options.endpoints.empty()) return InvalidArgument("an event subscriber needs an endpoint");
  for (const std::string& topic : options.topics) AZ_RETURN_IF_ERROR(ValidateTopic(topic));
  auto state = std::make_unique<State>();
  state->context = SharedContext();
  try {
    state->socket = zmq::socket_t(*state->context, zmq::socket_type::sub);
    state->socket.set(zmq::sockopt::linger, 0);
    if (options.topics.empty()) {
      state->socket.set(zmq::sockopt::subscribe, "");
    } else {
      // Prefix filters in ZeroMQ; Next keeps exact matches only.
      for (const std::string& topic : options.topics) {
        state->socket.set(zmq::sockopt::subscribe, topic);
      }
    }
    for (const std::string& endpoint : options.endpoints) state->socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    return InvalidArgument(std::string("setting up the event subscriber: ") + e.what());
  }
  state->options = std::move(options);
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
      zmq::pollitem_t items[] = {{s.socket.handle(), 0, ZMQ_POLLIN, 0}};
      if (zmq::poll(items, 1, std::max(remaining, std::chrono::milliseconds(0))) == 0) {
        return DeadlineExceeded("no event within " + std::to_string(timeout.count()) + " ms");
      }
      while (true) {
        zmq::message_t part;
        if (!s.socket.recv(part, zmq::recv_flags::dontwait)) break;
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
