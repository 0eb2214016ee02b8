#include "core/base/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace az {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::mutex g_component_mutex;
std::string g_component = "az";

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARN";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}

}  // namespace

void SetLogComponent(std::string_view component) {
  std::lock_guard lock(g_component_mutex);
  g_component = component;
}
void SetLogLevel(LogLevel level) { g_level.store(level, std::memory_order_relaxed); }
LogLevel GetLogLevel() { return g_level.load(std::memory_order_relaxed); }

LogLine::~LogLine() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  std::string component;
  {
    std::lock_guard lock(g_component_mutex);
    component = g_component;
  }
  char prefix[96];
  std::snprintf(prefix, sizeof prefix, "%s.%03dZ %-5s %s: ", stamp, static_cast<int>(millis),
                LevelName(level_), component.c_str());
  std::string line = prefix + stream_.str() + "\n";
  // One write() per line so lines from several processes never interleave mid-line.
  [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace az
