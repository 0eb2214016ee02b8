#include "services/relay/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "core/base/log.h"
#include "core/replay/crc32c.h"
#include "ipc/file_util.h"

namespace az::relay {
namespace fs = std::filesystem;
namespace {

constexpr std::uint32_t kEntryMagic = 0x50535A41;  // "AZSP" in little-endian bytes
constexpr std::string_view kSegmentSuffix = ".spool";

struct EntryHeader {
  std::uint32_t magic = kEntryMagic;
  std::uint32_t crc = 0;  // CRC32C of everything after this field: the rest of the header + record
  std::uint64_t seq = 0;
  std::uint64_t ring_id = 0;
  std::uint64_t position = 0;
};
static_assert(sizeof(EntryHeader) == 32);

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::uint32_t EntryCrc(std::span<const std::byte> entry) {
  return replay::Crc32c(entry.subspan(8));
}

// The header of a whole entry when its magic and CRC hold.
std::optional<EntryHeader> ValidEntry(std::span<const std::byte> entry) {
  EntryHeader header;
  std::memcpy(&header, entry.data(), sizeof header);
  if (header.magic != kEntryMagic || header.crc != EntryCrc(entry)) return std::nullopt;
  return header;
}

std::string SegmentName(std::uint64_t first_seq) {
  char name[40];
  std::snprintf(name, sizeof name, "%020" PRIu64 "%s", first_seq, kSegmentSuffix.data());
  return name;
}

std::optional<std::uint64_t> FirstSeqOf(const std::string& name) {
  if (name.size() != 20 + kSegmentSuffix.size() || !name.ends_with(kSegmentSuffix)) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 20; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(name[i] - '0');
  }
  return value;
}

bool ReadAt(int fd, std::span<std::byte> out, std::uint64_t offset) {
  return ::pread(fd, out.data(), out.size(), static_cast<off_t>(offset)) ==
         static_cast<ssize_t>(out.size());
}

}  // namespace

std::uint64_t Spool::EntryBytes() const { return sizeof(EntryHeader) + options_.record_bytes; }

Result<std::unique_ptr<Spool>> Spool::Open(const SpoolOptions& options) {
  if (options.dir.empty()) return InvalidArgument("the spool needs a directory");
  if (options.record_bytes == 0) return InvalidArgument("the spool needs a record size");
  if (options.segment_records == 0) return InvalidArgument("a spool segment holds >= 1 entry");
  std::unique_ptr<Spool> spool(new Spool(options));
  AZ_RETURN_IF_ERROR(spool->Recover());
  return spool;
}

Spool::~Spool() {
  for (auto& [first, segment] : segments_) ::close(segment.fd);
}

Status Spool::Recover() {
  std::error_code error;
  fs::create_directories(options_.dir, error);
  if (error) return Unavailable("creating the spool " + options_.dir + ": " + error.message());
  if (Result<std::string> text = ipc::ReadSmallFile(options_.dir + "/acked"); text.ok()) {
    if (std::sscanf(text->c_str(), "%" SCNu64, &acked_) != 1) {
      return DataLoss("the spool's acked file " + options_.dir + "/acked holds no number");
    }
  } else if (text.status().code() != StatusCode::kNotFound) {
    return text.status();
  }

  for (const fs::directory_entry& file : fs::directory_iterator(options_.dir, error)) {
    const std::optional<std::uint64_t> first = FirstSeqOf(file.path().filename().string());
    if (!first) continue;
    Segment segment{*first, 0, -1, file.path().string()};
    segment.fd = ::open(segment.path.c_str(), O_RDWR | O_CLOEXEC);
    if (segment.fd < 0) return Unavailable(Errno("opening " + segment.path));
    struct stat st {};
    if (::fstat(segment.fd, &st) != 0) {
      ::close(segment.fd);
      return Unavailable(Errno("stat " + segment.path));
    }
    segment.count = static_cast<std::uint64_t>(st.st_size) / EntryBytes();
    segments_.emplace(*first, segment);
  }
  if (error) return Unavailable("listing " + options_.dir + ": " + error.message());

  std::vector<std::byte> entry(EntryBytes());
  for (auto& [first, segment] : segments_) {
    // A segment written with another record size has no entry where this size puts one.
    if (segment.count > 0) {
      std::optional<EntryHeader> header;
      if (ReadAt(segment.fd, entry, 0)) header = ValidEntry(entry);
      if (header && header->seq != first) header.reset();
      if (!header && segment.count > 1) {
        return FailedPrecondition("the spool segment " + segment.path + " does not hold " +
                                  std::to_string(options_.record_bytes) +
                                  "-byte records numbered from its name (another game or a "
                                  "damaged file): move it away");
      }
    }
  }
  // The tail of the last segment: cut partial or corrupt entries (a power loss mid-write).
  if (!segments_.empty()) {
    Segment& last = segments_.rbegin()->second;
    while (last.count > 0) {
      const std::uint64_t offset = (last.count - 1) * EntryBytes();
      std::optional<EntryHeader> header;
      if (ReadAt(last.fd, entry, offset)) header = ValidEntry(entry);
      if (header && header->seq == last.first_seq + last.count - 1) {
        last_source_ = SpoolSource{header->ring_id, header->position};
        break;
      }
      --last.count;
      ++torn_truncated_;
    }
    struct stat st {};
    if (::fstat(last.fd, &st) == 0 &&
        static_cast<std::uint64_t>(st.st_size) != last.count * EntryBytes()) {
      if (static_cast<std::uint64_t>(st.st_size) > last.count * EntryBytes() &&
          static_cast<std::uint64_t>(st.st_size) % EntryBytes() != 0) {
        ++torn_truncated_;
      }
      if (::ftruncate(last.fd, static_cast<off_t>(last.count * EntryBytes())) != 0) {
        return Unavailable(Errno("truncating the torn tail of " + last.path));
      }
    }
    if (torn_truncated_ > 0) {
      AZ_LOG(kWarning) << "spool: cut " << torn_truncated_ << " torn entries off " << last.path;
    }
    next_seq_ = last.first_seq + last.count;
    acked_ = std::max(acked_, segments_.begin()->first - 1);
  }
  next_seq_ = std::max(next_seq_, acked_ + 1);
  // Acknowledged segments left by a relay killed between writing `acked` and deleting them. The
  // last one stays: its last entry is LastSource().
  for (auto it = segments_.begin(); it != segments_.end();) {
    const bool done = it->second.first_seq + it->second.count <= acked_ + 1;
    const bool last = std::next(it) == segments_.end();
    if (done && (!last || it->second.count == 0)) {
      ::close(it->second.fd);
      fs::remove(it->second.path, error);
      it = segments_.erase(it);
    } else {
      ++it;
    }
  }
  return Status::Ok();
}

Result<Spool::Segment*> Spool::SegmentForAppend() {
  if (!segments_.empty()) {
    Segment& last = segments_.rbegin()->second;
    if (last.count < options_.segment_records && last.first_seq + last.count == next_seq_) {
      return &last;
    }
  }
  Segment segment{next_seq_, 0, -1, options_.dir + "/" + SegmentName(next_seq_)};
  segment.fd = ::open(segment.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (segment.fd < 0) return Unavailable(Errno("creating the spool segment " + segment.path));
  return &segments_.emplace(next_seq_, segment).first->second;
}

Result<std::uint64_t> Spool::Append(std::span<const std::byte> record, SpoolSource source) {
  if (record.size() != options_.record_bytes) {
    return InvalidArgument("a spool entry is " + std::to_string(options_.record_bytes) +
                           " bytes, got " + std::to_string(record.size()));
  }
  std::vector<std::byte> entry(EntryBytes());
  std::unique_lock lock(mutex_);
  AZ_ASSIGN_OR_RETURN(Segment * segment, SegmentForAppend());
  EntryHeader header;
  header.seq = next_seq_;
  header.ring_id = source.ring_id;
  header.position = source.position;
  std::memcpy(entry.data(), &header, sizeof header);
  std::memcpy(entry.data() + sizeof header, record.data(), record.size());
  header.crc = EntryCrc(entry);
  std::memcpy(entry.data(), &header, sizeof header);
  const ssize_t written = ::pwrite(segment->fd, entry.data(), entry.size(),
                                   static_cast<off_t>(segment->count * EntryBytes()));
  if (written != static_cast<ssize_t>(entry.size())) {
    return Unavailable(written < 0
                           ? Errno("appending to " + segment->path)
                           : "appending to " + segment->path + ": short write (disk full?)");
  }
  ++segment->count;
  last_source_ = source;
  const std::uint64_t seq = next_seq_++;
  lock.unlock();
  appended_.notify_all();
  return seq;
}

bool Spool::Full() const {
  std::lock_guard lock(mutex_);
  return (next_seq_ - 1 - acked_) * EntryBytes() >= options_.max_bytes;
}

std::optional<SpoolSource> Spool::LastSource() const {
  std::lock_guard lock(mutex_);
  return last_source_;
}

Result<SpoolBatch> Spool::ReadPending(std::size_t max, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  appended_.wait_for(lock, wait, [&] { return next_seq_ > acked_ + 1; });
  SpoolBatch batch;
  std::vector<std::byte> entry(EntryBytes());
  std::uint64_t seq = acked_ + 1;
  while (batch.count < max && seq < next_seq_) {
    auto it = segments_.upper_bound(seq);
    if (it == segments_.begin()) break;
    --it;
    const Segment& segment = it->second;
    if (seq >= segment.first_seq + segment.count) {  // a hole between segments: skip to the next
      if (std::next(it) == segments_.end() || batch.count > 0) break;
      seq = std::next(it)->first;
      continue;
    }
    std::optional<EntryHeader> header;
    if (ReadAt(segment.fd, entry, (seq - segment.first_seq) * EntryBytes())) {
      header = ValidEntry(entry);
    }
    if (!header || header->seq != seq) {
      if (batch.count > 0) break;  // send what came before; the next read starts here
      if (seq <= corrupt_counted_through_) {
        ++seq;
        continue;
      }
      corrupt_counted_through_ = seq;
      ++corrupt_skipped_;
      AZ_LOG(kError) << "spool: entry " << seq << " in " << segment.path
                     << " is corrupt (CRC); it is skipped and the daemon will count a gap";
      ++seq;
      continue;
    }
    if (batch.count == 0) batch.first_seq = seq;
    batch.records.insert(batch.records.end(), entry.begin() + sizeof(EntryHeader), entry.end());
    ++batch.count;
    ++seq;
  }
  return batch;
}

Status Spool::Ack(std::uint64_t through) {
  std::lock_guard lock(mutex_);
  through = std::min(through, next_seq_ - 1);
  if (through <= acked_) return Status::Ok();
  AZ_RETURN_IF_ERROR(ipc::WriteFileAtomically(options_.dir + "/acked", std::to_string(through)));
  acked_ = through;
  std::error_code error;
  for (auto it = segments_.begin(); it != segments_.end();) {
    const Segment& segment = it->second;
    const bool done = segment.first_seq + segment.count <= acked_ + 1;
    // The last segment stays even when acknowledged: its last entry names the ring record taken
    // last (LastSource), which a relay killed before the ring released it gets again.
    if (!done || std::next(it) == segments_.end()) break;
    ::close(segment.fd);
    fs::remove(segment.path, error);
    if (error) {
      AZ_LOG(kWarning) << "spool: removing " << segment.path << ": " << error.message();
    }
    it = segments_.erase(it);
  }
  return Status::Ok();
}

SpoolStats Spool::Stats() const {
  std::lock_guard lock(mutex_);
  SpoolStats stats;
  stats.next_seq = next_seq_;
  stats.acked = acked_;
  stats.pending = next_seq_ - 1 - acked_;
  stats.pending_bytes = stats.pending * EntryBytes();
  stats.segments = segments_.size();
  stats.corrupt_skipped = corrupt_skipped_;
  stats.torn_truncated = torn_truncated_;
  return stats;
}

}  // namespace az::relay
