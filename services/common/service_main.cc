#include "services/common/service_main.h"

#include <CLI/CLI.hpp>

namespace az::service {

int ParseServiceCommandLine(int argc, char** argv, const std::string& program,
                            const std::string& description,
                            const std::function<void(CLI::App&)>& add_options) {
  CLI::App cli{description};
  add_options(cli);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    std::cerr << program << ": config file: " << e.what()
              << " (keys are the long flag names without the dashes, e.g. log-level = \"info\"; "
              << program << " --help lists them)\n";
    return kExitBadConfig;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli.exit(e);  // --help
    std::cerr << program << ": " << e.what() << "\n";
    return kExitBadConfig;
  }
  return -1;
}

}  // namespace az::service
