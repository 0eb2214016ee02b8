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

}  // namespace az

#define AZ_LOG(level)                                           \
  if (::az::LogLevel::level < ::az::GetLogLevel()) {            \
  } else                                                        \
    ::az::LogLine(::az::LogLevel::level)
