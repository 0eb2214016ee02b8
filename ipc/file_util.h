#pragma once

// Small file helpers for the run directory: whole-file reads and crash-safe replacement.

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::ipc {

// Replaces `path` with `contents` atomically: readers see the old file or the new one, never a torn
// one, even if this process is killed mid-write (write to a temporary in the same directory, fsync,
// rename, fsync the directory). NOT_FOUND when the directory is missing, FAILED_PRECONDITION for
// other I/O errors; the message names the file and the errno text.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// Reads a whole (small) file. NOT_FOUND when it does not exist, FAILED_PRECONDITION on other
// errors.
Result<std::string> ReadSmallFile(const std::string& path);

}  // namespace az::ipc
