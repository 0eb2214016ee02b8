#pragma once

// Whole-file reads and crash-safe replacement for weights files and checkpoints.

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::nn {

// Replaces `path` with the concatenation of `parts` atomically: readers see the old file or the new
// one, never a torn one, even if the process dies mid-write (a temporary in the same directory,
// fsync, rename, fsync of the directory). NOT_FOUND when the directory is missing,
// FAILED_PRECONDITION on other I/O errors (e.g. disk full); the message names the file and errno.
Status WriteFileAtomically(const std::string& path, std::string_view part1, std::string_view part2);

// Reads a whole file. NOT_FOUND when it does not exist, FAILED_PRECONDITION on other errors.
Result<std::string> ReadWholeFile(const std::string& path);

}  // namespace az::nn
