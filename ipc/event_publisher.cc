#include "ipc/event_publisher.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "core/base/log.h"
#include "ipc/endpoint.h"
#include "ipc/file_util.h"
#include "ipc/zmq_context.h"

namespace az::ipc {
namespace {

constexpr std::string_view kEventsFileKind = "az-events";
constexpr int kEventsFileVersion = 1;

std::string NewIncarnation() {
  std::random_device device;
  std::uint64_t bits = (std::uint64_t{device()} << 32) ^ device();
  char text[40];
  std::snprintf(text, sizeof text, "%d-%016llx", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(bits));
  return text;
}

std::int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<std::unique_ptr<EventPublisher>> EventPublisher::Create(PublisherOptions options) {
  AZ_RETURN_IF_ERROR(ValidateServiceName(options.service));
  if (options.run_dir.empty() && (options.endpoint.empty() || options.persist)) {
    return InvalidArgument("event publisher '" + options.service +
                           "' needs a run directory (or an endpoint and persist = false)");
  }
  if (!options.run_dir.empty()) {
    AZ_ASSIGN_OR_RETURN(options.run_dir, NormalizeRunDir(options.run_dir));
  }
  std::string endpoint = options.endpoint;
  if (endpoint.empty()) {
    AZ_ASSIGN_OR_RETURN(endpoint, EventsEndpoint(options.run_dir, options.service));
  }
  if (IpcEndpointInUse(endpoint)) {
    return AlreadyExists("another process publishes on " + endpoint);
  }
  AZ_ASSIGN_OR_RETURN(std::optional<BindingCurve> curve,
                      CurveForBinding(endpoint, options.curve, options.run_dir,
                                      "event publisher '" + options.service + "' on " + endpoint,
                                      "PublisherOptions::curve"));
  AZ_ASSIGN_OR_RETURN(Waker waker, Waker::Create());
  std::shared_ptr<zmq::context_t> context = SharedContext();
  zmq::socket_t socket;
  std::string bound;
  try {
    socket = zmq::socket_t(*context, zmq::socket_type::xpub);
    if (curve) ApplyCurveServer(socket, curve->keys, curve->zap.domain());
    // Pass every subscription up, repeated ones included: each is a subscriber to welcome.
    socket.set(zmq::sockopt::xpub_verbose, true);
    socket.set(zmq::sockopt::linger, 500);
    socket.bind(endpoint);
    bound = socket.get(zmq::sockopt::last_endpoint);
  } catch (const zmq::error_t& e) {
    return Unavailable("binding the events endpoint " + endpoint + ": " + e.what());
  }
  std::unique_ptr<EventPublisher> publisher(
      new EventPublisher(std::move(options), std::move(context), std::move(socket),
                         std::move(waker), std::move(bound)));
  if (curve) publisher->zap_ = std::move(curve->zap);

  if (publisher->options_.persist) {
    const std::string path = publisher->PersistPath();
    Result<std::string> text = ReadSmallFile(path);
    if (text.ok()) {
      nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
      bool loaded = false;
      if (json.is_object() && json.value("kind", "") == kEventsFileKind &&
          json.value("version", 0) == kEventsFileVersion && json.contains("latest") &&
          json["latest"].is_object()) {
        loaded = true;
        publisher->last_seq_ = json.value("last_seq", std::uint64_t{0});
        for (const auto& [topic, value] : json["latest"].items()) {
          Result<Event> event = EventFromJson(value);
          if (!event.ok()) {
            loaded = false;
            break;
          }
          publisher->latest_[topic] = std::move(event).value();
        }
      }
      if (!loaded) {
        publisher->last_seq_ = 0;
        publisher->latest_.clear();
        AZ_LOG(kWarning) << "ignoring the unreadable last-value file " << path;
      }
    } else if (text.status().code() != StatusCode::kNotFound) {
      AZ_LOG(kWarning) << "ignoring the last-value file: " << text.status().ToString();
    }
  }
  publisher->thread_ = std::thread([p = publisher.get()] { p->Loop(); });
  AZ_LOG(kInfo) << "event publisher '" << publisher->options_.service << "' on "
                << publisher->endpoint_;
  return publisher;
}

EventPublisher::EventPublisher(PublisherOptions options, std::shared_ptr<zmq::context_t> context,
                               zmq::socket_t socket, Waker waker, std::string endpoint)
    : options_(std::move(options)),
      context_(std::move(context)),
      socket_(std::move(socket)),
      waker_(std::move(waker)),
      endpoint_(std::move(endpoint)),
      incarnation_(NewIncarnation()) {}

EventPublisher::~EventPublisher() {
  stop_.store(true, std::memory_order_release);
  waker_.Wake();
  if (thread_.joinable()) thread_.join();
  socket_.close();
  if (!WaitForIpcEndpointRelease(endpoint_, std::chrono::seconds(2))) {
    AZ_LOG(kWarning) << "events endpoint " << endpoint_ << " still busy after close";
  }
}

std::string EventPublisher::PersistPath() const {
  return options_.run_dir + "/" + options_.service + ".events.json";
}

Status EventPublisher::Persist() const {
  nlohmann::json latest = nlohmann::json::object();
  for (const auto& [topic, event] : latest_) latest[topic] = EventToJson(event);
  nlohmann::json file = {{"kind", kEventsFileKind},
                         {"version", kEventsFileVersion},
                         {"publisher", options_.service},
                         {"last_seq", last_seq_},
                         {"latest", std::move(latest)}};
  return WriteFileAtomically(PersistPath(), file.dump(2) + "\n");
}

Result<Event> EventPublisher::Publish(std::string_view topic, nlohmann::json data) {
  AZ_RETURN_IF_ERROR(ValidateTopic(topic));
  Event event;
  event.topic = std::string(topic);
  event.publisher = options_.service;
  event.incarnation = incarnation_;
  event.time_unix_ms = UnixMillis();
  event.data = std::move(data);
  {
    std::lock_guard lock(mutex_);
    event.seq = last_seq_ + 1;
    auto previous = latest_.find(topic);
    std::optional<Event> old;
    if (previous != latest_.end()) old = previous->second;
    latest_[event.topic] = event;
    ++last_seq_;
    if (options_.persist) {
      Status status = Persist();
      if (!status.ok()) {
        // Undo, so that what is cached matches what is on disk and what was sent.
        --last_seq_;
        if (old) {
          latest_[event.topic] = std::move(*old);
        } else {
          latest_.erase(event.topic);
        }
        return status.WithContext("persisting event '" + event.topic + "'");
      }
    }
    outbox_.push_back(event);
  }
  waker_.Wake();
  return event;
}

std::optional<Event> EventPublisher::Latest(std::string_view topic) const {
  std::lock_guard lock(mutex_);
  auto it = latest_.find(topic);
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

void EventPublisher::Send(const Event& event) {
  const std::string text =
      EventToJson(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  try {
    socket_.send(zmq::buffer(event.topic), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(text), zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    AZ_LOG(kWarning) << "sending event '" << event.topic << "': " << e.what();
  }
}

void EventPublisher::FlushOutbox() {
  // With mutex_ held: events leave in the order Publish accepted them.
  for (const Event& event : outbox_) Send(event);
  outbox_.clear();
}

void EventPublisher::Loop() {
  zmq::pollitem_t items[] = {{socket_.handle(), 0, ZMQ_POLLIN, 0},
                             {nullptr, waker_.fd(), ZMQ_POLLIN, 0}};
  while (true) {
    {
      std::lock_guard lock(mutex_);
      FlushOutbox();
    }
    // After the flush: nothing Publish accepted is lost at shutdown.
    if (stop_.load(std::memory_order_acquire)) return;

    try {
      zmq::poll(items, 2, std::chrono::milliseconds(-1));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      AZ_LOG(kError) << "event publisher stopped: " << e.what();
      return;
    }
    if (items[1].revents & ZMQ_POLLIN) waker_.Drain();
    if (!(items[0].revents & ZMQ_POLLIN)) continue;
    // Subscription messages: 0x01 + prefix subscribes, 0x00 + prefix unsubscribes.
    while (true) {
      zmq::message_t message;
      try {
        if (!socket_.recv(message, zmq::recv_flags::dontwait)) break;
      } catch (const zmq::error_t& e) {
        if (e.num() == EINTR) continue;
        AZ_LOG(kError) << "event publisher stopped: " << e.what();
        return;
      }
      const std::string_view text = message.to_string_view();
      if (text.empty() || text[0] != 1) continue;
      const std::string_view prefix = text.substr(1);
      // Under the lock, queued events go out before the welcome: a subscriber never receives the
      // latest event before an older one, which its duplicate filter would then drop.
      std::lock_guard lock(mutex_);
      FlushOutbox();
      for (const auto& [topic, event] : latest_) {
        if (std::string_view(topic).starts_with(prefix)) Send(event);
      }
    }
  }
}

}  // namespace az::ipc
