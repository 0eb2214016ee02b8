#pragma once

// Durability helper shared by the store and the snapshots.

#include <string>

#include "core/base/status.h"

namespace az::replay {

// fsync()s the directory that holds `path`, so that a file just created or renamed there keeps its
// name after a power loss. Unavailable (with errno's text) on failure.
Status SyncDirectoryOf(const std::string& path);

}  // namespace az::replay
