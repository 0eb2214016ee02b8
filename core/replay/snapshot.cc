#include "core/replay/snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "core/replay/crc32c.h"
#include "core/replay/file_sync.h"
#include "core/replay/snapshot_format.h"

namespace az::replay {
namespace {

constexpr std::size_t kIoBuffer = std::size_t{1} << 20;

Status IoError(const std::string& what, const std::string& path, int error) {
  return Unavailable(what + " " + path + ": " + std::strerror(error));
}

std::span<const std::byte> BytesOf(const void* p, std::size_t n) {
  return {static_cast<const std::byte*>(p), n};
}

// Sequential reads through a buffer; a read past the end of the file is DataLoss ("truncated").
class FileReader {
 public:
  static Result<FileReader> Open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return NotFound("snapshot " + path + " does not exist");
      return IoError("opening snapshot", path, errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int error = errno;
      ::close(fd);
      return IoError("reading the size of snapshot", path, error);
    }
    return FileReader(fd, path, static_cast<std::uint64_t>(st.st_size));
  }
  FileReader(FileReader&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        path_(std::move(other.path_)),
        size_(other.size_),
        buffer_(std::move(other.buffer_)),
        begin_(other.begin_),
        end_(other.end_),
        offset_(other.offset_) {}
  FileReader& operator=(FileReader&&) = delete;
  ~FileReader() {
    if (fd_ >= 0) ::close(fd_);
  }

  std::uint64_t size() const { return size_; }

  void Seek(std::uint64_t offset) {
    offset_ = offset;
    begin_ = end_ = 0;
  }

  Status Read(void* out, std::size_t n) {
    auto* dst = static_cast<std::byte*>(out);
    while (n > 0) {
      if (begin_ == end_) {
        const ssize_t got =
            ::pread(fd_, buffer_.data(), buffer_.size(), static_cast<off_t>(offset_));
        if (got < 0) {
          if (errno == EINTR) continue;
          return IoError("reading snapshot", path_, errno);
        }
        if (got == 0) return DataLoss("snapshot " + path_ + " ends early: truncated");
        begin_ = 0;
        end_ = static_cast<std::size_t>(got);
        offset_ += static_cast<std::uint64_t>(got);
      }
      const std::size_t take = std::min(n, end_ - begin_);
      std::memcpy(dst, buffer_.data() + begin_, take);
      begin_ += take;
      dst += take;
      n -= take;
    }
    return Status::Ok();
  }

 private:
  FileReader(int fd, std::string path, std::uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size), buffer_(kIoBuffer) {}

  int fd_;
  std::string path_;
  std::uint64_t size_;
  std::vector<std::byte> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t offset_ = 0;  // file offset of buffer_[end_]
};

// Buffered writes to a new file; Finish() syncs it to disk.
class FileWriter {
 public:
  static Result<FileWriter> Create(const std::string& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return IoError("creating", path, errno);
    return FileWriter(fd, path);
  }
  FileWriter(FileWriter&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        path_(std::move(other.path_)),
        buffer_(std::move(other.buffer_)) {}
  FileWriter& operator=(FileWriter&&) = delete;
  ~FileWriter() {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Write(std::span<const std::byte> bytes) {
    if (buffer_.size() + bytes.size() > kIoBuffer) AZ_RETURN_IF_ERROR(Drain());
    if (bytes.size() >= kIoBuffer) return WriteAll(bytes);
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    return Status::Ok();
  }

  // Overwrites bytes already written (after draining the buffer).
  Status WriteAt(std::uint64_t offset, std::span<const std::byte> bytes) {
    AZ_RETURN_IF_ERROR(Drain());
    const ssize_t wrote = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (wrote != static_cast<ssize_t>(bytes.size())) return IoError("writing", path_, errno);
    return Status::Ok();
  }

  Status Finish() {
    AZ_RETURN_IF_ERROR(Drain());
    if (::fsync(fd_) != 0) return IoError("syncing", path_, errno);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return IoError("closing", path_, errno);
    return Status::Ok();
  }

 private:
  FileWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
    buffer_.reserve(kIoBuffer);
  }
  Status Drain() {
    Status status = WriteAll(buffer_);
    buffer_.clear();
    return status;
  }
  Status WriteAll(std::span<const std::byte> bytes) {
    while (!bytes.empty()) {
      const ssize_t wrote = ::write(fd_, bytes.data(), bytes.size());
      if (wrote < 0) {
        if (errno == EINTR) continue;
        return IoError("writing", path_, errno);
      }
      bytes = bytes.subspan(static_cast<std::size_t>(wrote));
    }
    return Status::Ok();
  }

  int fd_;
  std::string path_;
  std::vector<std::byte> buffer_;
};

std::uint32_t HeaderCrc(SnapshotHeaderV2 header) {
  header.header_crc32c = 0;
  return Crc32c(BytesOf(&header, sizeof(header)));
}

// What the verification pass learned about a snapshot file.
struct Plan {
  std::uint32_t version = 0;
  std::uint64_t record_size = 0;
  std::uint64_t count = 0;
  std::uint64_t source_capacity = 0;  // 0 for version 1
  std::uint64_t next_generation = 0;  // 0 for version 1
  double alpha = 0;
  std::uint64_t entries_offset = 0;
  std::uint64_t entry_header = 0;  // bytes before each record
  std::vector<std::byte> metadata;
  bool generations_fit = false;  // the kept records can go back to their own slots
};

std::string Where(const std::string& path) { return "snapshot " + path + ": "; }

Status CheckCompatible(const Plan& plan, const ReplayStore& store, const std::string& path) {
  if (plan.record_size != store.record_size()) {
    return FailedPrecondition(Where(path) + "record size is " + std::to_string(plan.record_size) +
                              " bytes, the store's is " + std::to_string(store.record_size()));
  }
  if (plan.alpha != store.options().alpha) {
    return FailedPrecondition(Where(path) + "priorities were computed with alpha " +
                              std::to_string(plan.alpha) + ", the store uses alpha " +
                              std::to_string(store.options().alpha));
  }
  return Status::Ok();
}

// Reads one entry (header fields, then the record into `record`), extending `crc`.
Status ReadEntry(FileReader& reader, const Plan& plan, std::span<std::byte> record,
                 std::uint64_t* generation, double* priority, std::uint32_t* crc) {
  if (plan.version == 1) {
    float value;
    AZ_RETURN_IF_ERROR(reader.Read(&value, sizeof(value)));
    if (crc != nullptr) *crc = Crc32cExtend(*crc, BytesOf(&value, sizeof(value)));
    *priority = value;
    *generation = 0;
  } else {
    SnapshotEntryV2 entry;
    AZ_RETURN_IF_ERROR(reader.Read(&entry, sizeof(entry)));
    if (crc != nullptr) *crc = Crc32cExtend(*crc, BytesOf(&entry, sizeof(entry)));
    *priority = entry.priority;
    *generation = entry.generation;
  }
  AZ_RETURN_IF_ERROR(reader.Read(record.data(), record.size()));
  if (crc != nullptr) *crc = Crc32cExtend(*crc, record);
  return Status::Ok();
}

// Checks the expected file size against the real one without overflowing on a corrupt count.
Status CheckSize(const std::string& path, std::uint64_t actual, std::uint64_t fixed,
                 std::uint64_t count, std::uint64_t entry_size) {
  const bool overflow =
      entry_size != 0 && count > (std::numeric_limits<std::uint64_t>::max() - fixed) / entry_size;
  const std::uint64_t expected = overflow ? 0 : fixed + count * entry_size;
  if (overflow || expected != actual) {
    return DataLoss(
        Where(path) + "file is " + std::to_string(actual) + " bytes but its header " +
        "describes " +
        (overflow ? std::string("an impossible size") : std::to_string(expected) + " bytes") +
        " (" + std::to_string(count) + " records): truncated, or a corrupt header");
  }
  return Status::Ok();
}

// Reads and checks the header; leaves the reader at the first entry.
Result<Plan> ReadHeader(FileReader& reader, const std::string& path) {
  Plan plan;
  char prefix[12];
  if (reader.size() < sizeof(prefix)) {
    return DataLoss(Where(path) + "file is " + std::to_string(reader.size()) +
                    " bytes, too short for a snapshot header: truncated");
  }
  AZ_RETURN_IF_ERROR(reader.Read(prefix, sizeof(prefix)));
  if (std::memcmp(prefix, kSnapshotMagic, sizeof(kSnapshotMagic)) != 0) {
    return DataLoss(Where(path) + "not a replay snapshot (the magic is wrong)");
  }
  std::memcpy(&plan.version, prefix + 8, sizeof(plan.version));
  reader.Seek(0);
  if (plan.version == 1) {
    SnapshotHeaderV1 header;
    if (reader.size() < sizeof(header)) return DataLoss(Where(path) + "header is truncated");
    AZ_RETURN_IF_ERROR(reader.Read(&header, sizeof(header)));
    plan.record_size = header.record_size;
    plan.count = header.record_count;
    plan.alpha = header.alpha;
    plan.entry_header = kSnapshotV1EntryHeader;
    plan.entries_offset = sizeof(header);
    if (plan.record_size == 0) return DataLoss(Where(path) + "record size 0: corrupt header");
    AZ_RETURN_IF_ERROR(CheckSize(path, reader.size(), sizeof(header) + sizeof(std::uint32_t),
                                 plan.count, plan.entry_header + plan.record_size));
    return plan;
  }
  if (plan.version == 2) {
    SnapshotHeaderV2 header;
    if (reader.size() < sizeof(header)) return DataLoss(Where(path) + "header is truncated");
    AZ_RETURN_IF_ERROR(reader.Read(&header, sizeof(header)));
    if (HeaderCrc(header) != header.header_crc32c) {
      return DataLoss(Where(path) + "header checksum mismatch: the header is corrupt");
    }
    if (header.header_size != sizeof(header) || header.record_size == 0 ||
        header.metadata_size > kMaxSnapshotMetadata) {
      return DataLoss(Where(path) + "header fields are out of range: corrupt header");
    }
    plan.record_size = header.record_size;
    plan.count = header.record_count;
    plan.alpha = header.alpha;
    plan.source_capacity = header.source_capacity;
    plan.next_generation = header.next_generation;
    plan.entry_header = sizeof(SnapshotEntryV2);
    plan.entries_offset = sizeof(header) + header.metadata_size;
    AZ_RETURN_IF_ERROR(CheckSize(path, reader.size(), plan.entries_offset, plan.count,
                                 plan.entry_header + plan.record_size));
    plan.metadata.resize(header.metadata_size);
    return plan;
  }
  return FailedPrecondition(Where(path) + "version " + std::to_string(plan.version) +
                            " is not one this build reads (1 or 2): newer than this build, or "
                            "corrupt");
}

// The verification pass: reads every byte, checks the checksums and the entries that will be kept.
Status Verify(FileReader& reader, Plan& plan, const ReplayStore& store, const std::string& path) {
  const std::uint64_t keep = std::min(plan.count, store.capacity());
  const std::uint64_t skip = plan.count - keep;
  std::uint32_t crc = 0;
  std::uint32_t expected_crc = 0;
  if (plan.version == 1) {
    SnapshotHeaderV1 header;
    reader.Seek(0);
    AZ_RETURN_IF_ERROR(reader.Read(&header, sizeof(header)));
    crc = Crc32c(BytesOf(&header, sizeof(header)));
  } else {
    SnapshotHeaderV2 header;
    reader.Seek(0);
    AZ_RETURN_IF_ERROR(reader.Read(&header, sizeof(header)));
    expected_crc = header.body_crc32c;
    AZ_RETURN_IF_ERROR(reader.Read(plan.metadata.data(), plan.metadata.size()));
    crc = Crc32c(plan.metadata);
  }
  std::vector<std::byte> record(plan.record_size);
  plan.generations_fit = plan.version >= 2 && plan.source_capacity == store.capacity();
  const std::uint64_t lowest =
      plan.next_generation >= store.capacity() ? plan.next_generation - store.capacity() : 0;
  std::optional<std::uint64_t> previous;
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    std::uint64_t generation;
    double priority;
    AZ_RETURN_IF_ERROR(ReadEntry(reader, plan, record, &generation, &priority, &crc));
    if (i < skip) continue;
    if (!std::isfinite(priority) || priority < 0) {
      return DataLoss(Where(path) + "record " + std::to_string(i) + " has priority " +
                      std::to_string(priority) + ": corrupt");
    }
    if (generation >= plan.next_generation || generation < lowest ||
        (previous && generation <= *previous)) {
      plan.generations_fit = false;
    }
    previous = generation;
  }
  if (plan.version == 1) {
    AZ_RETURN_IF_ERROR(reader.Read(&expected_crc, sizeof(expected_crc)));
    if (crc != expected_crc) {
      return DataLoss(Where(path) + "checksum mismatch: the file is corrupt");
    }
  } else if (crc != expected_crc) {
    return DataLoss(Where(path) + "body checksum mismatch: the records or metadata are corrupt");
  }
  return Status::Ok();
}

}  // namespace

Result<std::uint64_t> SaveSnapshot(const ReplayStore& store, const std::string& path,
                                   std::span<const std::byte> metadata) {
  if (metadata.size() > kMaxSnapshotMetadata) {
    return InvalidArgument("snapshot metadata of " + std::to_string(metadata.size()) +
                           " bytes is over the 1 MiB limit");
  }
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  auto attempt = [&]() -> Result<std::uint64_t> {
    AZ_ASSIGN_OR_RETURN(FileWriter writer, FileWriter::Create(temp));
    SnapshotHeaderV2 header{};
    AZ_RETURN_IF_ERROR(writer.Write(BytesOf(&header, sizeof(header))));  // rewritten at the end
    AZ_RETURN_IF_ERROR(writer.Write(metadata));
    std::uint32_t crc = Crc32c(metadata);
    std::uint64_t count = 0;
    AZ_RETURN_IF_ERROR(store.ForEachRecord(
        [&](const RecordInfo& info, std::span<const std::byte> bytes) -> Status {
          const SnapshotEntryV2 entry{info.generation, info.priority};
          AZ_RETURN_IF_ERROR(writer.Write(BytesOf(&entry, sizeof(entry))));
          AZ_RETURN_IF_ERROR(writer.Write(bytes));
          crc = Crc32cExtend(Crc32cExtend(crc, BytesOf(&entry, sizeof(entry))), bytes);
          ++count;
          return Status::Ok();
        }));
    std::memcpy(header.magic, kSnapshotMagic, sizeof(header.magic));
    header.version = kSnapshotVersion;
    header.header_size = sizeof(header);
    header.record_size = store.record_size();
    header.record_count = count;
    header.source_capacity = store.capacity();
    // Taken after the records: every saved generation is below it.
    header.next_generation = store.next_generation();
    header.alpha = store.options().alpha;
    header.metadata_size = metadata.size();
    header.created_unix_seconds =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    header.body_crc32c = crc;
    header.header_crc32c = HeaderCrc(header);
    AZ_RETURN_IF_ERROR(writer.WriteAt(0, BytesOf(&header, sizeof(header))));
    AZ_RETURN_IF_ERROR(writer.Finish());
    if (::rename(temp.c_str(), path.c_str()) != 0) {
      return IoError("renaming snapshot to", path, errno);
    }
    AZ_RETURN_IF_ERROR(SyncDirectoryOf(path));
    return count;
  };
  Result<std::uint64_t> result = attempt();
  if (!result.ok()) {
    ::unlink(temp.c_str());
    return result.status().WithContext("saving snapshot " + path);
  }
  return result;
}

Result<SnapshotInfo> LoadSnapshot(ReplayStore& store, const std::string& path) {
  AZ_ASSIGN_OR_RETURN(FileReader reader, FileReader::Open(path));
  AZ_ASSIGN_OR_RETURN(Plan plan, ReadHeader(reader, path));
  AZ_RETURN_IF_ERROR(CheckCompatible(plan, store, path));
  AZ_RETURN_IF_ERROR(Verify(reader, plan, store, path));

  const std::uint64_t keep = std::min(plan.count, store.capacity());
  const std::uint64_t skip = plan.count - keep;
  const std::uint64_t current = store.next_generation();
  const bool preserve = plan.generations_fit && current <= plan.next_generation;
  // Otherwise the records get fresh generations above every one either side has issued.
  const std::uint64_t base = std::max(current, plan.next_generation);
  const std::uint64_t next_generation = preserve ? plan.next_generation : base + keep;

  reader.Seek(plan.entries_offset + skip * (plan.entry_header + plan.record_size));
  std::vector<std::byte> record(plan.record_size);
  std::uint64_t loaded = 0;
  Status replaced =
      store.Replace(next_generation, [&](ReplayStore::RestoredRecord* out) -> Result<bool> {
        if (loaded == keep) return false;
        std::uint64_t generation;
        double priority;
        Status read = ReadEntry(reader, plan, record, &generation, &priority, nullptr);
        if (!read.ok()) {
          return read.WithContext(
              "the snapshot changed after it was verified; the store keeps the " +
              std::to_string(loaded) + " records read before this error");
        }
        out->generation = preserve ? generation : base + loaded;
        out->priority = priority;
        out->bytes = record;
        ++loaded;
        return true;
      });
  if (!replaced.ok()) return replaced.WithContext(Where(path) + "loading");

  SnapshotInfo info;
  info.version = plan.version;
  info.records_in_file = plan.count;
  info.records_loaded = loaded;
  info.records_dropped = skip;
  info.generations_preserved = preserve;
  info.metadata = std::move(plan.metadata);
  return info;
}

}  // namespace az::replay
