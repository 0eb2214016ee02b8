#include "services/replay/server/ingest_journal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

namespace az::replayd {
namespace {

constexpr std::size_t kJournalFileBytes = 4096;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

Result<IngestJournal> IngestJournal::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable(Errno("opening the ingest journal " + path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Unavailable(Errno("stat " + path));
  }
  const bool fresh = st.st_size == 0;
  if (!fresh && static_cast<std::size_t>(st.st_size) != kJournalFileBytes) {
    ::close(fd);
    return DataLoss("the ingest journal " + path + " has " + std::to_string(st.st_size) +
                    " bytes, not " + std::to_string(kJournalFileBytes) +
                    ": not a journal (move it away to start a new one)");
  }
  if (fresh && ::ftruncate(fd, kJournalFileBytes) != 0) {
    ::close(fd);
    return Unavailable(Errno("sizing " + path));
  }
  void* mapped = ::mmap(nullptr, kJournalFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) {
    ::close(fd);
    return Unavailable(Errno("mapping " + path));
  }
  auto* entry = static_cast<JournalEntry*>(mapped);
  IngestJournal journal(fd, entry);
  if (fresh || std::all_of(entry->magic, entry->magic + 8, [](char c) { return c == 0; })) {
    std::memcpy(entry->magic, kJournalMagic, sizeof kJournalMagic);
    entry->version = kJournalVersion;
    entry->state = JournalEntry::kIdle;
  } else if (std::memcmp(entry->magic, kJournalMagic, sizeof kJournalMagic) != 0) {
    return DataLoss("the ingest journal " + path +
                    " has no journal magic: not a journal (move it away to start a new one)");
  } else if (entry->version != kJournalVersion) {
    return FailedPrecondition("the ingest journal " + path + " has version " +
                              std::to_string(entry->version) + ", this program writes " +
                              std::to_string(kJournalVersion));
  }
  return journal;
}

IngestJournal::IngestJournal(IngestJournal&& other) noexcept
    : fd_(other.fd_), entry_(other.entry_) {
  other.fd_ = -1;
  other.entry_ = nullptr;
}

IngestJournal& IngestJournal::operator=(IngestJournal&& other) noexcept {
  if (this != &other) {
    this->~IngestJournal();
    fd_ = other.fd_;
    entry_ = other.entry_;
    other.fd_ = -1;
    other.entry_ = nullptr;
  }
  return *this;
}

IngestJournal::~IngestJournal() {
  if (entry_ != nullptr) ::munmap(entry_, kJournalFileBytes);
  if (fd_ >= 0) ::close(fd_);
}

JournalEntry IngestJournal::entry() const {
  JournalEntry copy;
  std::memcpy(&copy, entry_, sizeof copy);
  copy.state = std::atomic_ref(entry_->state).load(std::memory_order_acquire);
  return copy;
}

void IngestJournal::Begin(std::uint64_t ring_id, std::uint64_t position,
                          std::uint64_t generation_floor) {
  // Idle first: a kill while the fields change must not leave the old state over a new position.
  std::atomic_ref(entry_->state).store(JournalEntry::kIdle, std::memory_order_release);
  std::atomic_ref(entry_->ring_id).store(ring_id, std::memory_order_release);
  std::atomic_ref(entry_->position).store(position, std::memory_order_release);
  std::atomic_ref(entry_->generation_floor).store(generation_floor, std::memory_order_release);
  std::atomic_ref(entry_->state).store(JournalEntry::kInserting, std::memory_order_release);
}

void IngestJournal::Commit(std::uint64_t generation) {
  std::atomic_ref(entry_->generation).store(generation, std::memory_order_release);
  std::atomic_ref(entry_->state).store(JournalEntry::kCommitted, std::memory_order_release);
}

bool IngestJournal::AlreadyStored(std::uint64_t ring_id, std::uint64_t position,
                                  std::span<const std::byte> record,
                                  const replay::ReplayStore& store) const {
  const std::uint32_t state = std::atomic_ref(entry_->state).load(std::memory_order_acquire);
  if (state == JournalEntry::kIdle || entry_->ring_id != ring_id || entry_->position != position) {
    return false;
  }
  if (state == JournalEntry::kCommitted) return true;
  // Killed mid-insert: stored iff a record with these bytes got a generation since Begin.
  std::vector<std::byte> bytes(store.record_size());
  const std::uint64_t end = store.next_generation();
  const std::uint64_t begin = std::max(
      entry_->generation_floor, end > store.capacity() ? end - store.capacity() : std::uint64_t{0});
  for (std::uint64_t generation = begin; generation < end; ++generation) {
    Result<replay::RecordInfo> info = store.ReadRecord(generation % store.capacity(), bytes);
    if (info.ok() && info->generation == generation &&
        std::memcmp(bytes.data(), record.data(), bytes.size()) == 0) {
      return true;
    }
  }
  return false;
}

std::uint64_t RingIdentity(std::uint32_t creator_pid, std::uint64_t creator_start_ticks,
                           std::uint64_t created_unix_ns) {
  // splitmix-style mixing of the three fields: any change gives another identity.
  auto mix = [](std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  return mix(mix(mix(creator_pid) ^ creator_start_ticks) ^ created_unix_ns);
}

}  // namespace az::replayd
