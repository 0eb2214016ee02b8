#include "services/common/service_util.h"

#include <string>

#include "ipc/endpoint.h"

namespace az::service {

Result<LogLevel> ParseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warning") return LogLevel::kWarning;
  if (name == "error") return LogLevel::kError;
  return InvalidArgument("unknown log level \"" + std::string(name) +
                         "\" (debug, info, warning or error)");
}

void LogEffectiveConfig(const nlohmann::json& config) {
  AZ_LOG(kInfo) << "effective configuration: " << config.dump();
}

Result<shm::Scope> RunShmScope(std::string_view run_dir, std::string_view explicit_scope) {
  if (!explicit_scope.empty()) return shm::Scope::Parse(explicit_scope);
  if (run_dir.empty()) {
    return InvalidArgument("the shared-memory scope needs a run directory or an explicit scope");
  }
  AZ_ASSIGN_OR_RETURN(std::string prefix, ipc::RunShmPrefix(run_dir));
  return shm::Scope::Prefix(prefix);
}

}  // namespace az::service
