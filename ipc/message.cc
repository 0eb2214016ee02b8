#include "ipc/message.h"

#include <array>

namespace az::ipc {

std::optional<StatusCode> StatusCodeFromName(std::string_view name) {
  static constexpr std::array kCodes = {StatusCode::kOk,
                                        StatusCode::kInvalidArgument,
                                        StatusCode::kNotFound,
                                        StatusCode::kAlreadyExists,
                                        StatusCode::kFailedPrecondition,
                                        StatusCode::kDataLoss,
                                        StatusCode::kDeadlineExceeded,
                                        StatusCode::kUnavailable,
                                        StatusCode::kResourceExhausted,
                                        StatusCode::kCancelled,
                                        StatusCode::kInternal};
  for (StatusCode code : kCodes) {
    if (StatusCodeName(code) == name) return code;
  }
  return std::nullopt;
}

nlohmann::json ErrorJson(const Status& status) {
  return {{"code", StatusCodeName(status.code())}, {"message", status.message()}};
}

Status ReplyStatus(const nlohmann::json& body) {
  if (!body.is_object()) return DataLoss("reply is not a JSON object");
  auto ok = body.find("ok");
  if (ok == body.end() || !ok->is_boolean()) return DataLoss("reply without a boolean \"ok\"");
  if (ok->get<bool>()) return Status::Ok();
  auto error = body.find("error");
  if (error == body.end() || !error->is_object()) return DataLoss("error reply without \"error\"");
  std::string code_name = error->value("code", std::string());
  std::string message = error->value("message", std::string());
  std::optional<StatusCode> code = StatusCodeFromName(code_name);
  if (!code || *code == StatusCode::kOk) {
    // A newer peer may know codes this build does not; keep its name in the message.
    return Internal(code_name + ": " + message);
  }
  return {*code, std::move(message)};
}

size_t FramesBytes(const std::vector<zmq::message_t>& frames) {
  size_t total = 0;
  for (const zmq::message_t& frame : frames) total += frame.size();
  return total;
}

zmq::message_t MakeFrame(const void* data, size_t size) { return zmq::message_t(data, size); }

}  // namespace az::ipc
