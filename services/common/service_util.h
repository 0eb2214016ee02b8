#pragma once

// Small pieces every service's start-up shares: the log level flag, logging the effective
// configuration, and the shared-memory scope of a run.

#include <nlohmann/json.hpp>
#include <string_view>

#include "core/base/log.h"
#include "core/base/status.h"
#include "shm/scope.h"

namespace az::service {

// "debug", "info", "warning" or "error"; InvalidArgument otherwise.
Result<LogLevel> ParseLogLevel(std::string_view name);

// One log line "effective configuration: {...}" with every option after defaults and derivation,
// so a run's log says exactly what it ran with.
void LogEffectiveConfig(const nlohmann::json& config);

// The shared-memory scope of a run: `explicit_scope` ("shm:<prefix>" or "dir:<path>") when not
// empty, else shm:<ipc::RunShmPrefix(run_dir)>, the scope every process of the run derives from
// the run directory alone. InvalidArgument when both are empty or malformed.
Result<shm::Scope> RunShmScope(std::string_view run_dir, std::string_view explicit_scope);

}  // namespace az::service
