#include "core/nn/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace az::nn {
namespace {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return NotFound(std::move(message));
  return FailedPrecondition(std::move(message));
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("writing", path, errno);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view part1,
                           std::string_view part2) {
  const std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  // Unique per process so that two writers never share a temporary; a crash leaves only the
  // temporary behind, never a torn `path`.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("creating", tmp, errno);
  Status status = WriteAll(fd, part1, tmp);
  if (status.ok()) status = WriteAll(fd, part2, tmp);
  if (status.ok() && ::fsync(fd) != 0) status = ErrnoStatus("syncing", tmp, errno);
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus("closing", tmp, errno);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus("renaming to", path, errno);
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  // The rename is durable only once the directory entry is on disk.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoStatus("opening directory", dir.string(), errno);
  const int sync_result = ::fsync(dir_fd);
  const int sync_errno = errno;
  ::close(dir_fd);
  if (sync_result != 0) return ErrnoStatus("syncing directory", dir.string(), sync_errno);
  return Status::Ok();
}

Result<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("opening", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus("stat of", path, err);
  }
  std::string data;
  data.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus("reading", path, err);
    }
    if (n == 0) break;  // shrank while reading: the size check in the caller reports it
    done += static_cast<std::size_t>(n);
  }
  data.resize(done);
  ::close(fd);
  return data;
}

}  // namespace az::nn
