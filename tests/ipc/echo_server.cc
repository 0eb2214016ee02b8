// A small real service for the ipc and azctl tests: it embeds the control server (and, with
// --publish, an event publisher) exactly as a service does, so tests can start, SIGKILL and restart
// it as a separate process.
//
//   az_ipc_echo_server --run-dir DIR [--service NAME] [--endpoint E] [--hang] [--publish]
//
// Commands: echo (returns its arguments and frames), pid, hang (with --hang: marks
// <run-dir>/<service>.hanging and never answers; without: answers like pid), fail (answers
// FAILED_PRECONDITION), publish-model {version, path, checksum} (with --publish).

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/base/log.h"
#include "ipc/args.h"
#include "ipc/event.h"
#include "ipc/event_publisher.h"
#include "ipc/server.h"

namespace az::ipc {
namespace {

int Run(int argc, char** argv) {
  std::string run_dir;
  std::string service = "echo";
  bool hang = false;
  bool publish = false;
  CLI::App app("control-protocol test service");
  app.add_option("--run-dir", run_dir)->required();
  app.add_option("--service", service);
  std::string endpoint;  // e.g. tcp://127.0.0.1:* (CURVE with the run directory's keys)
  app.add_option("--endpoint", endpoint);
  app.add_flag("--hang", hang);
  app.add_flag("--publish", publish);
  CLI11_PARSE(app, argc, argv);
  SetLogComponent("echo-server");

  // SIGTERM asks for a clean shutdown, as in a real service.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<EventPublisher> publisher;
  if (publish) {
    Result<std::unique_ptr<EventPublisher>> made =
        EventPublisher::Create({.service = service, .run_dir = run_dir});
    if (!made.ok()) {
      AZ_LOG(kError) << made.status().ToString();
      return 1;
    }
    publisher = std::move(made).value();
  }
  Result<std::unique_ptr<Server>> made =
      Server::Create({.service = service,
                      .run_dir = run_dir,
                      .endpoint = endpoint,
                      .events_endpoint = publisher ? publisher->endpoint() : "",
                      .status = [] {
                        return nlohmann::json{{"echo_version", 1}};
                      }});
  if (!made.ok()) {
    AZ_LOG(kError) << made.status().ToString();
    return 1;
  }
  Server& server = **made;

  server.Register(
      "echo",
      [](Request& request) -> Result<Reply> {
        Reply reply;
        reply.body = {{"args", request.args}, {"frames", request.frames.size()}};
        reply.frames = std::move(request.frames);
        return reply;
      },
      "returns its arguments and frames");
  server.Register(
      "pid",
      [](Request&) -> Result<Reply> {
        return Reply{{{"pid", ::getpid()}}, {}};
      },
      "this process's pid");
  server.Register(
      "hang",
      [&](Request&) -> Result<Reply> {
        if (hang) {
          std::ofstream(run_dir + "/" + service + ".hanging") << ::getpid() << "\n";
          while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
        }
        return Reply{{{"pid", ::getpid()}}, {}};
      },
      "never answers when started with --hang");
  server.Register(
      "fail", [](Request&) -> Result<Reply> { return FailedPrecondition("asked to fail"); },
      "always answers FAILED_PRECONDITION");
  if (publisher) {
    server.Register(
        "publish-model",
        [&](Request& request) -> Result<Reply> {
          ModelPublished model;
          AZ_ASSIGN_OR_RETURN(model.version, GetArg<std::int64_t>(request.args, "version"));
          AZ_ASSIGN_OR_RETURN(model.path, GetArg<std::string>(request.args, "path"));
          AZ_ASSIGN_OR_RETURN(model.checksum, GetArg<std::string>(request.args, "checksum"));
          AZ_ASSIGN_OR_RETURN(Event event,
                              publisher->Publish(kModelTopic, ModelPublishedToJson(model)));
          return Reply{{{"seq", event.seq}}, {}};
        },
        "publishes a model event");
  }
  Status started = server.Start();
  if (!started.ok()) {
    AZ_LOG(kError) << started.ToString();
    return 1;
  }
  std::thread signal_thread([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    server.RequestShutdown();
  });
  while (!server.WaitForShutdown(std::chrono::seconds(1))) {
  }
  AZ_LOG(kInfo) << "shutting down";
  // Wake the signal thread (the signal is blocked everywhere, so sigwait takes it) and join it.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  return 0;
}

}  // namespace
}  // namespace az::ipc

int main(int argc, char** argv) { return az::ipc::Run(argc, argv); }
