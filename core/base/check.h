#pragma once

// Always-on invariant checks: a broken invariant is a bug, and the process stops with a message that
// says where and why rather than carrying on with corrupt state. Not for bad input from outside: that
// is a Status (core/base/status.h).

#include <string_view>

namespace az::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              std::string_view message);
inline std::string_view CheckMessage() { return {}; }
inline std::string_view CheckMessage(std::string_view message) { return message; }
}  // namespace az::internal

#define AZ_CHECK(condition, ...)                                                     \
  do {                                                                               \
    if (!(condition)) [[unlikely]]                                                   \
      ::az::internal::CheckFailed(__FILE__, __LINE__, #condition,                      \
                                    ::az::internal::CheckMessage(__VA_ARGS__));      \
  } while (0)
