// The whole pipeline as a user starts it: scripts/run (with the binaries of this build) starts the
// four real services under a real supervisord on Connect Four with tiny settings. Games are played,
// samples reach the buffer, the learner steps and publishes a model, the evaluator picks it up;
// the replay daemon is killed with SIGKILL and supervisord restarts it with its buffer; a stop
// request ends the run, which still measures what was learned and leaves no process behind.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "ipc/client.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "tests/ipc/test_util.h"
#include "tests/services/scripted_run.h"

namespace az::pipeline {
namespace {

namespace fs = std::filesystem;
using ipc::testing::ScriptedRun;
using ipc::testing::TempDir;
using ipc::testing::WaitFor;
using ::testing::HasSubstr;

// Generous: the box may be loaded; none of these is a timing assertion.
constexpr auto kLimit = std::chrono::seconds(120);

class PipelineTest : public ::testing::Test {
 protected:
  // The `status` reply of a service of the run (or of another run directory: a self-play host's),
  // or an empty object.
  nlohmann::json Status(const std::string& service, const std::string& dir = "") const {
    Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(dir.empty() ? run_dir_ : dir, service);
    if (!info.ok() || info->state != "running") return nlohmann::json::object();
    Result<ipc::Client> client = ipc::Client::Create({.endpoint = info->control_endpoint,
                                                      .attempt_timeout = std::chrono::seconds(2),
                                                      .max_attempts = 1});
    if (!client.ok()) return nlohmann::json::object();
    Result<ipc::Reply> reply = client->Call("status");
    return reply.ok() ? reply->body : nlohmann::json::object();
  }

  // Waits until `condition` holds on the service's status.
  bool WaitForStatus(const std::string& service,
                     const std::function<bool(const nlohmann::json&)>& condition) {
    return WaitFor(
        [&] {
          const nlohmann::json status = Status(service);
          return !status.empty() && condition(status);
        },
        kLimit);
  }

  TempDir dir_;
  std::string run_dir_ = dir_.path() + "/run";
};

TEST_F(PipelineTest, FourServicesLearnTogetherAndTheReplayDaemonSurvivesSigkill) {
  // scripts/run uses this build's binaries; it writes the run directory and starts supervisord.
  ScriptedRun run(run_dir_,
                  {"--preset", "tiny", "--forever", "--metrics-ports", "auto", "--progress-every",
                   "5", "--arena-every", "10", "--arena-games", "4", "--arena-simulations", "4"});
  ASSERT_TRUE(run.started());
  // The user's sign that the run is up; the kill below must not race the script's own check.
  ASSERT_TRUE(run.WaitForOutput("services are up", kLimit)) << run.Output();

  // Games are played, samples reach the buffer, the learner trains and publishes a model, and the
  // evaluator answers with it.
  EXPECT_TRUE(WaitForStatus("selfplay-0", [](const nlohmann::json& s) {
    return s.value("games_finished", 0) > 0;
  })) << run.Output();
  EXPECT_TRUE(WaitForStatus("replay", [](const nlohmann::json& s) {
    return s.value("size", 0) > 0;
  })) << run.Output();
  EXPECT_TRUE(WaitForStatus("learner",
                            [](const nlohmann::json& s) {
                              return s.value("step", 0) > 0 && s.value("model_version", -1) >= 1;
                            }))
      << run.Output() << run.RunFile("logs/learner.log");
  EXPECT_TRUE(WaitForStatus("evaluator", [](const nlohmann::json& s) {
    return s.value("model_version", 0) >= 1;
  })) << run.RunFile("logs/evaluator.log");
  EXPECT_TRUE(fs::exists(run_dir_ + "/models/model-1.azw"));

  // SIGKILL the replay daemon: supervisord starts a new one, which reopens the store with every
  // record acknowledged before the kill.
  Result<ipc::ServiceInfo> before = ipc::ReadServiceInfo(run_dir_, "replay");
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  const std::uint64_t size = Status("replay").value("size", std::uint64_t{0});
  ASSERT_GT(size, 0u);
  ASSERT_EQ(::kill(static_cast<pid_t>(before->pid), SIGKILL), 0);
  std::int64_t new_pid = 0;
  EXPECT_TRUE(WaitFor(
      [&] {
        Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(run_dir_, "replay");
        if (!info.ok() || info->pid == before->pid) return false;
        new_pid = info->pid;
        return !Status("replay").empty();
      },
      kLimit))
      << run.RunFile("logs/supervisord.log");
  EXPECT_GE(Status("replay").value("size", std::uint64_t{0}), size);
  EXPECT_THAT(run.RunFile("logs/supervisord.log"),
              HasSubstr("exited: replay (terminated by SIGKILL"));
  // Training goes on against the new daemon.
  const std::uint64_t step = Status("learner").value("step", std::uint64_t{0});
  EXPECT_TRUE(WaitForStatus("learner", [&](const nlohmann::json& s) {
    return s.value("step", std::uint64_t{0}) > step;
  })) << run.RunFile("logs/learner.log");

  // SIGTERM (what Ctrl-C does too; SIGINT may be ignored when ctest runs in the background):
  // scripts/run stops the services in order, measures, and stops supervisord.
  std::vector<std::int64_t> pids;
  Result<std::vector<ipc::ServiceInfo>> services = ipc::ListServices(run_dir_);
  ASSERT_TRUE(services.ok());
  EXPECT_EQ(services->size(), 4u);
  for (const ipc::ServiceInfo& info : *services) pids.push_back(info.pid);
  const std::int64_t supervisord = std::stoll(run.RunFile("supervisord.pid"));
  EXPECT_EQ(run.Stop(std::chrono::seconds(180)), 0) << run.Output();
  const std::string text = run.Output();
  EXPECT_THAT(text, HasSubstr("all 4 services are up"));
  EXPECT_THAT(text, HasSubstr("games played"));
  EXPECT_THAT(text, HasSubstr("what was learned"));
  EXPECT_THAT(text, HasSubstr("vs onestep"));
  EXPECT_THAT(text, HasSubstr("run: done"));
  // Nothing is left running, and the learner checkpointed on its way out.
  EXPECT_FALSE(ipc::ProcessAlive(supervisord));
  for (std::int64_t pid : pids) EXPECT_FALSE(ipc::ProcessAlive(pid)) << pid;
  EXPECT_FALSE(ipc::ProcessAlive(new_pid));
  // The learner's last step is checkpointed: by the shutdown checkpoint, or by a periodic one when
  // the last step fell on one (then no second copy is written).
  const std::string learner_log = run.RunFile("logs/learner.log");
  std::smatch stopped;
  ASSERT_TRUE(std::regex_search(learner_log, stopped, std::regex(R"(stopped at step (\d+))")))
      << learner_log;
  char checkpoint[64];
  std::snprintf(checkpoint, sizeof checkpoint, "checkpoints/checkpoint-%010llu.azck",
                std::stoull(stopped[1].str()));
  EXPECT_TRUE(fs::exists(run_dir_ + "/" + checkpoint)) << checkpoint << "\n" << learner_log;
  Result<std::string> prefix = ipc::RunShmPrefix(run_dir_);
  ASSERT_TRUE(prefix.ok());
  for (const fs::directory_entry& entry : fs::directory_iterator("/dev/shm")) {
    EXPECT_FALSE(entry.path().filename().string().starts_with(*prefix)) << entry.path();
  }
}

// Exit code 2 means "needs a person" (docs/running.md): supervisord must leave such a service down
// instead of restarting it, also when it exits in its first second (a bad configuration), while a
// crash is still restarted (the test above).
TEST_F(PipelineTest, SupervisordLeavesAServiceThatExitsTwoDown) {
  ScriptedRun prepare(run_dir_, {"--preset", "tiny", "--prepare-only", "--metrics-ports", "auto",
                                 "--set", "learner.batch=0"});
  ASSERT_TRUE(prepare.started());
  ASSERT_TRUE(prepare.WaitForOutput("run: prepared", kLimit)) << prepare.Output();
  ipc::testing::ChildProcess supervisord(
      {"/usr/bin/supervisord", "-c", run_dir_ + "/supervisord.conf"}, run_dir_ + "/supervisord.out",
      run_dir_ + "/supervisord.out");
  ASSERT_TRUE(supervisord.started());
  const std::string expected_exit = "exited: learner (exit status 2; expected)";
  EXPECT_TRUE(WaitFor(
      [&] {
        return prepare.RunFile("logs/supervisord.log").find(expected_exit) != std::string::npos;
      },
      kLimit))
      << prepare.RunFile("logs/supervisord.log");
  // Long enough for supervisord's backoff (1 s, then 2, 3, ...) to have retried it.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const std::string log = prepare.RunFile("logs/supervisord.log");
  std::size_t spawns = 0;
  for (std::size_t at = 0; (at = log.find("spawned: 'learner'", at)) != std::string::npos; ++at) {
    ++spawns;
  }
  EXPECT_EQ(spawns, 1u) << log;
  EXPECT_THAT(prepare.RunFile("logs/learner.log"), HasSubstr("--batch"));
  // The other services run on.
  EXPECT_FALSE(Status("replay").empty()) << log;
  supervisord.Signal(SIGTERM);
  EXPECT_TRUE(WaitFor([&] { return supervisord.Exited(); }, kLimit));
}

// scripts/run does not wait two minutes for a service that will not come: it names the service,
// shows the end of its log, and exits 1.
TEST_F(PipelineTest, ScriptsRunReportsAServiceThatNeedsAPerson) {
  ScriptedRun run(run_dir_, {"--preset", "tiny", "--forever", "--metrics-ports", "auto", "--set",
                             "learner.batch=0"});
  ASSERT_TRUE(run.started());
  EXPECT_EQ(run.WaitExit(kLimit), 1) << run.Output();
  EXPECT_THAT(run.Output(), HasSubstr("learner stopped with exit code 2"));
  EXPECT_THAT(run.Output(), HasSubstr("az-learner: --batch: Value 0 not in range"));
}

// The systemd units honour the same contract (systemd is not run here: the units are checked for
// the directive that carries it).
TEST(DeployFilesTest, SystemdUnitsDoNotRestartExitCodeTwo) {
  for (const std::string service : {"replay", "evaluator", "selfplay", "learner"}) {
    const std::string unit = ipc::testing::ReadWholeFile(
        std::string(AZ_SOURCE_DIR) + "/deploy/systemd/az-" + service + "@.service");
    EXPECT_THAT(unit, HasSubstr("Restart=on-failure")) << service;
    EXPECT_THAT(unit, HasSubstr("RestartPreventExitStatus=2")) << service;
  }
}

// The multi-host layout on one machine (docs/scaling.md): scripts/run --hosts 1 runs the central
// replay daemon and learner, and a self-play host with its own run directory, shared memory and
// supervisord whose relay carries samples to the daemon over TCP with CURVE and models back. The
// host's workers play, the central buffer fills with the host's samples (counted under its name),
// the learner's models reach the host's evaluator, a SIGKILLed relay is restarted by the host's
// supervisord and the samples keep coming, and a stop leaves nothing behind on either side.
TEST_F(PipelineTest, ASelfPlayHostFeedsTheCentralLearnerOverTcp) {
  ScriptedRun run(run_dir_, {"--preset", "tiny", "--forever", "--metrics-ports", "auto",
                             "--progress-every", "5", "--no-arena", "--hosts", "1"});
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(run.WaitForOutput("all 5 services are up", kLimit)) << run.Output();
  const std::string host_dir = run_dir_ + "/hosts/host-1";
  auto stored_from_host = [&] {
    const nlohmann::json replay = Status("replay");
    if (!replay.contains("remote") || !replay["remote"].is_object()) return std::uint64_t{0};
    const nlohmann::json& hosts = replay["remote"]["hosts"];
    return hosts.contains("host-1") ? hosts["host-1"].value("stored", std::uint64_t{0})
                                    : std::uint64_t{0};
  };
  EXPECT_TRUE(WaitFor([&] { return stored_from_host() > 0; }, kLimit))
      << run.Output() << ipc::testing::ReadWholeFile(host_dir + "/logs/relay.log");
  EXPECT_TRUE(WaitForStatus("learner", [](const nlohmann::json& s) {
    return s.value("model_version", -1) >= 1;
  })) << run.RunFile("logs/learner.log");
  EXPECT_TRUE(
      WaitFor([&] { return Status("evaluator", host_dir).value("model_version", 0) >= 1; }, kLimit))
      << ipc::testing::ReadWholeFile(host_dir + "/logs/evaluator.log")
      << ipc::testing::ReadWholeFile(host_dir + "/logs/relay.log");
  EXPECT_FALSE(fs::exists(run_dir_ + "/selfplay-0.json")) << "no self-play on the central host";

  // SIGKILL the relay: the host's supervisord restarts it, and samples keep arriving.
  Result<ipc::ServiceInfo> relay = ipc::ReadServiceInfo(host_dir, "relay");
  ASSERT_TRUE(relay.ok()) << relay.status().ToString();
  ASSERT_EQ(::kill(static_cast<pid_t>(relay->pid), SIGKILL), 0);
  const std::uint64_t before = stored_from_host();
  EXPECT_TRUE(WaitFor(
      [&] {
        Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(host_dir, "relay");
        return info.ok() && info->pid != relay->pid && stored_from_host() > before;
      },
      kLimit))
      << ipc::testing::ReadWholeFile(host_dir + "/logs/supervisord.log");
  const nlohmann::json host = Status("replay")["remote"]["hosts"]["host-1"];
  EXPECT_EQ(host.value("rejected", 1), 0) << host.dump();
  EXPECT_EQ(host.value("gaps", 1), 0) << host.dump();

  std::vector<std::int64_t> pids;
  for (const std::string& dir : {run_dir_, host_dir}) {
    Result<std::vector<ipc::ServiceInfo>> services = ipc::ListServices(dir);
    ASSERT_TRUE(services.ok());
    for (const ipc::ServiceInfo& info : *services) pids.push_back(info.pid);
  }
  EXPECT_EQ(pids.size(), 5u);
  const std::int64_t host_supervisord =
      std::stoll(ipc::testing::ReadWholeFile(host_dir + "/supervisord.pid"));
  EXPECT_EQ(run.Stop(std::chrono::seconds(180)), 0) << run.Output();
  const std::string text = run.Output();
  EXPECT_THAT(text, HasSubstr("host-1/relay"));
  EXPECT_THAT(text, HasSubstr("samples stored centrally"));
  EXPECT_THAT(text, HasSubstr("from 1 self-play hosts"));
  EXPECT_THAT(text, HasSubstr("run: done"));
  EXPECT_FALSE(ipc::ProcessAlive(host_supervisord));
  for (std::int64_t pid : pids) EXPECT_FALSE(ipc::ProcessAlive(pid)) << pid;
  for (const std::string& dir : {run_dir_, host_dir}) {
    Result<std::string> prefix = ipc::RunShmPrefix(dir);
    ASSERT_TRUE(prefix.ok());
    for (const fs::directory_entry& entry : fs::directory_iterator("/dev/shm")) {
      EXPECT_FALSE(entry.path().filename().string().starts_with(*prefix)) << entry.path();
    }
  }
}

}  // namespace
}  // namespace az::pipeline
