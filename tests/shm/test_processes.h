#pragma once

// Helpers for tests that run real processes: fork a child that runs a function and _exit()s with
// its result (never returning into the test framework), wait for it with a bound, kill it; memory
// that the parent and its children share; a unique scope per test that is removed afterwards.

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <functional>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "core/base/check.h"
#include "shm/scope.h"
#include "shm/segment.h"

namespace az::shm::testing {

struct ExitInfo {
  bool exited = false;  // normal exit (code valid); else killed by `signal`
  int code = 0;
  int signal = 0;
  rusage usage{};
};

class Child {
 public:
  // Runs `body` in a forked child, which exits with its return value.
  static Child Spawn(const std::function<int()>& body) {
    const pid_t pid = ::fork();
    AZ_CHECK(pid >= 0, "fork failed");
    if (pid == 0) ::_exit(body());
    return Child(pid);
  }

  Child(Child&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}
  Child& operator=(Child&&) = delete;
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      Wait(std::chrono::seconds(10));
    }
  }

  pid_t pid() const { return pid_; }
  void Kill(int signal = SIGKILL) const { ::kill(pid_, signal); }

  // Reaps the child; nullopt if it is still running after `timeout`.
  std::optional<ExitInfo> Wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int status = 0;
      ExitInfo info;
      const pid_t rc = ::wait4(pid_, &status, WNOHANG, &info.usage);
      if (rc == pid_) {
        pid_ = -1;
        info.exited = WIFEXITED(status);
        info.code = info.exited ? WEXITSTATUS(status) : -1;
        info.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        return info;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // Waits (bounded) and returns the exit code, or -signal, or -1000 on timeout.
  int ExitCode(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    std::optional<ExitInfo> info = Wait(timeout);
    if (!info) return -1000;
    return info->exited ? info->code : -info->signal;
  }

 private:
  explicit Child(pid_t pid) : pid_(pid) {}
  pid_t pid_;
};

// A T in anonymous shared memory, visible to children forked afterwards. T must be usable after
// value-initialisation in zeroed memory (atomics, arrays of atomics, plain integers).
template <typename T>
class Shared {
 public:
  Shared() {
    void* memory =
        ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    AZ_CHECK(memory != MAP_FAILED, "mmap of shared test memory failed");
    value_ = new (memory) T();
  }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
  ~Shared() {
    value_->~T();
    ::munmap(value_, sizeof(T));
  }
  T* operator->() const { return value_; }
  T& operator*() const { return *value_; }

 private:
  T* value_;
};

// A scope unique to this process and call, removed (with its segments) on destruction.
class TestScope {
 public:
  explicit TestScope(const std::string& tag) {
    static std::atomic<int> counter{0};
    prefix_ = "aztest-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + tag;
    Result<Scope> scope = Scope::Prefix(prefix_);
    AZ_CHECK(scope.ok(), scope.status().ToString());
    scope_.emplace(*scope);
  }
  ~TestScope() {
    if (owner_ == ::getpid()) Segment::RemoveAll(*scope_).ok();
  }
  const Scope& operator*() const { return *scope_; }
  const Scope* operator->() const { return &*scope_; }

 private:
  pid_t owner_ = ::getpid();
  std::string prefix_;
  std::optional<Scope> scope_;
};

// Polls `condition` until it holds or `timeout` passes.
template <typename F>
bool Eventually(F condition, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

}  // namespace az::shm::testing
