// RunServiceMain, the main() of every long-running service, with a fake app in this process and a
// real SIGTERM: a Stop() that the signal thread is running finishes before the app is destroyed, a
// signal during Create stops the app as soon as it exists, and bad flags exit 2.

#include "services/common/service_main.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace az::service {
namespace {

using namespace std::chrono_literals;

struct FakeConfig : ServiceOptions {};

// What the fake app saw; reset by each test (the tests also run in one process, in the sanitizer
// stages of scripts/test).
struct Probe {
  std::atomic<bool> signal_in_create{false};  // Create sends SIGTERM and waits a little
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> stopping{false};
  std::atomic<bool> destroyed_while_stopping{false};
  std::atomic<int> stops{0};
};
Probe probe;

bool WaitUntil(const std::atomic<bool>& flag, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!flag.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  return flag.load();
}

class FakeApp {
 public:
  static Result<std::unique_ptr<FakeApp>> Create(const FakeConfig&) {
    if (probe.signal_in_create.load()) {
      ::kill(::getpid(), SIGTERM);
      std::this_thread::sleep_for(200ms);  // the signal thread handles it meanwhile
    }
    return std::make_unique<FakeApp>();
  }
  ~FakeApp() {
    if (probe.stopping.load()) probe.destroyed_while_stopping.store(true);
  }
  // Asks for its own stop the way a supervisor does, and returns as soon as Stop() has begun.
  Status Run() {
    if (!probe.signal_in_create.load()) ::kill(::getpid(), SIGTERM);
    return WaitUntil(probe.stop_requested, 10s) ? Status::Ok() : Internal("never stopped");
  }
  // A Stop() that takes a while (it wakes threads, requests the server's shutdown).
  void Stop() {
    probe.stopping.store(true);
    probe.stop_requested.store(true);
    std::this_thread::sleep_for(300ms);
    probe.stops.fetch_add(1);
    probe.stopping.store(false);
  }
};

void ResetProbe() {
  probe.signal_in_create.store(false);
  probe.stop_requested.store(false);
  probe.stopping.store(false);
  probe.destroyed_while_stopping.store(false);
  probe.stops.store(0);
}

int RunFake(std::vector<std::string> args) {
  const std::string run_dir =
      (std::filesystem::temp_directory_path() / ("az_service_main_" + std::to_string(::getpid())))
          .string();
  std::vector<std::string> argv = {"az-fake", "--run-dir", run_dir, "--service", "fake"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  ServiceMainSpec<FakeConfig> spec;
  spec.program = "az-fake";
  spec.description = "a fake service";
  spec.add_options = [](CLI::App& cli, FakeConfig& c) { AddServiceOptions(cli, c); };
  spec.finalize = [](FakeConfig& c) { return FinalizeServiceOptions(c); };
  spec.needs_a_person = [](StatusCode) { return false; };
  const int code =
      RunServiceMain<FakeApp, FakeConfig>(static_cast<int>(pointers.size()), pointers.data(), spec);
  std::filesystem::remove_all(run_dir);
  return code;
}

TEST(ServiceMainTest, AStopInProgressEndsBeforeTheAppIsDestroyed) {
  ResetProbe();
  EXPECT_EQ(RunFake({}), 0);
  EXPECT_EQ(probe.stops.load(), 1);
  EXPECT_FALSE(probe.destroyed_while_stopping.load())
      << "the app was destroyed while the signal thread was still in its Stop()";
}

TEST(ServiceMainTest, ASignalDuringCreateStopsTheAppAsSoonAsItExists) {
  ResetProbe();
  probe.signal_in_create.store(true);
  EXPECT_EQ(RunFake({}), 0);
  EXPECT_EQ(probe.stops.load(), 1);
  EXPECT_FALSE(probe.destroyed_while_stopping.load());
}

TEST(ServiceMainTest, BadFlagsExitTwo) {
  ResetProbe();
  EXPECT_EQ(RunFake({"--log-level", "loud"}), kExitBadConfig);
  EXPECT_EQ(RunFake({"--no-such-flag"}), kExitBadConfig);
  EXPECT_EQ(probe.stops.load(), 0);
}

}  // namespace
}  // namespace az::service
