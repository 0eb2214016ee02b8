#pragma once

// Status and Result<T>: how a function that can fail for reasons outside the program (a file, a
// peer, input) says why. No exceptions cross a library boundary; third-party exceptions are caught in
// the one wrapper around that library and turned into a Status there.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "core/base/check.h"

namespace az {

enum class StatusCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument,    // the caller's input is malformed or out of range
  kNotFound,           // a file, segment or key does not exist
  kAlreadyExists,      // creating something that is already there
  kFailedPrecondition, // the system is not in a state to do this (e.g. a mismatched header)
  kDataLoss,           // a corrupt or truncated file or record
  kDeadlineExceeded,   // a blocking call ran out of time
  kUnavailable,        // a peer is down or unreachable; retrying may help
  kResourceExhausted,  // full buffer, too large a message
  kCancelled,          // stopped because the caller asked (shutdown)
  kInternal,           // an invariant broke in a way the caller cannot fix
  kAborted,            // another live process holds it (a file lock); retrying once it is gone may help
  kPermissionDenied,   // the peer refused our credentials, or we refused its (CURVE keys)
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: rank 9 has 9 squares", or "OK".
  std::string ToString() const;

  // Prefixes context to the message, keeping the code: "opening store x: <message>".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value or a non-OK Status. Accessing the value of an error is a bug and stops the process.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    AZ_CHECK(!std::get<Status>(data_).ok(), "a Result cannot hold an OK status without a value");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }

  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->Checked(); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->Checked(); }

 private:
  T& Checked() {
    AZ_CHECK(ok(), "value() of an error Result: " + std::get<Status>(data_).ToString());
    return std::get<T>(data_);
  }
  std::variant<T, Status> data_;
};

}  // namespace az

// Returns early from the enclosing function with the status of `expr` when it is not OK.
#define AZ_RETURN_IF_ERROR(expr)                   \
  do {                                             \
    ::az::Status az_status_tmp_ = (expr);          \
    if (!az_status_tmp_.ok()) return az_status_tmp_; \
  } while (0)

#define AZ_CONCAT_INNER_(a, b) a##b
#define AZ_CONCAT_(a, b) AZ_CONCAT_INNER_(a, b)
// AZ_ASSIGN_OR_RETURN(auto x, MaybeX()); declares x from the value, or returns the error.
#define AZ_ASSIGN_OR_RETURN(lhs, expr) \
  AZ_ASSIGN_OR_RETURN_IMPL_(AZ_CONCAT_(az_result_tmp_, __LINE__), lhs, expr)
#define AZ_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
