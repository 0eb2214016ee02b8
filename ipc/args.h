#pragma once

// Typed access to request arguments and binary frames for handlers. Every failure is an
// INVALID_ARGUMENT whose message names the field and what was wrong, so the client sees e.g.
// "\"batch\" must be an integer in [1, 4096], got \"eight\"".

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <zmq.hpp>

#include "core/base/status.h"

namespace az::ipc {

namespace internal {

template <typename T>
Result<T> ConvertArg(const nlohmann::json& value, std::string_view key) {
  auto wrong = [&](std::string_view expected) {
    return InvalidArgument("\"" + std::string(key) + "\" must be " + std::string(expected) +
                           ", got " + value.dump());
  };
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    return value;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) return wrong("a boolean");
    return value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!value.is_number_integer()) return wrong("an integer");
    if (value.is_number_unsigned()) {
      const auto v = value.get<std::uint64_t>();
      if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        return wrong("an integer in range");
      }
      return static_cast<T>(v);
    }
    const auto v = value.get<std::int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (v < 0) return wrong("a non-negative integer");
      if (static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max()) {
        return wrong("an integer in range");
      }
    } else {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        return wrong("an integer in range");
      }
    }
    return static_cast<T>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!value.is_number()) return wrong("a number");
    return value.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) return wrong("a string");
    return value.get<std::string>();
  } else {
    static_assert(sizeof(T) == 0,
                  "GetArg supports bool, integers, floating point, std::string, json");
  }
}

}  // namespace internal

// The required argument `key` as a T (bool, an integer type, a floating type, std::string or
// nlohmann::json). INVALID_ARGUMENT when missing, of another JSON type, or out of T's range.
template <typename T>
Result<T> GetArg(const nlohmann::json& args, std::string_view key) {
  auto it = args.find(key);
  if (it == args.end()) return InvalidArgument("missing argument \"" + std::string(key) + "\"");
  return internal::ConvertArg<T>(*it, key);
}

// The optional argument `key`: `fallback` when missing (or null), else as the required form.
template <typename T>
Result<T> GetArg(const nlohmann::json& args, std::string_view key, T fallback) {
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) return fallback;
  return internal::ConvertArg<T>(*it, key);
}

// An integer argument that must lie in [lo, hi].
template <typename T>
Result<T> GetIntArg(const nlohmann::json& args, std::string_view key, T lo, T hi) {
  AZ_ASSIGN_OR_RETURN(T value, GetArg<T>(args, key));
  if (value < lo || value > hi) {
    return InvalidArgument("\"" + std::string(key) + "\" must be an integer in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                           std::to_string(value));
  }
  return value;
}

// The bytes of `frame` viewed as an array of T, without copying. INVALID_ARGUMENT when the size is
// not a multiple of sizeof(T) or the data is not aligned for T (ZeroMQ allocates frames longer than
// 33 bytes with malloc, so they are aligned for any scalar). The span lives as long as the frame.
template <typename T>
Result<std::span<const T>> FrameAs(const zmq::message_t& frame, std::string_view what) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (frame.size() % sizeof(T) != 0) {
    return InvalidArgument(std::string(what) + ": frame of " + std::to_string(frame.size()) +
                           " bytes is not a whole number of " + std::to_string(sizeof(T)) +
                           "-byte elements");
  }
  if (reinterpret_cast<std::uintptr_t>(frame.data()) % alignof(T) != 0) {
    return InvalidArgument(std::string(what) + ": frame data is not aligned for its element type");
  }
  return std::span<const T>(static_cast<const T*>(frame.data()), frame.size() / sizeof(T));
}

}  // namespace az::ipc
