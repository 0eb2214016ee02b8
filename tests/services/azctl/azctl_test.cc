// azctl as a user runs it: a real binary against real services (the ipc echo server) in child
// processes, checking what it prints and its exit codes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ipc/client.h"
#include "ipc/discovery.h"
#include "ipc/endpoint.h"
#include "ipc/file_util.h"
#include "tests/ipc/test_util.h"

namespace az::azctl {
namespace {

using ipc::testing::BinaryPath;
using ipc::testing::ChildProcess;
using ipc::testing::TempDir;
using ::testing::HasSubstr;

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class AzctlTest : public ::testing::Test {
 protected:
  // Runs azctl --run-dir <dir> <args...>.
  Output Azctl(std::vector<std::string> args, bool with_run_dir = true) {
    std::vector<std::string> argv = {BinaryPath("azctl")};
    if (with_run_dir) {
      argv.push_back("--run-dir");
      argv.push_back(dir_.path());
    }
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string out = dir_.path() + "/azctl.out";
    const std::string err = dir_.path() + "/azctl.err";
    ChildProcess child(argv, out, err);
    Output result;
    result.code = child.Wait();
    result.out = ReadFile(out);
    result.err = ReadFile(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return result;
  }

  // Starts an echo server named `service` and waits until it answers.
  std::unique_ptr<ChildProcess> StartService(const std::string& service,
                                             std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {BinaryPath("az_ipc_echo_server"), "--run-dir", dir_.path(),
                                     "--service", service};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto child = std::make_unique<ChildProcess>(argv, "", dir_.path() + "/" + service + ".log");
    Result<ipc::Client> client =
        ipc::Client::Create({.endpoint = *ipc::ControlEndpoint(dir_.path(), service),
                             .attempt_timeout = std::chrono::milliseconds(200),
                             .max_attempts = 100});
    AZ_CHECK(client.ok());
    AZ_CHECK(client->Call("pid").ok(), "service " + service + " did not come up");
    return child;
  }

  TempDir dir_;
};

TEST_F(AzctlTest, ServiceStatusPrintsWhatTheServiceReports) {
  auto echo = StartService("echo");
  Output human = Azctl({"echo", "status"});
  EXPECT_EQ(human.code, 0) << human.err;
  EXPECT_THAT(human.out, HasSubstr("service:"));
  EXPECT_THAT(human.out, HasSubstr("echo_version:"));
  EXPECT_THAT(human.out, HasSubstr(std::to_string(echo->pid())));

  Output json = Azctl({"--json", "echo", "status"});
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json body = nlohmann::json::parse(json.out);
  EXPECT_EQ(body["ok"], true);
  EXPECT_EQ(body["service"], "echo");
  EXPECT_EQ(body["pid"], echo->pid());
  EXPECT_EQ(body["echo_version"], 1);
  // Global options are also accepted after the command.
  Output after = Azctl({"echo", "status", "--json"});
  EXPECT_EQ(nlohmann::json::parse(after.out)["service"], "echo");
}

TEST_F(AzctlTest, RunStatusShowsEveryServiceAndReportsAKilledOneAsDown) {
  auto learner = StartService("learner");
  auto replay = StartService("replay");
  Output all_up = Azctl({"status"});
  EXPECT_EQ(all_up.code, 0) << all_up.err;
  EXPECT_THAT(all_up.out, HasSubstr("learner"));
  EXPECT_THAT(all_up.out, HasSubstr("replay"));

  replay->Kill();
  Output json = Azctl({"status", "--json", "--timeout", "0.5"});
  EXPECT_EQ(json.code, 3);
  nlohmann::json body = nlohmann::json::parse(json.out);
  EXPECT_EQ(body["all_up"], false);
  ASSERT_EQ(body["services"].size(), 2u);
  EXPECT_EQ(body["services"][0]["service"], "learner");
  EXPECT_EQ(body["services"][0]["up"], true);
  EXPECT_EQ(body["services"][0]["status"]["pid"], learner->pid());
  EXPECT_EQ(body["services"][1]["service"], "replay");
  EXPECT_EQ(body["services"][1]["up"], false);
  EXPECT_EQ(body["services"][1]["state"], "down");
  EXPECT_THAT(body["services"][1]["reason"].get<std::string>(), HasSubstr("is gone"));

  Output human = Azctl({"status"});
  EXPECT_EQ(human.code, 3);
  EXPECT_THAT(human.out, HasSubstr("down"));
}

// Prometheus scrapes what the discovery records say (file_sd): running services with a metrics
// port, local ones as localhost, numbered workers grouped by role; a cleanly stopped service
// is dropped, a service without metrics never listed.
TEST_F(AzctlTest, PrometheusTargetsListTheRunningServicesMetricsPorts) {
  const std::string here = ipc::HostName();
  auto record = [&](std::string service, int port, std::string state, std::string host) {
    ipc::ServiceInfo info{.service = std::move(service),
                          .pid = 1,
                          .host = std::move(host),
                          .control_endpoint = "ipc:///nowhere",
                          .metrics_port = port,
                          .state = std::move(state)};
    ASSERT_TRUE(ipc::WriteServiceInfo(dir_.path(), info).ok());
  };
  record("replay", 9102, "running", here);
  record("selfplay-12", 9122, "running", here);
  record("learner", 9104, "stopped", here);
  record("evaluator", 0, "running", here);
  record("selfplay-1", 9111, "running", "other-box");

  Output printed = Azctl({"prometheus-targets"});
  ASSERT_EQ(printed.code, 0) << printed.err;
  const nlohmann::json targets = nlohmann::json::parse(printed.out);
  const std::string run = std::filesystem::path(dir_.path()).filename().string();
  auto target = [&](std::string address, std::string service, std::string role) {
    return nlohmann::json{
        {"targets", {address}},
        {"labels", {{"service", service}, {"role", role}, {"run", run}}}};
  };
  EXPECT_EQ(targets, nlohmann::json::array({target("localhost:9102", "replay", "replay"),
                                            target("other-box:9111", "selfplay-1", "selfplay"),
                                            target("localhost:9122", "selfplay-12", "selfplay")}));

  const std::string file = dir_.path() + "/targets.json";
  Output written = Azctl({"prometheus-targets", "-o", file});
  ASSERT_EQ(written.code, 0) << written.err;
  EXPECT_EQ(written.out, "");
  EXPECT_EQ(nlohmann::json::parse(ReadFile(file)), targets);

  Output missing = Azctl({"prometheus-targets"}, /*with_run_dir=*/false);
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--run-dir"));
}

TEST_F(AzctlTest, RunStatusOfAnEmptyRunIsNotHealthy) {
  Output output = Azctl({"status"});
  EXPECT_EQ(output.code, 3);
  EXPECT_THAT(output.out, HasSubstr("no services"));
}

TEST_F(AzctlTest, PauseResumeAndShutdownControlTheService) {
  auto echo = StartService("echo");
  Output pause = Azctl({"echo", "pause"});
  EXPECT_EQ(pause.code, 0) << pause.err;
  EXPECT_THAT(pause.out, HasSubstr("paused"));
  Output status = Azctl({"--json", "echo", "status"});
  EXPECT_EQ(nlohmann::json::parse(status.out)["state"], "paused");
  EXPECT_EQ(Azctl({"echo", "resume"}).code, 0);
  status = Azctl({"--json", "echo", "status"});
  EXPECT_EQ(nlohmann::json::parse(status.out)["state"], "running");

  Output shutdown = Azctl({"echo", "shutdown", "--wait", "20"});
  EXPECT_EQ(shutdown.code, 0) << shutdown.err;
  EXPECT_EQ(echo->Wait(), 0);
  EXPECT_EQ(ipc::ReadServiceInfo(dir_.path(), "echo")->state, "stopped");
}

TEST_F(AzctlTest, CallSendsRawJsonWithFramesAndSavesTheReplyFrames) {
  auto echo = StartService("echo");
  const std::string input = dir_.path() + "/input.bin";
  std::string bytes(100000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31);
  std::ofstream(input, std::ios::binary) << bytes;

  Output output = Azctl({"echo", "call", R"({"cmd": "echo", "x": [1, 2]})", "--frame", input,
                         "--save-frames", dir_.path() + "/reply"});
  EXPECT_EQ(output.code, 0) << output.err;
  EXPECT_THAT(output.out, HasSubstr("frame 0: 100000 bytes"));
  EXPECT_EQ(ReadFile(dir_.path() + "/reply.0"), bytes);

  Output json = Azctl({"--json", "echo", "call", R"({"cmd": "echo", "x": [1, 2]})"});
  ASSERT_EQ(json.code, 0) << json.err;
  nlohmann::json body = nlohmann::json::parse(json.out);
  EXPECT_EQ(body["args"]["x"], nlohmann::json({1, 2}));
}

TEST_F(AzctlTest, AnErrorAnsweredByTheServiceExitsOne) {
  auto echo = StartService("echo");
  Output fail = Azctl({"echo", "call", R"({"cmd": "fail"})"});
  EXPECT_EQ(fail.code, 1);
  EXPECT_THAT(fail.err, HasSubstr("FAILED_PRECONDITION: asked to fail"));
  Output unknown = Azctl({"--json", "echo", "call", R"({"cmd": "frobnicate"})"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(nlohmann::json::parse(unknown.out)["error"]["code"], "NOT_FOUND");
}

TEST_F(AzctlTest, UsageErrorsExitTwo) {
  auto echo = StartService("echo");
  EXPECT_EQ(Azctl({"echo", "call", "{not json"}).code, 2);
  EXPECT_EQ(Azctl({"echo", "call", R"({"no_cmd": 1})"}).code, 2);
  EXPECT_EQ(Azctl({"echo"}).code, 2);                  // no subcommand
  EXPECT_EQ(Azctl({"echo", "frobnicate"}).code, 2);    // not an azctl subcommand
  EXPECT_EQ(Azctl({"Not/A/Name", "status"}).code, 2);  // not a service name
  EXPECT_EQ(Azctl({"echo", "status", "--timeout", "-1"}).code, 2);
  EXPECT_EQ(Azctl({"echo", "status"}, /*with_run_dir=*/false).code, 2);
  EXPECT_EQ(Azctl({}).code, 2);
  EXPECT_EQ(Azctl({"--help"}).code, 0);
  EXPECT_EQ(Azctl({"echo", "--help"}).code, 0);
}

TEST_F(AzctlTest, UnreachableServicesExitThree) {
  Output never = Azctl({"replay", "status"});
  EXPECT_EQ(never.code, 3);
  EXPECT_THAT(never.err, HasSubstr("no service 'replay'"));

  auto echo = StartService("echo");
  echo->Kill();
  Output killed = Azctl({"echo", "status", "--timeout", "0.2", "--attempts", "1"});
  EXPECT_EQ(killed.code, 3);
  EXPECT_THAT(killed.err, HasSubstr("DEADLINE_EXCEEDED"));
  EXPECT_THAT(killed.err, HasSubstr("is gone"));
}

// A service on tcp:// speaks CURVE with its run directory's keys: azctl with that run directory is
// answered, azctl with another run's keys is refused with PERMISSION_DENIED and exit code 3, and the
// service counts the refusal.
TEST_F(AzctlTest, ATcpServiceAnswersItsRunsKeysAndRefusesAnotherRunsWithExitThree) {
  ChildProcess echo({BinaryPath("az_ipc_echo_server"), "--run-dir", dir_.path(), "--endpoint",
                     "tcp://127.0.0.1:*"},
                    "", dir_.path() + "/echo.log");
  std::string endpoint;
  ASSERT_TRUE(ipc::testing::WaitFor([&] {
    Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(dir_.path(), "echo");
    if (!info.ok() || info->pid != echo.pid()) return false;
    endpoint = info->control_endpoint;
    return true;
  }));
  ASSERT_THAT(endpoint, ::testing::StartsWith("tcp://127.0.0.1:"));

  Output own = Azctl({"--json", "echo", "status"});  // the endpoint from the discovery record
  ASSERT_EQ(own.code, 0) << own.err;
  EXPECT_EQ(nlohmann::json::parse(own.out)["curve_refused"], 0);

  // Another run's keys: another server key, so the handshake never completes.
  TempDir other;
  const std::vector<std::string> from_other = {"--run-dir", other.path(), "--endpoint", endpoint,
                                               "echo",      "status",     "--timeout",  "2",
                                               "--attempts", "2"};
  Output wrong_server = Azctl(from_other, /*with_run_dir=*/false);
  EXPECT_EQ(wrong_server.code, 3);
  EXPECT_THAT(wrong_server.err, HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(wrong_server.err, HasSubstr("no CURVE handshake completed"));

  // With this run's server key but its own client key: refused by the server, and told so.
  Result<std::string> server_key = ipc::ReadSmallFile(dir_.path() + "/keys/server.public");
  ASSERT_TRUE(server_key.ok());
  ASSERT_TRUE(ipc::WriteFileAtomically(other.path() + "/keys/server.public", *server_key).ok());
  Output refused = Azctl(from_other, /*with_run_dir=*/false);
  EXPECT_EQ(refused.code, 3);
  EXPECT_THAT(refused.err, HasSubstr("PERMISSION_DENIED"));
  EXPECT_THAT(refused.err, HasSubstr("authorized_clients"));

  Output after = Azctl({"--json", "echo", "status"});
  ASSERT_EQ(after.code, 0) << after.err;
  EXPECT_GE(nlohmann::json::parse(after.out)["curve_refused"].get<int>(), 1);
  EXPECT_THAT(ReadFile(dir_.path() + "/echo.log"), HasSubstr("refused a CURVE client"));
}

TEST_F(AzctlTest, EventsPrintsTheLatestModelToALateReader) {
  auto learner = StartService("learner", {"--publish"});
  for (int version = 1; version <= 2; ++version) {
    Output published = Azctl({"learner", "call",
                              nlohmann::json({{"cmd", "publish-model"},
                                              {"version", version},
                                              {"path", "/w/" + std::to_string(version)},
                                              {"checksum", "c"}})
                                  .dump()});
    ASSERT_EQ(published.code, 0) << published.err;
  }
  Output events = Azctl({"events", "--json", "--topic", "model", "--wait", "10"});
  ASSERT_EQ(events.code, 0) << events.err;
  std::istringstream lines(events.out);
  std::string line;
  std::vector<nlohmann::json> seen;
  while (std::getline(lines, line)) seen.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(seen.size(), 1u) << events.out;
  EXPECT_EQ(seen[0]["publisher"], "learner");
  EXPECT_EQ(seen[0]["data"]["version"], 2);
  EXPECT_EQ(seen[0]["data"]["path"], "/w/2");

  Output human = Azctl({"events", "--from", "learner", "--count", "1"});
  EXPECT_EQ(human.code, 0) << human.err;
  EXPECT_THAT(human.out, HasSubstr("learner  model  seq 2"));
}

TEST_F(AzctlTest, EventsWithoutPublishersExitsThree) {
  auto echo = StartService("echo");
  Output output = Azctl({"events"});
  EXPECT_EQ(output.code, 3);
  EXPECT_THAT(output.err, HasSubstr("publishes events"));
}

}  // namespace
}  // namespace az::azctl
