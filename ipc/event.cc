#include "ipc/event.h"

namespace az::ipc {

nlohmann::json EventToJson(const Event& event) {
  return {{"topic", event.topic},
          {"seq", event.seq},
          {"publisher", event.publisher},
          {"incarnation", event.incarnation},
          {"time_unix_ms", event.time_unix_ms},
          {"data", event.data}};
}

Result<Event> EventFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return DataLoss("event is not a JSON object");
  Event event;
  try {
    event.topic = json.at("topic").get<std::string>();
    event.seq = json.at("seq").get<std::uint64_t>();
    event.publisher = json.at("publisher").get<std::string>();
    event.incarnation = json.at("incarnation").get<std::string>();
    event.time_unix_ms = json.at("time_unix_ms").get<std::int64_t>();
    event.data = json.at("data");
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(std::string("malformed event: ") + e.what());
  }
  return event;
}

Status ValidateTopic(std::string_view topic) {
  if (topic.empty() || topic.size() > 64) {
    return InvalidArgument("topic must be 1 to 64 characters, got '" + std::string(topic) + "'");
  }
  for (char c : topic) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) {
      return InvalidArgument("topic '" + std::string(topic) + "' may only hold a-z, 0-9, _ . -");
    }
  }
  return Status::Ok();
}

nlohmann::json ModelPublishedToJson(const ModelPublished& model) {
  return {{"version", model.version}, {"path", model.path}, {"checksum", model.checksum}};
}

Result<ModelPublished> ModelPublishedFromEvent(const Event& event) {
  if (event.topic != kModelTopic) {
    return InvalidArgument("event topic is '" + event.topic + "', not '" +
                           std::string(kModelTopic) + "'");
  }
  ModelPublished model;
  try {
    model.version = event.data.at("version").get<std::int64_t>();
    model.path = event.data.at("path").get<std::string>();
    model.checksum = event.data.at("checksum").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(std::string("malformed model event: ") + e.what());
  }
  return model;
}

}  // namespace az::ipc
