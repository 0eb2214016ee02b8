#pragma once

// The ingest journal: which sample-ring record the daemon had in hand when it stopped, in a small
// memory-mapped file next to the store. It closes the one gap of "commit before release": the ring
// hands a record that its consumer held when it died to the next consumer (shm/ring.h), so a daemon
// killed after committing a record to the store but before releasing it in the ring would see that
// record again after a restart. The journal says whether it was stored already.
//
// Protocol, for each ring record taken (the record's ring position identifies the publication):
//   Begin(ring, position, store's next generation)   before the store insert
//   Commit(generation)                              after the store committed it
// and, for every record the ring delivers, AlreadyStored() before storing it:
//   - same ring and position, state committed: stored, drop it;
//   - same ring and position, state inserting: the insert may or may not have committed; it did iff
//     a record with these bytes holds a generation issued since Begin (the store is searched
//     there);
//   - anything else: not stored.
// Stores into the mapping survive SIGKILL (the page cache keeps them) and are made in program order
// with the state word written last, so a process killed at any instruction leaves either the old
// entry (state not inserting/committed for the new position) or a complete one.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "core/base/status.h"
#include "core/replay/replay_store.h"

namespace az::replayd {

inline constexpr char kJournalMagic[8] = {'A', 'Z', 'I', 'N', 'G', 'E', 'S', 'T'};
inline constexpr std::uint32_t kJournalVersion = 1;

struct JournalEntry {
  enum State : std::uint32_t { kIdle = 0, kInserting = 1, kCommitted = 2 };
  char magic[8];                   // kJournalMagic
  std::uint32_t version;           // kJournalVersion
  std::uint32_t state;             // State; written last
  std::uint64_t ring_id;           // which ring `position` belongs to (RingIdentity)
  std::uint64_t position;          // the ring position of the record in hand
  std::uint64_t generation_floor;  // the store's next generation when the insert began
  std::uint64_t generation;        // the record's generation, once committed
  std::uint8_t reserved[16];
};
static_assert(std::is_trivially_copyable_v<JournalEntry>);
static_assert(sizeof(JournalEntry) == 64 && alignof(JournalEntry) == 8);

class IngestJournal {
 public:
  // Opens or creates the journal file (4 KiB). DataLoss for a file that is not a journal;
  // FailedPrecondition for another version; Unavailable for I/O errors.
  static Result<IngestJournal> Open(const std::string& path);

  IngestJournal(IngestJournal&& other) noexcept;
  IngestJournal& operator=(IngestJournal&& other) noexcept;
  IngestJournal(const IngestJournal&) = delete;
  IngestJournal& operator=(const IngestJournal&) = delete;
  ~IngestJournal();

  // The entry as it is now (after Open: as the previous process left it).
  JournalEntry entry() const;

  void Begin(std::uint64_t ring_id, std::uint64_t position, std::uint64_t generation_floor);
  void Commit(std::uint64_t generation);

  // Whether the record at `position` of ring `ring_id`, with these bytes, is already in `store`
  // (see the top of this file). Costs two compares, plus, right after a crash mid-insert, a read of
  // the records inserted since then.
  bool AlreadyStored(std::uint64_t ring_id, std::uint64_t position,
                     std::span<const std::byte> record, const replay::ReplayStore& store) const;

 private:
  IngestJournal(int fd, JournalEntry* entry) : fd_(fd), entry_(entry) {}
  int fd_ = -1;
  JournalEntry* entry_ = nullptr;
};

// A 64-bit identity of a ring segment's creation (creator pid and start time, creation time), so
// that positions of a ring re-created after a reboot are not taken for those of the old one.
std::uint64_t RingIdentity(std::uint32_t creator_pid, std::uint64_t creator_start_ticks,
                           std::uint64_t created_unix_ns);

}  // namespace az::replayd
