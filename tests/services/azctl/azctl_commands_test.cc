// The extension point of azctl: a service's own subcommands, registered from their own file as
// services/azctl/<service>_commands.cc files do, reach the service (numbered instances included).

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <atomic>

#include "ipc/args.h"
#include "ipc/server.h"
#include "services/azctl/azctl.h"
#include "tests/ipc/test_util.h"

namespace az::azctl {
namespace {

// What a <service>_commands.cc file holds, for a "widget" service.
void AddWidgetCommands(CLI::App& app, Context& context) {
  CLI::App* spin = app.add_subcommand("spin", "spin the widget");
  int& speed = context.Keep<int>(1);
  spin->add_option("--speed", speed, "turns per second")->check(CLI::Range(1, 10));
  spin->callback([&context, &speed] {
    context.SetAction([&context, &speed] {
      return context.Run({{"cmd", "spin"}, {"speed", speed}});
    });
  });
}
AZCTL_SERVICE_COMMANDS("widget", AddWidgetCommands);

int Azctl(std::vector<std::string> args) {
  args.insert(args.begin(), "azctl");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return RunAzctl(static_cast<int>(argv.size()), argv.data());
}

TEST(AzctlCommandsTest, RegisteredSubcommandsReachTheServiceAndItsNumberedInstances) {
  EXPECT_EQ(FindServiceCommands("widget"), &AddWidgetCommands);
  EXPECT_EQ(FindServiceCommands("widget-2"), &AddWidgetCommands);
  EXPECT_EQ(FindServiceCommands("widget-x"), nullptr);
  EXPECT_EQ(FindServiceCommands("gadget"), nullptr);

  ipc::testing::TempDir dir;
  Result<std::unique_ptr<ipc::Server>> server =
      ipc::Server::Create({.service = "widget-2", .run_dir = dir.path()});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::atomic<int> spun_at{0};
  (*server)->Register("spin", [&](ipc::Request& request) -> Result<ipc::Reply> {
    AZ_ASSIGN_OR_RETURN(int speed, ipc::GetArg<int>(request.args, "speed"));
    spun_at = speed;
    return ipc::Reply{};
  });
  ASSERT_TRUE((*server)->Start().ok());

  EXPECT_EQ(Azctl({"--run-dir", dir.path(), "widget-2", "spin", "--speed", "3"}), kExitOk);
  EXPECT_EQ(spun_at.load(), 3);
  // The service's option checks apply; the generic commands are still there.
  EXPECT_EQ(Azctl({"--run-dir", dir.path(), "widget-2", "spin", "--speed", "99"}), kExitUsage);
  EXPECT_EQ(Azctl({"--run-dir", dir.path(), "widget-2", "pause"}), kExitOk);
  EXPECT_TRUE((*server)->paused());
  // A service without registered commands has no "spin".
  EXPECT_EQ(Azctl({"--run-dir", dir.path(), "gadget", "spin"}), kExitUsage);
}

TEST(AzctlCommandsTest, DurationsAreShort) {
  EXPECT_EQ(FormatDuration(12.34), "12.3s");
  EXPECT_EQ(FormatDuration(125), "2m05s");
  EXPECT_EQ(FormatDuration(3720), "1h02m");
  EXPECT_EQ(FormatDuration(90000), "1d01h");
  EXPECT_EQ(FormatDuration(-1), "-");
}

}  // namespace
}  // namespace az::azctl
