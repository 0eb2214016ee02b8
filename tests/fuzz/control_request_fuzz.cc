// libFuzzer target: the control protocol's request parser (ipc/message.h ParseRequestJson, what
// every service's control server runs on each request frame from a socket) and the client's reply
// reading (ReplyStatus). Any bytes give an error or a request with a string command; nothing
// throws, crashes or recurses without bound.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/base/check.h"
#include "ipc/message.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json id;
  const az::Result<az::ipc::ParsedRequest> request = az::ipc::ParseRequestJson(text, &id);
  if (request.ok()) {
    AZ_CHECK(request->args.is_object() && request->args.contains("cmd"), "parsed without a cmd");
  } else {
    AZ_CHECK(request.status().code() == az::StatusCode::kInvalidArgument, "unexpected code");
  }
  // The same bytes as a reply (what azctl and the services' clients read), when they are JSON
  // nested no deeper than a request may be.
  if (request.ok() || request.status().message().find("nested deeper") == std::string_view::npos) {
    const nlohmann::json reply = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!reply.is_discarded()) (void)az::ipc::ReplyStatus(reply);
  }
  return 0;
}
