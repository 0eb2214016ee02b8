#pragma once

// The messages of the control protocol (docs/protocol.md). On the wire, after the ZeroMQ routing
// envelope (the client's identity and an empty delimiter frame):
//
//   request  [JSON {"cmd": "sample", "id": 7, ...args}] [binary frame]*
//   reply    [JSON {"ok": true, "id": 7, ...fields}]   [binary frame]*
//            [JSON {"ok": false, "id": 7, "error": {"code": "INVALID_ARGUMENT", "message": "..."}}]
//
// Binary frames carry arrays as raw bytes; their meaning (dtype, shape) is stated by the command's
// JSON fields. They are zmq::message_t end to end, moved and never re-serialised, so a handler can
// fill a reply frame in place (zmq::message_t frame(bytes); write into frame.data()) or hand over a
// buffer it owns with a free function, and the bytes are copied only by the kernel.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zmq.hpp>

#include "core/base/status.h"

namespace az::ipc {

inline constexpr int kProtocolVersion = 1;

// What a handler receives. `args` is the whole request object, "cmd" and "id" included; `frames`
// are the binary frames that followed it, which the handler may move out.
struct Request {
  std::string cmd;
  nlohmann::json args;
  std::vector<zmq::message_t> frames;
};

// A handler returns the fields to add to {"ok": true, "id": ...} (an object; any other JSON value
// is sent as {"result": value}) and the binary frames to send after it. The client's Call returns
// the whole reply object in `body` ("ok" and "id" included) and the frames.
struct Reply {
  nlohmann::json body = nlohmann::json::object();
  std::vector<zmq::message_t> frames;
};

// "INVALID_ARGUMENT" -> StatusCode::kInvalidArgument, the inverse of StatusCodeName; nullopt for a
// name this build does not know.
std::optional<StatusCode> StatusCodeFromName(std::string_view name);

// {"code": "NOT_FOUND", "message": "..."} for a non-OK status.
nlohmann::json ErrorJson(const Status& status);

// The status a reply object carries: OK for {"ok": true}; the error's code and message for
// {"ok": false, ...}; DATA_LOSS when the object is not a well-formed reply.
Status ReplyStatus(const nlohmann::json& body);

// The deepest JSON nesting a control request may have; deeper text is refused before parsing.
inline constexpr int kMaxJsonDepth = 64;

// A control request's JSON frame, parsed: the object and its "cmd".
struct ParsedRequest {
  nlohmann::json args;
  std::string cmd;
};

// Parses a request frame as the control server does. INVALID_ARGUMENT (saying why) for text that
// is not JSON, nested deeper than kMaxJsonDepth (checked without parsing, so a hostile "[[[[..."
// never reaches recursive code), not an object, or without a string "cmd". `*id` gets the object's
// "id" whenever it has one, errors included, so that an error reply can carry it. Never throws.
Result<ParsedRequest> ParseRequestJson(std::string_view text, nlohmann::json* id);

// Total bytes of a list of frames.
size_t FramesBytes(const std::vector<zmq::message_t>& frames);

// A copy of `data` as a frame.
zmq::message_t MakeFrame(const void* data, size_t size);

}  // namespace az::ipc
