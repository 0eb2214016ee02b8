#pragma once

// Helpers for the black-box tests of az-replay: the real binary in a child process, a client, a
// per-test shared-memory scope that is removed afterwards.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ipc/client.h"
#include "services/replay/replay_client.h"
#include "shm/scope.h"
#include "shm/segment.h"
#include "tests/ipc/test_util.h"

namespace az::replayd::testing {

using ipc::testing::ChildProcess;
using ipc::testing::TempDir;
using ipc::testing::WaitFor;

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A shared-memory scope of its own for each test (the sample ring lives there), removed with
// everything in it at the end.
class ShmScope {
 public:
  ShmScope() {
    static std::atomic<int> counter{0};
    spec_ = "shm:azrt-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  }
  ~ShmScope() {
    if (Result<shm::Scope> scope = shm::Scope::Parse(spec_); scope.ok()) {
      (void)shm::Segment::RemoveAll(*scope);
    }
  }
  const std::string& spec() const { return spec_; }

 private:
  std::string spec_;
};

// The real az-replay binary as a child process. Its log goes to <run-dir>/replay-<n>.log.
class Daemon {
 public:
  Daemon(const std::string& run_dir, const std::vector<std::string>& args) : run_dir_(run_dir) {
    static std::atomic<int> counter{0};
    log_ = run_dir + "/replay-" + std::to_string(counter++) + ".log";
    std::vector<std::string> argv = {AZ_REPLAY_BINARY, "--run-dir", run_dir};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<ChildProcess>(argv, log_, log_);
  }

  // Waits until it answers `status` (true), or exits first or never answers (false).
  bool WaitReady(std::chrono::seconds limit = std::chrono::seconds(60)) {
    Result<ipc::Client> client =
        ipc::Client::Create({.endpoint = "ipc://" + run_dir_ + "/replay.ctl",
                             .attempt_timeout = std::chrono::milliseconds(200),
                             .max_attempts = 1});
    if (!client.ok()) return false;
    return WaitFor(
               [&] {
                 if (process_->Exited()) return true;
                 return client->Call("status").ok();
               },
               limit) &&
           !process_->Exited();
  }

  ChildProcess& process() { return *process_; }
  const std::string& log() const { return log_; }
  std::string LogText() const { return ReadFile(log_); }
  // SIGTERM, then its exit code.
  int Terminate() {
    process_->Signal(SIGTERM);
    return process_->Wait();
  }
  void Kill() { process_->Kill(); }

 private:
  std::string run_dir_;
  std::string log_;
  std::unique_ptr<ChildProcess> process_;
};

inline ReplayClient Client(const std::string& run_dir,
                           std::chrono::milliseconds timeout = std::chrono::seconds(20),
                           int attempts = 3) {
  Result<ReplayClient> client = ReplayClient::Create(
      {.run_dir = run_dir, .attempt_timeout = timeout, .max_attempts = attempts});
  AZ_CHECK(client.ok(), client.status().ToString());
  return std::move(client).value();
}

// Records of `bytes` bytes that carry their id in the first 8 bytes and a pattern derived from it
// in the rest, so a torn or mixed record is recognised.
inline std::vector<std::byte> IdRecords(std::uint64_t first_id, std::size_t count,
                                        std::size_t bytes) {
  std::vector<std::byte> out(count * bytes);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t id = first_id + i;
    std::byte* record = out.data() + i * bytes;
    std::memcpy(record, &id, sizeof id);
    for (std::size_t b = sizeof id; b < bytes; ++b) {
      record[b] = static_cast<std::byte>((id * 131 + b * 7) & 0xff);
    }
  }
  return out;
}

// The id of a record made by IdRecords, or nullopt when its pattern is broken.
inline std::optional<std::uint64_t> RecordId(std::span<const std::byte> record) {
  std::uint64_t id = 0;
  std::memcpy(&id, record.data(), sizeof id);
  for (std::size_t b = sizeof id; b < record.size(); ++b) {
    if (record[b] != static_cast<std::byte>((id * 131 + b * 7) & 0xff)) return std::nullopt;
  }
  return id;
}

}  // namespace az::replayd::testing
