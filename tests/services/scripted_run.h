#pragma once

// scripts/run as a user starts it, for the end-to-end tests (tests/services/pipeline,
// tests/dashboards): this build's binaries (AZ_BUILD_DIR, --no-build), a run directory of the
// test's own, the script's output in a file next to it. Whatever the test does, nothing of the run
// outlives it: a script still running when the test ends (an assertion failed) is stopped as a
// user would (SIGTERM, so that its trap stops supervisord and the services), anything left after
// that is killed, and the run's shared-memory segments are removed.

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/check.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "shm/scope.h"
#include "shm/segment.h"
#include "tests/ipc/test_util.h"

namespace az::ipc::testing {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ScriptedRun {
 public:
  // Starts `scripts/run --no-build --run-dir <run_dir> <args...>`; its output goes to
  // <run_dir>.out.
  ScriptedRun(std::string run_dir, const std::vector<std::string>& args)
      : run_dir_(std::move(run_dir)), output_(run_dir_ + ".out") {
    AZ_CHECK(::setenv("AZ_BUILD_DIR", AZ_BINARY_DIR, 1) == 0);
    std::vector<std::string> argv = {"/bin/bash", std::string(AZ_SOURCE_DIR) + "/scripts/run",
                                     "--no-build", "--run-dir", run_dir_};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<ChildProcess>(argv, output_, output_);
  }
  ScriptedRun(const ScriptedRun&) = delete;
  ScriptedRun& operator=(const ScriptedRun&) = delete;
  ~ScriptedRun() {
    if (!process_->Exited()) (void)Stop(std::chrono::seconds(120));
    // The run directory and, with --hosts, each simulated self-play host's (RUN_DIR/hosts/host-N).
    std::vector<std::string> dirs = {run_dir_};
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(run_dir_ + "/hosts", error)) {
      dirs.push_back(entry.path().string());
    }
    for (const std::string& dir : dirs) {
      KillLeftovers(dir);
      if (Result<std::string> prefix = RunShmPrefix(dir); prefix.ok()) {
        if (Result<shm::Scope> scope = shm::Scope::Prefix(*prefix); scope.ok()) {
          (void)shm::Segment::RemoveAll(*scope);
        }
      }
    }
  }

  bool started() const { return process_->started(); }
  const std::string& run_dir() const { return run_dir_; }
  // What the script printed so far.
  std::string Output() const { return ReadWholeFile(output_); }
  // A file of the run directory, e.g. "logs/learner.log".
  std::string RunFile(const std::string& name) const {
    return ReadWholeFile(run_dir_ + "/" + name);
  }

  // Waits until the script has printed `text`.
  bool WaitForOutput(std::string_view text, std::chrono::milliseconds limit) const {
    return WaitFor([&] { return Output().find(text) != std::string::npos; }, limit);
  }

  // Waits for the script to end by itself; its exit code, or -1 when it did not within `limit`.
  int WaitExit(std::chrono::milliseconds limit) {
    if (!WaitFor([&] { return process_->Exited(); }, limit)) return -1;
    return process_->Wait();
  }

  // SIGTERM (what Ctrl-C does; SIGINT may be ignored when ctest runs in the background), then
  // waits for the script to stop the services, measure and exit. Its exit code; -1 when it did not
  // exit within `limit` (it is killed then).
  int Stop(std::chrono::milliseconds limit) {
    process_->Signal(SIGTERM);
    if (!WaitFor([&] { return process_->Exited(); }, limit)) {
      process_->Kill();
      return -1;
    }
    return process_->Wait();
  }

 private:
  // A script killed before its trap ran leaves supervisord (in its own session) and the services:
  // supervisord is asked to stop them, then whatever still lives is killed.
  static void KillLeftovers(const std::string& run_dir) {
    const std::string pid_text = ReadWholeFile(run_dir + "/supervisord.pid");
    const std::int64_t supervisord = pid_text.empty() ? 0 : std::stoll(pid_text);
    if (supervisord > 0 && ProcessAlive(supervisord)) {
      ::kill(static_cast<pid_t>(supervisord), SIGTERM);
      if (!WaitFor([&] { return !ProcessAlive(supervisord); }, std::chrono::seconds(30))) {
        ::kill(static_cast<pid_t>(supervisord), SIGKILL);
      }
    }
    if (Result<std::vector<ServiceInfo>> services = ListServices(run_dir); services.ok()) {
      for (const ServiceInfo& info : *services) {
        if (ProcessAlive(info.pid)) ::kill(static_cast<pid_t>(info.pid), SIGKILL);
      }
    }
  }

  std::string run_dir_;
  std::string output_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace az::ipc::testing
