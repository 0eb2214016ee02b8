#include "shm/scope.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace az::shm {

Status ValidateName(std::string_view what, std::string_view name) {
  if (name.empty() || name.size() > 100) {
    return InvalidArgument(std::string(what) + " \"" + std::string(name) +
                           "\" must have 1 to 100 characters");
  }
  if (name.front() == '.') {
    return InvalidArgument(std::string(what) + " \"" + std::string(name) +
                           "\" must not start with '.'");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      return InvalidArgument(std::string(what) + " \"" + std::string(name) +
                             "\" may hold only letters, digits, '.', '_' and '-'");
    }
  }
  return Status::Ok();
}

Result<Scope> Scope::Prefix(std::string_view prefix) {
  AZ_RETURN_IF_ERROR(ValidateName("scope prefix", prefix));
  return Scope(false, std::string(prefix));
}

Result<Scope> Scope::Directory(std::string_view path) {
  if (path.empty()) return InvalidArgument("scope directory is empty");
  std::string root(path);
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    return NotFound("scope directory " + root + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return InvalidArgument("scope directory " + root + " is not a directory");
  return Scope(true, std::move(root));
}

Result<Scope> Scope::Parse(std::string_view spec) {
  if (spec.starts_with("dir:")) return Directory(spec.substr(4));
  if (spec.starts_with("shm:")) return Prefix(spec.substr(4));
  return Prefix(spec);
}

std::string Scope::ToString() const { return (is_directory_ ? "dir:" : "shm:") + root_; }

Result<std::string> Scope::Locate(std::string_view name) const {
  AZ_RETURN_IF_ERROR(ValidateName("segment name", name));
  if (is_directory_) return root_ + "/" + std::string(name) + ".shm";
  return "/" + root_ + "." + std::string(name);
}

Result<std::string> Scope::FilePath(std::string_view name) const {
  AZ_ASSIGN_OR_RETURN(std::string location, Locate(name));
  if (is_directory_) return location;
  return "/dev/shm" + location;
}

}  // namespace az::shm
