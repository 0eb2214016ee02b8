#pragma once

// A child process with its stdin and stdout on pipes, spoken to line by line: how az-match runs a
// UCI engine. The child's stderr is az-match's own, so an engine's diagnostics stay visible.
//
// Contracts: Start spawns the program found on PATH (or at the path given) and never throws;
// WriteLine fails (Unavailable) once the child has gone, without SIGPIPE killing the caller;
// ReadLine waits at most until its deadline (DeadlineExceeded) and reports the end of the child's
// output (Unavailable). The destructor closes stdin (a UCI engine reads that as quit), waits a
// moment, then kills the child with SIGKILL and reaps it: no zombie, no orphan.
// Not thread-safe: one owner.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace az::match {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Stop(std::chrono::milliseconds(500)); }

  // Spawns argv[0] (looked up on PATH when it has no '/') with argv, in `working_dir` when not
  // empty. NotFound when the program cannot be started.
  Status Start(const std::vector<std::string>& argv, const std::string& working_dir = "");
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  Status WriteLine(const std::string& line);
  // The next line of the child's output, without its newline (a trailing '\r' removed too).
  Result<std::string> ReadLine(Clock::time_point deadline);

  // Closes stdin, waits up to `grace` for the child to exit, then kills it. Idempotent.
  void Stop(std::chrono::milliseconds grace);

 private:
  pid_t pid_ = -1;
  int input_ = -1;
  int output_ = -1;
  std::string pending_;
  bool output_closed_ = false;
};

}  // namespace az::match
