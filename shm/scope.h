#pragma once

// Where a run's segments live, so that two pipelines on one machine never meet:
//   - a name prefix: POSIX shared memory objects "/<prefix>.<name>" (files in /dev/shm), or
//   - a run directory: files "<dir>/<name>.shm" (put it on a tmpfs such as /dev/shm or /run, or
//     every write to a ring is also written back to disk).
// Names and prefixes are [A-Za-z0-9._-], at most 100 characters, and do not start with a dot.

#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::shm {

class Scope {
 public:
  // InvalidArgument for a prefix with other characters or of the wrong length.
  static Result<Scope> Prefix(std::string_view prefix);
  // NotFound when the directory does not exist; InvalidArgument when it is not a directory.
  static Result<Scope> Directory(std::string_view path);
  // Parses "shm:<prefix>" or "dir:<path>" (the form services take as a flag); a string without
  // either form is taken as a prefix.
  static Result<Scope> Parse(std::string_view spec);

  bool is_directory() const { return is_directory_; }
  // The prefix or the directory.
  const std::string& root() const { return root_; }
  // "shm:<prefix>" or "dir:<path>".
  std::string ToString() const;

  // The POSIX shm name ("/<prefix>.<name>") or file path ("<dir>/<name>.shm") of a segment.
  // InvalidArgument for a malformed name.
  Result<std::string> Locate(std::string_view name) const;
  // The file that holds the segment: "/dev/shm/<prefix>.<name>" or the path itself.
  Result<std::string> FilePath(std::string_view name) const;

 private:
  Scope(bool is_directory, std::string root)
      : is_directory_(is_directory), root_(std::move(root)) {}
  bool is_directory_;
  std::string root_;
};

// Checks a segment name or prefix: [A-Za-z0-9._-]{1,100}, not starting with '.'.
Status ValidateName(std::string_view what, std::string_view name);

}  // namespace az::shm
