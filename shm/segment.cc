#include "shm/segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/file_mapping.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "core/base/log.h"

namespace az::shm {
namespace bip = boost::interprocess;
namespace {

constexpr unsigned kOwnerOnlyMode = 0600;

std::string ErrnoText(int error) { return std::strerror(error); }

std::string FourCcText(std::uint32_t code) {
  std::string text;
  for (int i = 0; i < 4; ++i) {
    const char c = static_cast<char>((code >> (8 * i)) & 0xff);
    text += (c >= 32 && c < 127) ? c : '?';
  }
  return "'" + text + "'";
}

Status FromErrno(int error, const std::string& what) {
  const std::string message = what + ": " + ErrnoText(error);
  switch (error) {
    case ENOENT: return NotFound(message);
    case EEXIST: return AlreadyExists(message);
    case ENOSPC:
    case ENOMEM:
    case EMFILE:
    case ENFILE: return ResourceExhausted(message);
    case EACCES:
    case EPERM: return FailedPrecondition(message + " (segments are owner-only)");
    case EINVAL:
    case ENAMETOOLONG: return InvalidArgument(message);
    default: return Unavailable(message);
  }
}

// Boost.Interprocess reports errors by exception; this is the one place they are turned into
// Status.
Status FromBoost(const bip::interprocess_exception& e, const std::string& what) {
  const int native = e.get_native_error();
  if (native != 0) return FromErrno(native, what);
  if (e.get_error_code() == bip::already_exists_error) return AlreadyExists(what + ": exists");
  if (e.get_error_code() == bip::not_found_error) return NotFound(what + ": " + e.what());
  return Unavailable(what + ": " + e.what());
}

template <typename T>
std::atomic_ref<T> Atomic(T& value) {
  return std::atomic_ref<T>(value);
}

std::uint64_t NowUnixNs() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

// Reserve the memory up front: on tmpfs a sparse object that later cannot get a page raises SIGBUS
// in whichever process touches it first.
Status Reserve(int fd, std::uint64_t size, const std::string& where) {
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc == 0 || rc == EOPNOTSUPP || rc == EINVAL) return Status::Ok();
  return FromErrno(rc, "reserving " + std::to_string(size) + " bytes for " + where);
}

// Creates the object exclusively, owner-only, with `size` bytes reserved.
Status CreateObject(const Scope& scope, const std::string& location, std::uint64_t size) {
  if (scope.is_directory()) {
    const int fd = ::open(location.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, kOwnerOnlyMode);
    if (fd < 0) return FromErrno(errno, "creating " + location);
    Status status;
    if (::fchmod(fd, kOwnerOnlyMode) != 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
      status = FromErrno(errno, "sizing " + location);
    } else {
      status = Reserve(fd, size, location);
    }
    ::close(fd);
    if (!status.ok()) ::unlink(location.c_str());
    return status;
  }
  try {
    bip::permissions permissions(
        kOwnerOnlyMode);  // Boost fchmod()s it, so the umask cannot widen it
    bip::shared_memory_object object(bip::create_only, location.c_str(), bip::read_write,
                                     permissions);
    object.truncate(static_cast<bip::offset_t>(size));
    Status status = Reserve(object.get_mapping_handle().handle, size, location);
    if (!status.ok()) bip::shared_memory_object::remove(location.c_str());
    return status;
  } catch (const bip::interprocess_exception& e) {
    Status status = FromBoost(e, "creating " + location);
    if (status.code() != StatusCode::kAlreadyExists) {
      bip::shared_memory_object::remove(location.c_str());
    }
    return status;
  }
}

Result<struct stat> StatObject(const std::string& file_path) {
  struct stat st;
  if (::stat(file_path.c_str(), &st) != 0) return FromErrno(errno, "segment " + file_path);
  return st;
}

Result<bip::mapped_region> MapObject(const Scope& scope, const std::string& location,
                                     bool writable) {
  const bip::mode_t mode = writable ? bip::read_write : bip::read_only;
  try {
    if (scope.is_directory()) {
      bip::file_mapping file(location.c_str(), mode);
      return bip::mapped_region(file, mode);
    }
    bip::shared_memory_object object(bip::open_only, location.c_str(), mode);
    return bip::mapped_region(object, mode);
  } catch (const bip::interprocess_exception& e) {
    return FromBoost(e, "mapping " + location);
  }
}

Status RemoveObject(const Scope& scope, const std::string& location) {
  if (scope.is_directory()) {
    if (::unlink(location.c_str()) != 0) return FromErrno(errno, "removing " + location);
    return Status::Ok();
  }
  if (::shm_unlink(location.c_str()) != 0) return FromErrno(errno, "removing " + location);
  return Status::Ok();
}

Status CheckOwnerOnly(const std::string& file_path, const struct stat& st) {
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return FailedPrecondition("segment " + file_path + " has mode " + mode +
                              "; segments must be owner-only (0600)");
  }
  if (st.st_uid != ::geteuid()) {
    return FailedPrecondition("segment " + file_path + " is owned by uid " +
                              std::to_string(st.st_uid) + ", not by this process's uid " +
                              std::to_string(::geteuid()));
  }
  return Status::Ok();
}

Status Mismatch(const std::string& where, const char* field, const std::string& found,
                const std::string& expected) {
  return FailedPrecondition("segment " + where + ": " + field + " is " + found +
                            " but this program expects " + expected);
}

Status CheckHeader(const std::string& where, const SegmentHeader& h, const SegmentExpectation& e,
                   std::uint64_t file_bytes) {
  if (h.magic != kSegmentMagic) {
    return Mismatch(where, "magic", std::to_string(h.magic),
                    std::to_string(kSegmentMagic) + " (not an az segment)");
  }
  if (h.header_version != kSegmentHeaderVersion) {
    return Mismatch(where, "header version", std::to_string(h.header_version),
                    std::to_string(kSegmentHeaderVersion));
  }
  if (h.layout_kind != e.layout_kind) {
    return Mismatch(where, "layout kind", FourCcText(h.layout_kind), FourCcText(e.layout_kind));
  }
  if (h.layout_version != e.layout_version) {
    return Mismatch(where, "layout version", std::to_string(h.layout_version),
                    std::to_string(e.layout_version));
  }
  if (e.record_bytes != 0 && h.record_bytes != e.record_bytes) {
    return Mismatch(where, "record size", std::to_string(h.record_bytes) + " bytes",
                    std::to_string(e.record_bytes) + " bytes");
  }
  if (e.capacity != 0 && h.capacity != e.capacity) {
    return Mismatch(where, "capacity", std::to_string(h.capacity) + " records",
                    std::to_string(e.capacity) + " records");
  }
  if (h.payload_offset != kSegmentPayloadOffset || h.total_bytes < h.payload_offset ||
      h.payload_bytes != h.total_bytes - h.payload_offset) {
    return DataLoss("segment " + where + ": header sizes are inconsistent");
  }
  if (file_bytes < h.total_bytes) {
    return DataLoss("segment " + where + " is truncated: " + std::to_string(file_bytes) +
                    " bytes, header says " + std::to_string(h.total_bytes));
  }
  return Status::Ok();
}

// Copies a header that another process may still be publishing: magic first, with acquire.
SegmentHeader ReadHeader(const std::byte* base) {
  auto* header = reinterpret_cast<SegmentHeader*>(const_cast<std::byte*>(base));
  SegmentHeader copy;
  copy.magic = Atomic(header->magic).load(std::memory_order_acquire);
  std::memcpy(reinterpret_cast<std::byte*>(&copy) + sizeof copy.magic,
              reinterpret_cast<const std::byte*>(header) + sizeof copy.magic,
              sizeof copy - sizeof copy.magic);
  return copy;
}

}  // namespace

struct Segment::Impl {
  std::string location;
  std::string file_path;
  bip::mapped_region region;
  ProcessIdentity registered_by;  // who registered attach_index (a fork child must not unregister)
  int attach_index = -1;
  bool remove_on_close = false;
  bool is_directory = false;

  std::byte* base() const { return static_cast<std::byte*>(region.get_address()); }
  SegmentPreamble* preamble() const { return reinterpret_cast<SegmentPreamble*>(base()); }

  ~Impl() {
    if (!(Self() == registered_by)) return;
    if (attach_index >= 0) UnregisterSelf(preamble()->attached, attach_index);
    if (remove_on_close) {
      if (is_directory) {
        ::unlink(location.c_str());
      } else {
        ::shm_unlink(location.c_str());
      }
    }
  }
};

Segment::Segment(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Segment::Segment(Segment&&) noexcept = default;
Segment& Segment::operator=(Segment&&) noexcept = default;
Segment::~Segment() = default;

std::byte* Segment::base() const { return impl_->base(); }
std::span<std::byte> Segment::payload() const {
  const SegmentHeader& h = header();
  return {impl_->base() + h.payload_offset, static_cast<std::size_t>(h.payload_bytes)};
}
const SegmentHeader& Segment::header() const { return impl_->preamble()->header; }
const std::string& Segment::location() const { return impl_->file_path; }
ProcessTable& Segment::attached() const { return impl_->preamble()->attached; }

Result<Segment> Segment::Create(const Scope& scope, std::string_view name, const SegmentSpec& spec,
                                Initializer init, const CreateOptions& options) {
  AZ_ASSIGN_OR_RETURN(std::string location, scope.Locate(name));
  AZ_ASSIGN_OR_RETURN(std::string file_path, scope.FilePath(name));
  if (spec.layout_kind == 0) return InvalidArgument("segment " + file_path + ": no layout kind");
  const std::uint64_t total = kSegmentPayloadOffset + spec.payload_bytes;

  Status created = CreateObject(scope, location, total);
  if (created.code() == StatusCode::kAlreadyExists) {
    Result<SegmentInfo> info = Inspect(scope, name, options.init_wait);
    if (!info.ok()) return info.status();
    if (!options.reclaim_stale || !info->stale) {
      return AlreadyExists(info->Describe() + (options.reclaim_stale ? "; not reclaimed" : ""));
    }
    AZ_LOG(kWarning) << "reclaiming " << info->Describe();
    Status removed = RemoveObject(scope, location);
    if (!removed.ok() && removed.code() != StatusCode::kNotFound) return removed;
    created = CreateObject(scope, location, total);
  }
  AZ_RETURN_IF_ERROR(created);

  auto impl = std::make_unique<Impl>();
  impl->location = location;
  impl->file_path = file_path;
  impl->is_directory = scope.is_directory();
  impl->registered_by = Self();
  Result<bip::mapped_region> region = MapObject(scope, location, /*writable=*/true);
  if (!region.ok()) {
    RemoveObject(scope, location).ok();
    return region.status();
  }
  impl->region = std::move(region).value();
  AZ_CHECK(impl->region.get_size() >= total);

  SegmentPreamble* preamble = impl->preamble();
  SegmentHeader& h = preamble->header;
  h.header_version = kSegmentHeaderVersion;
  h.layout_kind = spec.layout_kind;
  h.layout_version = spec.layout_version;
  h.record_bytes = spec.record_bytes;
  h.capacity = spec.capacity;
  h.total_bytes = total;
  h.payload_offset = kSegmentPayloadOffset;
  h.payload_bytes = spec.payload_bytes;
  h.creator_pid = Self().pid;
  h.creator_start_ticks = Self().start_ticks;
  h.created_unix_ns = NowUnixNs();
  Result<Registration> registration = RegisterSelf(preamble->attached, {});
  AZ_CHECK(registration.ok(), "a new segment's attach table cannot be full");
  impl->attach_index = registration->index;
  impl->remove_on_close = options.remove_on_close;
  init(std::span<std::byte>(impl->base() + kSegmentPayloadOffset, spec.payload_bytes));
  Atomic(h.magic).store(kSegmentMagic, std::memory_order_release);
  return Segment(std::move(impl));
}

Result<Segment> Segment::Open(const Scope& scope, std::string_view name,
                              const SegmentExpectation& expected, const OpenOptions& options) {
  AZ_ASSIGN_OR_RETURN(std::string location, scope.Locate(name));
  AZ_ASSIGN_OR_RETURN(std::string file_path, scope.FilePath(name));
  const auto deadline = std::chrono::steady_clock::now() + options.init_wait;
  const auto not_finished = [&] {
    return DeadlineExceeded("segment " + file_path + " has no finished header after " +
                            std::to_string(options.init_wait.count()) +
                            " ms (its creator may have died while creating it)");
  };

  // The creator sizes the object right after creating it; wait out that window.
  struct stat st;
  for (;;) {
    AZ_ASSIGN_OR_RETURN(st, StatObject(file_path));
    AZ_RETURN_IF_ERROR(CheckOwnerOnly(file_path, st));
    if (static_cast<std::uint64_t>(st.st_size) >= kSegmentPayloadOffset) break;
    if (std::chrono::steady_clock::now() >= deadline) return not_finished();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  auto impl = std::make_unique<Impl>();
  impl->location = location;
  impl->file_path = file_path;
  impl->is_directory = scope.is_directory();
  impl->registered_by = Self();
  impl->remove_on_close = options.remove_on_close;
  AZ_ASSIGN_OR_RETURN(impl->region, MapObject(scope, location, /*writable=*/true));

  SegmentHeader header = ReadHeader(impl->base());
  while (header.magic == 0) {
    if (std::chrono::steady_clock::now() >= deadline) return not_finished();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    header = ReadHeader(impl->base());
  }
  AZ_RETURN_IF_ERROR(CheckHeader(file_path, header, expected, impl->region.get_size()));
  Result<Registration> registration = RegisterSelf(impl->preamble()->attached, {});
  if (!registration.ok()) return registration.status().WithContext("attaching to " + file_path);
  impl->attach_index = registration->index;
  return Segment(std::move(impl));
}

Result<Segment> Segment::OpenOrCreate(const Scope& scope, std::string_view name,
                                      const SegmentSpec& spec, Initializer init,
                                      const CreateOptions& options) {
  const SegmentExpectation expected{spec.layout_kind, spec.layout_version, spec.record_bytes,
                                    spec.capacity};
  const OpenOptions open_options{options.init_wait, options.remove_on_close};
  for (int attempt = 0; attempt < 3; ++attempt) {
    Result<Segment> opened = Open(scope, name, expected, open_options);
    if (opened.ok() || opened.status().code() != StatusCode::kNotFound) return opened;
    Result<Segment> created = Create(scope, name, spec, init, options);
    if (created.ok() || created.status().code() != StatusCode::kAlreadyExists) return created;
    // Lost a race with another creator (or found a stale one without reclaim): open it.
  }
  return Unavailable("segment " + std::string(name) + " keeps appearing and disappearing");
}

Result<SegmentInfo> Segment::Inspect(const Scope& scope, std::string_view name,
                                     std::chrono::milliseconds init_wait) {
  AZ_ASSIGN_OR_RETURN(std::string location, scope.Locate(name));
  AZ_ASSIGN_OR_RETURN(std::string file_path, scope.FilePath(name));
  AZ_ASSIGN_OR_RETURN(struct stat st, StatObject(file_path));
  SegmentInfo info;
  info.location = file_path;
  const auto changed = std::chrono::system_clock::from_time_t(st.st_ctim.tv_sec) +
                       std::chrono::nanoseconds(st.st_ctim.tv_nsec);
  const bool old = std::chrono::system_clock::now() - changed > init_wait;
  if (static_cast<std::uint64_t>(st.st_size) < kSegmentPayloadOffset) {
    info.stale = old;
    return info;
  }
  AZ_ASSIGN_OR_RETURN(bip::mapped_region region, MapObject(scope, location, /*writable=*/false));
  const auto* base = static_cast<const std::byte*>(region.get_address());
  info.header = ReadHeader(base);
  info.initialised = info.header.magic != 0;
  if (!info.initialised) {
    info.stale = old;
    return info;
  }
  info.creator_alive = IsAlive({info.header.creator_pid, info.header.creator_start_ticks});
  if (info.header.magic == kSegmentMagic) {
    info.attached = LiveProcesses(reinterpret_cast<const SegmentPreamble*>(base)->attached);
  }
  info.stale = !info.creator_alive && info.attached.empty();
  return info;
}

std::string SegmentInfo::Describe() const {
  std::string text = "segment " + location;
  if (!initialised)
    return text + (stale ? " was never finished by its creator (stale)" : " is being created");
  text += " (created by pid " + std::to_string(header.creator_pid) +
          (creator_alive ? ", alive" : ", dead") + "; " + std::to_string(attached.size()) +
          " live processes attached";
  for (std::size_t i = 0; i < attached.size() && i < 8; ++i) {
    text += (i == 0 ? ": " : ", ") + std::to_string(attached[i].pid);
  }
  text += stale ? "; stale)" : ")";
  return text;
}

Status Segment::Remove(const Scope& scope, std::string_view name) {
  AZ_ASSIGN_OR_RETURN(std::string location, scope.Locate(name));
  return RemoveObject(scope, location);
}

Result<int> Segment::RemoveAll(const Scope& scope) {
  const std::string directory = scope.is_directory() ? scope.root() : "/dev/shm";
  const std::string prefix = scope.is_directory() ? "" : scope.root() + ".";
  const std::string suffix = scope.is_directory() ? ".shm" : "";
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return FromErrno(errno, "listing " + directory);
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string file = entry->d_name;
    if (file.size() > prefix.size() + suffix.size() && file.starts_with(prefix) &&
        file.ends_with(suffix)) {
      names.push_back(file.substr(prefix.size(), file.size() - prefix.size() - suffix.size()));
    }
  }
  ::closedir(dir);
  int removed = 0;
  for (const std::string& name : names) {
    if (!ValidateName("segment name", name).ok()) continue;
    Status status = Remove(scope, name);
    if (status.ok()) {
      ++removed;
    } else if (status.code() != StatusCode::kNotFound) {
      return status;
    }
  }
  return removed;
}

}  // namespace az::shm
