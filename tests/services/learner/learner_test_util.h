#pragma once

// Helpers for the learner's black-box tests: the real az-learner binary as a child process, and a
// metrics scrape. (Needs AZ_LEARNER_BINARY and AZ_REPLAY_BINARY.)

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "ipc/client.h"
#include "tests/ipc/test_util.h"
#include "tests/services/http_get.h"
#include "tests/services/learner/connect_four_samples.h"
#include "tests/services/replay/replay_test_util.h"

namespace az::learner::testing {

using ipc::testing::ChildProcess;
using ipc::testing::Scrape;
using ipc::testing::TempDir;
using ipc::testing::WaitFor;
using replayd::testing::ReadFile;

// The real az-learner binary as a child process; its log goes to <run-dir>/learner-<n>.log.
class Learner {
 public:
  Learner(const std::string& run_dir, const std::vector<std::string>& args) : run_dir_(run_dir) {
    static std::atomic<int> counter{0};
    log_ = run_dir + "/learner-" + std::to_string(counter++) + ".log";
    std::vector<std::string> argv = {AZ_LEARNER_BINARY, "--run-dir", run_dir};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<ChildProcess>(argv, log_, log_);
  }

  // A client of its control socket.
  ipc::Client Control(std::chrono::milliseconds timeout = std::chrono::seconds(10)) const {
    Result<ipc::Client> client =
        ipc::Client::Create({.endpoint = "ipc://" + run_dir_ + "/learner.ctl",
                             .attempt_timeout = timeout,
                             .max_attempts = 1});
    AZ_CHECK(client.ok(), client.status().ToString());
    return std::move(client).value();
  }

  // The `status` reply, or an empty object when it does not answer.
  nlohmann::json Status() const {
    ipc::Client client = Control(std::chrono::milliseconds(2000));
    Result<ipc::Reply> reply = client.Call("status");
    return reply.ok() ? reply->body : nlohmann::json::object();
  }

  // Waits until `condition(status)` holds (true), or the process exits or time runs out (false).
  bool WaitForStatus(const std::function<bool(const nlohmann::json&)>& condition,
                     std::chrono::seconds limit = std::chrono::seconds(90)) {
    return WaitFor(
               [&] {
                 if (process_->Exited()) return true;
                 const nlohmann::json status = Status();
                 return !status.empty() && condition(status);
               },
               limit) &&
           !process_->Exited();
  }

  // Waits for it to exit on its own (--max-steps); its exit code, or -1 after `limit`.
  int WaitExit(std::chrono::seconds limit = std::chrono::seconds(120)) {
    if (!WaitFor([&] { return process_->Exited(); }, limit)) return -1;
    return process_->Wait();
  }
  int Terminate() {
    process_->Signal(SIGTERM);
    return process_->Wait();
  }
  ChildProcess& process() { return *process_; }
  std::string LogText() const { return ReadFile(log_); }

 private:
  std::string run_dir_;
  std::string log_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace az::learner::testing
