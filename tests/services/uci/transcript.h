#pragma once

// What an engine printed, line by line, safe to fill from one thread (the engine's sink, or a
// pipe reader) while a test waits on it from another.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace az::uci::testing {

class Transcript {
 public:
  void Add(std::string_view line) {
    {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(line);
    }
    changed_.notify_all();
  }

  // Waits until a line at index >= `from` starts with `prefix`; its index, or nullopt after
  // `limit`.
  std::optional<std::size_t> WaitFor(std::string_view prefix, std::chrono::milliseconds limit,
                                     std::size_t from = 0) {
    std::unique_lock lock(mutex_);
    std::optional<std::size_t> found;
    changed_.wait_for(lock, limit, [&] {
      for (std::size_t i = from; i < lines_.size(); ++i) {
        if (std::string_view(lines_[i]).starts_with(prefix)) {
          found = i;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  std::vector<std::string> Lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return lines_.size();
  }
  // Lines at index >= `from` starting with `prefix`.
  std::vector<std::string> Matching(std::string_view prefix, std::size_t from = 0) const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> matching;
    for (std::size_t i = from; i < lines_.size(); ++i) {
      if (std::string_view(lines_[i]).starts_with(prefix)) matching.push_back(lines_[i]);
    }
    return matching;
  }
  // Everything, one line per line, for failure messages.
  std::string Text() const {
    std::lock_guard lock(mutex_);
    std::string text;
    for (const std::string& line : lines_) text += line + "\n";
    return text;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> lines_;
};

}  // namespace az::uci::testing
