#pragma once

// Pipeline-wide events: small JSON notices a service publishes for every other service, such as
// "model 12 published at PATH with checksum C". Each event carries its publisher, a topic, a
// sequence number that grows with every event of that publisher (and survives its restarts through
// the last-value file) and the publisher's incarnation (a fresh id per process start), so a
// subscriber can drop an event it has already seen. Delivery is at-least-once for the latest event
// of each topic (see event_publisher.h); consumers act idempotently (e.g. load a model only if its
// version is newer than the one they run).
//
// On the wire (PUB/SUB): [topic] [JSON {"topic", "seq", "publisher", "incarnation",
// "time_unix_ms", "data"}].

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::ipc {

struct Event {
  std::string topic;
  std::uint64_t seq = 0;
  std::string publisher;    // the publishing service's name
  std::string incarnation;  // unique per start of the publishing process
  std::int64_t time_unix_ms = 0;
  nlohmann::json data = nlohmann::json::object();
};

nlohmann::json EventToJson(const Event& event);
// DATA_LOSS when the JSON is not an event (missing or mistyped fields).
Result<Event> EventFromJson(const nlohmann::json& json);

// A topic is 1 to 64 characters of [a-z0-9_.-]. INVALID_ARGUMENT otherwise.
Status ValidateTopic(std::string_view topic);

// The first event of the pipeline: the learner published model `version`, a weights file at `path`
// whose checksum is `checksum` (as the weights format states it, e.g. "crc32c:1a2b3c4d").
inline constexpr std::string_view kModelTopic = "model";

struct ModelPublished {
  std::int64_t version = 0;
  std::string path;
  std::string checksum;
};

nlohmann::json ModelPublishedToJson(const ModelPublished& model);
// INVALID_ARGUMENT when the event's topic is not "model"; DATA_LOSS when its data lacks the fields.
Result<ModelPublished> ModelPublishedFromEvent(const Event& event);

}  // namespace az::ipc
