#pragma once

// Samples from other hosts: the replay daemon's side of `push` (docs/scaling.md). A self-play host
// runs az-relay, which numbers its host's samples 1, 2, 3, ... in the order it took them off its
// own sample ring, keeps them in an on-disk spool and pushes them here in batches until a reply
// says they are stored. Delivery is at-least-once (a lost reply makes the relay push the same
// batch again); this ledger makes storing exactly-once.
//
// Per host, an ingest journal (ingest_journal.h) in `<dir>/<host>.journal` keyed by the host's
// sequence numbers, with the same protocol as the sample ring's: Begin(seq) before a record is
// inserted, Commit after. So:
//   - a sequence number at or below the last committed one is a duplicate (a resent batch);
//   - a daemon killed between Begin and Commit leaves that one record uncertain, and when it is
//     pushed again the store is searched for its bytes among the records inserted since Begin;
//   - a malformed record is counted as rejected, never stored, and the ledger moves past it (the
//     relay must not push it forever).
// A push that starts past the next expected number (the daemon's store was replaced, or the relay
// lost spool entries to disk corruption) is stored, and the gap is counted and logged.
//
// Not thread-safe except for Stats(): the daemon calls Push from its remote server's thread only.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "core/base/status.h"
#include "core/replay/replay_store.h"
#include "services/replay/server/ingest_journal.h"
#include "services/replay/server/ingestor.h"
#include "services/replay/server/rate_limiter.h"

namespace az::replayd {

inline constexpr std::size_t kMaxRemoteHosts = 1024;

struct RemoteIngestOptions {
  std::string dir;                   // the hosts' journals; created if missing
  RecordCheck check;                 // empty: every record is stored
  ModelVersionReader model_version;  // empty: no model versions
  // Test hook: SIGKILL this process after this many records were inserted into the store, before
  // the journal commits the last one (the window the journal covers). 0: never.
  std::uint64_t crash_after = 0;
};

struct PushResult {
  std::uint64_t committed_through = 0;  // every sequence number up to here is handled
  std::uint64_t stored = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t rejected = 0;
  std::string first_rejection;  // why the first rejected record of this push was dropped
};

struct RemoteHostStats {
  std::uint64_t committed_through = 0;
  std::uint64_t stored = 0;      // since this daemon started
  std::uint64_t duplicates = 0;  // records pushed again after a lost reply or a restart
  std::uint64_t rejected = 0;    // malformed records dropped
  std::uint64_t gaps = 0;        // sequence numbers skipped by a push that started past the next
  std::uint64_t pushes = 0;
  std::int64_t last_push_unix_ms = 0;
  std::string last_rejection;
};

// A host name: 1 to 64 characters of [A-Za-z0-9._-]. InvalidArgument otherwise.
Status ValidateHostName(std::string_view host);

class RemoteIngest {
 public:
  // Creates the directory and opens the journal of every host found there. Errors of
  // IngestJournal::Open (a file that is not a journal: DataLoss, naming it).
  static Result<std::unique_ptr<RemoteIngest>> Open(const RemoteIngestOptions& options,
                                                    replay::ReplayStore& store,
                                                    RateLimiter& limiter);

  // Stores the records of `records` (a whole number of store records) numbered first_seq,
  // first_seq + 1, ... for `host`, as described above. InvalidArgument for a bad host name,
  // first_seq 0 or a frame that is not whole records; ResourceExhausted for a new host past
  // kMaxRemoteHosts, or while the rate limiter holds inserts back (the relay retries later);
  // errors of IngestJournal::Open for a new host.
  Result<PushResult> Push(std::string_view host, std::uint64_t first_seq,
                          std::span<const std::byte> records);

  std::map<std::string, RemoteHostStats> Stats() const;
  std::uint64_t max_model_version() const { return max_model_version_.load(); }

 private:
  struct Host {
    IngestJournal journal;
    RemoteHostStats stats;
  };
  RemoteIngest(RemoteIngestOptions options, replay::ReplayStore& store, RateLimiter& limiter)
      : options_(std::move(options)), store_(store), limiter_(limiter) {}
  Result<Host*> HostFor(std::string_view host);

  RemoteIngestOptions options_;
  replay::ReplayStore& store_;
  RateLimiter& limiter_;
  mutable std::mutex mutex_;  // guards the map and every host's stats
  std::map<std::string, std::unique_ptr<Host>, std::less<>> hosts_;
  std::atomic<std::uint64_t> max_model_version_{0};
  std::uint64_t inserted_ = 0;  // for the crash hook
};

// A 64-bit tag of a host name, the journal's "ring" identity for that host's sequence numbers.
std::uint64_t HostTag(std::string_view host);

}  // namespace az::replayd
