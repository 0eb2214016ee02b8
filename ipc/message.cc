#include "ipc/message.h"

#include <algorithm>
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
                                        StatusCode::kInternal,
                                        StatusCode::kAborted,
                                        StatusCode::kPermissionDenied};
  for (StatusCode code : kCodes) {
    if (StatusCodeName(code) == name) return code;
  }
  return std::nullopt;
}

namespace {

// Nesting depth of a JSON text, counted without parsing.
int JsonDepth(std::string_view text) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

}  // namespace

Result<ParsedRequest> ParseRequestJson(std::string_view text, nlohmann::json* id) {
  if (JsonDepth(text) > kMaxJsonDepth) {
    return InvalidArgument("request JSON is nested deeper than " + std::to_string(kMaxJsonDepth));
  }
  ParsedRequest request;
  request.args = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (request.args.is_discarded()) return InvalidArgument("request is not valid JSON");
  if (!request.args.is_object()) {
    return InvalidArgument(std::string("request must be a JSON object, got ") +
                           request.args.type_name());
  }
  if (auto it = request.args.find("id"); it != request.args.end()) *id = *it;
  auto cmd = request.args.find("cmd");
  if (cmd == request.args.end()) return InvalidArgument("request has no \"cmd\"");
  if (!cmd->is_string()) {
    return InvalidArgument(std::string("\"cmd\" must be a string, got ") + cmd->type_name());
  }
  request.cmd = cmd->get<std::string>();
  return request;
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
