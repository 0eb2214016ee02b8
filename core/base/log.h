#pragma once

// A small line logger for services and tools: every line goes to stderr in one write, prefixed with
// UTC time, level and the process's component name, so interleaved output from several processes and
// threads stays readable under supervisord and journald.
//
//   AZ_LOG(kInfo) << "replay store opened: " << size << " records";

#include <sstream>
#include <string_view>

namespace az {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Sets the name printed on every line (e.g. "az-replay") and the lowest level printed.
void SetLogComponent(std::string_view component);
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  ~LogLine();

  template <typename T>
  LogLine& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

namespace internal {
// Turns the streamed LogLine into void, so that AZ_LOG is one expression (a conditional), not a
// hidden if/else that makes gcc warn (-Wdangling-else) on every unbraced `if (x) AZ_LOG(...)`.
// `&` binds looser than `<<`, so the whole line is streamed first.
struct LogVoidify {
  void operator&(const LogLine&) const {}
};
}  // namespace internal

}  // namespace az

// Streams one line at `level` (kDebug, kInfo, kWarning, kError); the arguments are not evaluated
// when the level is below the current one.
#define AZ_LOG(level)                                  \
  (::az::LogLevel::level < ::az::GetLogLevel())        \
      ? (void)0                                        \
      : ::az::internal::LogVoidify() & ::az::LogLine(::az::LogLevel::level)
