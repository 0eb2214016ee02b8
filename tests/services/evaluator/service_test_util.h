#pragma once

// Helpers for the black-box tests of az-evaluator and az-selfplay: a run directory whose shared
// memory is removed afterwards, the real binaries as child processes with their logs, control
// calls, tiny networks written to weights files, and eval requests built from real positions.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "core/nn/net_config.h"
#include "core/nn/network.h"
#include "ipc/client.h"
#include "ipc/endpoint.h"
#include "services/common/service_util.h"
#include "shm/segment.h"
#include "tests/ipc/test_util.h"

namespace az::service::testing {

using ipc::testing::BinaryPath;
using ipc::testing::ChildProcess;
using ipc::testing::WaitFor;

// A temporary run directory; every shared-memory segment of its scope is removed at the end.
class RunDir {
 public:
  RunDir() = default;
  ~RunDir() {
    Result<shm::Scope> scope = RunShmScope(dir_.path(), "");
    if (scope.ok()) (void)shm::Segment::RemoveAll(*scope);
  }
  const std::string& path() const { return dir_.path(); }
  std::string File(const std::string& name) const { return dir_.path() + "/" + name; }
  shm::Scope Scope() const { return *RunShmScope(dir_.path(), ""); }

 private:
  ipc::testing::TempDir dir_;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A service binary as a child process, its stdout and stderr in <run-dir>/<log_name>.log.
class Service {
 public:
  Service(const RunDir& run, const std::string& binary, const std::string& log_name,
          const std::vector<std::string>& args)
      : log_(run.File(log_name + ".log")) {
    std::vector<std::string> argv = {BinaryPath(binary)};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<ChildProcess>(argv, log_, log_);
  }
  ChildProcess& process() { return *process_; }
  std::string Log() const { return ReadFile(log_); }
  // Waits for the process to exit (up to `limit`); its exit code, or -1 if it is still running.
  int WaitExit(std::chrono::milliseconds limit = std::chrono::seconds(60)) {
    if (!WaitFor([&] { return process_->Exited(); }, limit)) return -1;
    return process_->Wait();
  }
  // SIGTERM, then the exit code.
  int Terminate() {
    process_->Signal(SIGTERM);
    return WaitExit(std::chrono::seconds(20));
  }

 private:
  std::string log_;
  std::unique_ptr<ChildProcess> process_;
};

// A control client for `service` of the run.
inline ipc::Client ControlClient(const RunDir& run, const std::string& service) {
  ipc::ClientOptions options;
  options.endpoint = *ipc::ControlEndpoint(run.path(), service);
  options.attempt_timeout = std::chrono::milliseconds(3000);
  options.max_attempts = 2;
  return std::move(ipc::Client::Create(options)).value();
}

// Waits until `service` answers `status` (it has finished starting up); its status reply.
inline nlohmann::json WaitForStatus(const RunDir& run, const std::string& service,
                                    std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  nlohmann::json body;
  WaitFor(
      [&] {
        ipc::Client client = ControlClient(run, service);
        Result<ipc::Reply> reply =
            client.Call("status", {}, {},
                        {.attempt_timeout = std::chrono::milliseconds(500), .max_attempts = 1});
        if (!reply.ok()) return false;
        body = reply->body;
        return true;
      },
      limit);
  return body;
}

// Sends `bytes` as the one frame of a request on a raw DEALER socket (so nothing checks it on the
// way) and returns the reply's JSON; null when no reply came in 5 s.
inline nlohmann::json RawRequest(const RunDir& run, const std::string& service,
                                 std::string_view bytes) {
  zmq::context_t context;
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  socket.connect(*ipc::ControlEndpoint(run.path(), service));
  socket.send(zmq::message_t(), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(bytes), zmq::send_flags::none);
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, std::chrono::milliseconds(5000)) != 1) return nullptr;
  std::vector<zmq::message_t> parts;
  for (;;) {
    zmq::message_t part;
    if (!socket.recv(part)) return nullptr;
    const bool more = part.more();
    parts.push_back(std::move(part));
    if (!more) break;
  }
  return nlohmann::json::parse(parts.back().to_string(), nullptr, false);
}

// 1 block x 8 filters: loads and runs in milliseconds.
inline nn::NetConfig TinyNet(nn::NetConfig base) {
  base.blocks = 1;
  base.filters = 8;
  base.value_hidden = 16;
  return base;
}

// Writes a freshly initialised network of `net` (weights from `seed`) to `path` as `version`.
inline void WriteNetwork(const std::string& path, const nn::NetConfig& net, std::uint64_t seed,
                         std::uint64_t version) {
  nn::NetworkOptions options;
  options.net = net;
  options.runtime.device = nn::DeviceChoice::kCpu;
  options.runtime.seed = seed;
  Result<std::unique_ptr<nn::Network>> network = nn::Network::Create(options);
  ASSERT_TRUE(network.ok()) << network.status().ToString();
  const Status saved = (*network)->SaveWeights(path, version);
  ASSERT_TRUE(saved.ok()) << saved.ToString();
}

}  // namespace az::service::testing
