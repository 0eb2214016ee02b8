#pragma once

// The relay's on-disk spool: every sample az-relay takes off its host's sample ring is appended
// here, numbered 1, 2, 3, ... (the host's sequence numbers, which the central replay daemon
// deduplicates by), before the ring slot is released; it stays until the daemon acknowledges it.
// So a relay killed at any point, a dropped link or a daemon that is down for hours loses nothing:
// the samples wait here (up to max_bytes; then the relay stops taking from the ring and self-play
// waits on the full ring, as it does for a stopped local daemon).
//
// Layout (`dir`):
//   <first seq, 20 digits>.spool   segments of up to segment_records entries, seq-contiguous:
//                                  [Entry header, 32 bytes][record_bytes] each, fixed size, so
//                                  entry k of a segment is at k * entry size
//   acked                          the highest acknowledged sequence number (text, replaced
//                                  atomically); segments wholly at or below it are deleted
// An entry's header holds a CRC32C over the rest of the entry, so a torn tail (a power loss) is cut
// off when the spool is opened and a corrupt entry in the middle is skipped (and counted) rather
// than sent. The header also names the ring record the entry came from (ring identity and
// position): a relay killed after appending but before the ring released the slot gets the same
// record again from the ring, and LastSource() lets it recognise it.
//
// Append is called by one thread and Read/Ack by another; every call is thread-safe.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace az::relay {

struct SpoolOptions {
  std::string dir;                                   // created if missing
  std::uint32_t record_bytes = 0;                    // required
  std::uint64_t segment_records = 16384;             // entries per segment file
  std::uint64_t max_bytes = std::uint64_t{1} << 30;  // Full() beyond this many unacknowledged bytes
};

struct SpoolSource {
  std::uint64_t ring_id = 0;
  std::uint64_t position = 0;
  friend bool operator==(const SpoolSource&, const SpoolSource&) = default;
};

struct SpoolBatch {
  std::uint64_t first_seq = 0;  // of records[0]
  std::uint64_t count = 0;
  std::vector<std::byte> records;  // count * record_bytes, seq-contiguous
};

struct SpoolStats {
  std::uint64_t next_seq = 1;  // the number the next Append gets
  std::uint64_t acked = 0;     // everything up to here is acknowledged
  std::uint64_t pending = 0;   // appended, not acknowledged
  std::uint64_t pending_bytes = 0;
  std::uint64_t segments = 0;
  std::uint64_t corrupt_skipped = 0;  // entries whose CRC failed on Read (since open)
  std::uint64_t torn_truncated = 0;   // entries cut off the tail at open
};

class Spool {
 public:
  // Opens or creates the spool: reads `acked`, cuts a torn tail off the last segment, deletes
  // acknowledged segments. InvalidArgument for bad options; FailedPrecondition for a segment whose
  // entries are not of this record size (the message says which file); Unavailable for I/O errors.
  static Result<std::unique_ptr<Spool>> Open(const SpoolOptions& options);
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  // Appends one record (record_bytes) from `source`; returns its sequence number. Unavailable on
  // an I/O error (disk full): the caller must not release the ring slot then.
  Result<std::uint64_t> Append(std::span<const std::byte> record, SpoolSource source);
  // Whether the unacknowledged entries take max_bytes or more.
  bool Full() const;
  // Where the last appended entry came from (after Open: the last entry the previous process
  // appended), if any entry is unacknowledged or was appended since open.
  std::optional<SpoolSource> LastSource() const;

  // Up to `max` entries from the first unacknowledged one on, waiting up to `wait` for one when
  // there is none (count 0 then). Corrupt entries are skipped and counted.
  Result<SpoolBatch> ReadPending(std::size_t max, std::chrono::milliseconds wait);
  // Everything up to `through` is acknowledged: persists it and deletes wholly acknowledged
  // segments. A `through` at or below the current mark changes nothing. Unavailable on I/O errors.
  Status Ack(std::uint64_t through);

  SpoolStats Stats() const;

 private:
  struct Segment {
    std::uint64_t first_seq = 0;
    std::uint64_t count = 0;
    int fd = -1;
    std::string path;
  };
  explicit Spool(SpoolOptions options) : options_(std::move(options)) {}
  Status Recover();
  Result<Segment*> SegmentForAppend();
  std::uint64_t EntryBytes() const;

  SpoolOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable appended_;
  std::map<std::uint64_t, Segment> segments_;  // by first_seq
  std::uint64_t next_seq_ = 1;
  std::uint64_t acked_ = 0;
  std::optional<SpoolSource> last_source_;
  std::uint64_t corrupt_skipped_ = 0;
  std::uint64_t torn_truncated_ = 0;
  std::uint64_t corrupt_counted_through_ = 0;  // corrupt entries are counted once
};

}  // namespace az::relay
