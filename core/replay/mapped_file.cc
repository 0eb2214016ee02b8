#include "core/replay/mapped_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <cerrno>
#include <cstring>

#include "core/replay/file_sync.h"

namespace az::replay {
namespace bip = boost::interprocess;

struct MappedFile::Impl {
  std::string path;
  int fd = -1;  // held open for the flock
  bip::file_mapping mapping;
  bip::mapped_region region;

  ~Impl() {
    region = bip::mapped_region();
    if (fd >= 0) ::close(fd);  // releases the flock
  }
};

namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

Status IoError(const std::string& what, const std::string& path, int error) {
  return Unavailable(what + " " + path + ": " + ErrnoText(error));
}

// Maps `size` bytes of the file at `path` (the whole file).
Status MapWhole(const std::string& path, std::uint64_t size, bip::file_mapping* mapping,
                bip::mapped_region* region) {
  try {
    *mapping = bip::file_mapping(path.c_str(), bip::read_write);
    *region = bip::mapped_region(*mapping, bip::read_write, 0, size);
  } catch (const bip::interprocess_exception& e) {
    return Unavailable("mapping " + path + ": " + e.what());
  }
  return Status::Ok();
}

}  // namespace

MappedFile::MappedFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MappedFile::MappedFile(MappedFile&&) noexcept = default;
MappedFile& MappedFile::operator=(MappedFile&&) noexcept = default;
MappedFile::~MappedFile() = default;

std::span<std::byte> MappedFile::bytes() const {
  return {static_cast<std::byte*>(impl_->region.get_address()), impl_->region.get_size()};
}

const std::string& MappedFile::path() const { return impl_->path; }

Status MappedFile::Flush() {
  try {
    if (!impl_->region.flush(0, 0, /*async=*/false)) {
      return IoError("flushing", impl_->path, errno);
    }
  } catch (const bip::interprocess_exception& e) {
    return Unavailable("flushing " + impl_->path + ": " + e.what());
  }
  return Status::Ok();
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (impl->fd < 0) {
    if (errno == ENOENT) return NotFound(path + " does not exist");
    return IoError("opening", path, errno);
  }
  if (::flock(impl->fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      // Its own code: a held lock is another live opener (retrying may help once it exits), not a
      // file that contradicts the configuration.
      return Aborted(path + " is already open (another process or object holds its lock)");
    }
    return IoError("locking", path, errno);
  }
  struct stat st {};
  if (::fstat(impl->fd, &st) != 0) return IoError("reading the size of", path, errno);
  if (st.st_size == 0) return DataLoss(path + " is empty");
  AZ_RETURN_IF_ERROR(
      MapWhole(path, static_cast<std::uint64_t>(st.st_size), &impl->mapping, &impl->region));
  return MappedFile(std::move(impl));
}

Result<MappedFile> MappedFile::Create(const std::string& path, std::uint64_t size,
                                      const std::function<void(std::span<std::byte>)>& init) {
  if (::access(path.c_str(), F_OK) == 0) return AlreadyExists(path + " already exists");
  const std::string temp = path + ".creating." + std::to_string(::getpid());
  {
    const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return IoError("creating", temp, errno);
    // ftruncate makes a sparse file: pages cost disk space only once written.
    const int rc = ::ftruncate(fd, static_cast<off_t>(size));
    const int error = errno;
    if (rc != 0) {
      ::close(fd);
      ::unlink(temp.c_str());
      return IoError("sizing", temp, error);
    }
    bip::file_mapping mapping;
    bip::mapped_region region;
    Status mapped = MapWhole(temp, size, &mapping, &region);
    if (!mapped.ok()) {
      ::close(fd);
      ::unlink(temp.c_str());
      return mapped;
    }
    init({static_cast<std::byte*>(region.get_address()), region.get_size()});
    bool flushed = false;
    try {
      flushed = region.flush(0, 0, /*async=*/false);
    } catch (const bip::interprocess_exception&) {
    }
    region = bip::mapped_region();
    const int sync_rc = ::fsync(fd);
    ::close(fd);
    if (!flushed || sync_rc != 0) {
      ::unlink(temp.c_str());
      return Unavailable("writing " + temp + " to disk failed");
    }
  }
  // link() refuses to replace an existing name, so two creators racing cannot clobber each other.
  if (::link(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    if (error == EEXIST) return AlreadyExists(path + " already exists");
    return IoError("publishing", path, error);
  }
  ::unlink(temp.c_str());
  AZ_RETURN_IF_ERROR(SyncDirectoryOf(path));
  return Open(path);
}

}  // namespace az::replay
