// The commands every service answers: status, pause, resume, shutdown, commands, and a raw call.

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "ipc/discovery.h"
#include "services/azctl/azctl.h"

namespace az::azctl {
namespace {

// Reads a whole file into a frame; INVALID_ARGUMENT when it cannot be read.
Result<zmq::message_t> FrameFromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("cannot read frame file " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string data = bytes.str();
  return ipc::MakeFrame(data.data(), data.size());
}

void AddSimple(CLI::App& app, Context& context, const std::string& cmd, const std::string& help,
               const std::function<void(const ipc::Reply&)>& human = {}) {
  CLI::App* sub = app.add_subcommand(cmd, help);
  AddGlobalOptions(*sub, context.options);
  sub->callback([&context, cmd, human] {
    context.SetAction([&context, cmd, human] { return context.Run({{"cmd", cmd}}, {}, human); });
  });
}

// After `shutdown`: waits until the service's process is gone (same host only).
int WaitForExit(Context& context, double seconds) {
  Result<ipc::ServiceInfo> info = ipc::ReadServiceInfo(context.options.run_dir, context.service);
  if (!info.ok() || info->host != ipc::HostName()) {
    return context.Fail(FailedPrecondition("cannot watch the process: no local discovery record"),
                        kExitUsage);
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
  while (ipc::ProcessAlive(info->pid)) {
    if (std::chrono::steady_clock::now() > deadline) {
      return context.Fail(
          DeadlineExceeded("process " + std::to_string(info->pid) + " still running after " +
                           std::to_string(seconds) + " s"),
          kExitUnreachable);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return kExitOk;
}

}  // namespace

void AddGenericServiceCommands(CLI::App& app, Context& context) {
  AddSimple(app, context, "status", "print what the service reports about itself");
  AddSimple(app, context, "pause", "pause the service's work", [&context](const ipc::Reply& r) {
    std::cout << context.service << ": paused"
              << (r.body.value("changed", true) ? "" : " (already)") << "\n";
  });
  AddSimple(app, context, "resume", "resume the service's work", [&context](const ipc::Reply& r) {
    std::cout << context.service << ": resumed"
              << (r.body.value("changed", true) ? "" : " (was not paused)") << "\n";
  });
  AddSimple(app, context, "commands", "list the commands the service answers",
            [](const ipc::Reply& reply) {
              const nlohmann::json& commands = reply.body["commands"];
              size_t width = 0;
              for (const auto& [name, help] : commands.items())
                width = std::max(width, name.size());
              for (const auto& [name, help] : commands.items()) {
                std::cout << name << std::string(width - name.size() + 2, ' ')
                          << (help.is_string() ? help.get<std::string>() : "") << "\n";
              }
            });

  CLI::App* shutdown = app.add_subcommand("shutdown", "stop the service cleanly");
  AddGlobalOptions(*shutdown, context.options);
  double& wait = context.Keep<double>(0);
  shutdown->add_option("--wait", wait, "then wait up to this many seconds for its process to exit")
      ->check(CLI::Range(0.0, 86400.0));
  shutdown->callback([&context, &wait] {
    context.SetAction([&context, &wait] {
      int code = context.Run({{"cmd", "shutdown"}}, {}, [&context](const ipc::Reply&) {
        std::cout << context.service << ": shutting down\n";
      });
      if (code != kExitOk || wait <= 0) return code;
      return WaitForExit(context, wait);
    });
  });

  CLI::App* call = app.add_subcommand("call", "send a raw JSON request and print the reply");
  AddGlobalOptions(*call, context.options);
  std::string& text = context.Keep<std::string>({});
  auto& frame_files = context.Keep<std::vector<std::string>>({});
  std::string& save_prefix = context.Keep<std::string>({});
  call->add_option("request", text, R"(the request object, e.g. '{"cmd": "status"}')")->required();
  call->add_option("--frame", frame_files, "send this file's bytes as a binary frame (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  call->add_option("--save-frames", save_prefix,
                   "write the reply's binary frames to PREFIX.0, PREFIX.1, ...");
  call->callback([&context, &text, &frame_files, &save_prefix] {
    context.SetAction([&context, &text, &frame_files, &save_prefix] {
      nlohmann::json request = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (request.is_discarded() || !request.is_object()) {
        return context.Fail(InvalidArgument("the request must be a JSON object: " + text),
                            kExitUsage);
      }
      if (!request.contains("cmd") || !request["cmd"].is_string()) {
        return context.Fail(InvalidArgument("the request needs a string \"cmd\""), kExitUsage);
      }
      std::vector<zmq::message_t> frames;
      for (const std::string& path : frame_files) {
        Result<zmq::message_t> frame = FrameFromFile(path);
        if (!frame.ok()) return context.Fail(frame.status(), kExitUsage);
        frames.push_back(std::move(frame).value());
      }
      int exit_code = kExitOk;
      std::optional<ipc::Reply> reply =
          context.Exchange(std::move(request), std::move(frames), &exit_code);
      if (!reply) return exit_code;
      // Frames are saved and listed in both output modes.
      nlohmann::json frame_list = nlohmann::json::array();
      for (size_t i = 0; i < reply->frames.size(); ++i) {
        nlohmann::json entry = {{"bytes", reply->frames[i].size()}};
        if (!save_prefix.empty()) {
          const std::string path = save_prefix + "." + std::to_string(i);
          std::ofstream out(path, std::ios::binary);
          out.write(static_cast<const char*>(reply->frames[i].data()),
                    static_cast<std::streamsize>(reply->frames[i].size()));
          if (!out) return context.Fail(FailedPrecondition("cannot write " + path), kExitUsage);
          entry["saved_to"] = path;
        }
        frame_list.push_back(std::move(entry));
      }
      const Status status = ipc::ReplyStatus(reply->body);
      if (context.options.json) {
        nlohmann::json out = reply->body;
        if (!frame_list.empty()) out["frames_received"] = frame_list;
        PrintJson(out);
      } else if (status.ok()) {
        nlohmann::json fields = reply->body;
        fields.erase("ok");
        fields.erase("id");
        PrintFields(fields);
        for (size_t i = 0; i < frame_list.size(); ++i) {
          std::cout << "frame " << i << ": " << frame_list[i]["bytes"] << " bytes";
          if (frame_list[i].contains("saved_to")) {
            std::cout << " -> " << frame_list[i]["saved_to"].get<std::string>();
          }
          std::cout << "\n";
        }
      }
      if (!status.ok()) {
        std::cerr << "azctl: " << context.service << ": " << status.ToString() << "\n";
        return static_cast<int>(kExitServiceError);
      }
      return static_cast<int>(kExitOk);
    });
  });
}

}  // namespace az::azctl
