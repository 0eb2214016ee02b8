#pragma once

// The ingest thread: takes finished-game samples off a sample ring (shm/ring.h) and commits them to
// the replay store, continuously.
//
// Acknowledgement: a ring record is committed to the store (its bytes and commit marker in the
// mapped file) before the ring slot is released. So a process killed at any instruction leaves
// every record either committed or still in the ring (a record it held is handed to the next
// consumer by the ring's dead-consumer reclaim); the ingest journal (ingest_journal.h) drops the
// one record that was committed but not yet released, so nothing is stored twice.
//
// The ingestor does not know the records' layout: each record is checked by the injected
// IngestOptions::check before it is stored (the daemon builds it from its record layout);
// malformed records are counted and dropped, never stored. IngestOptions::model_version reads the
// model version a record was produced with, for the staleness metric.
//
// With a rate limiter that blocks inserts, the thread stops taking records while the limiter says
// wait: the ring fills and producers wait (up to their own timeout).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "core/base/status.h"
#include "core/replay/replay_store.h"
#include "services/replay/sample_ring.h"
#include "services/replay/server/ingest_journal.h"
#include "services/replay/server/rate_limiter.h"
#include "shm/ring.h"
#include "shm/scope.h"

namespace az::replayd {

// Checks one arriving record; an error (its message says what is wrong) drops it.
using RecordCheck = std::function<Status(std::span<const std::byte> record)>;
// The model version a record was produced with; nullopt when the records carry none.
using ModelVersionReader = std::function<std::optional<std::uint32_t>(std::span<const std::byte>)>;

struct IngestOptions {
  std::string journal_path;          // the ingest journal file (created if missing)
  RecordCheck check;                 // empty: every record is stored
  ModelVersionReader model_version;  // empty: no model versions
  std::size_t max_batch = 64;        // records taken per ring call
  // Test hook: SIGKILL this process after committing this many records, before releasing the
  // last one in the ring (the window the journal covers). 0: never.
  std::uint64_t crash_after = 0;
};

// Where the records come from: an open ring, and the identity of its segment's creation
// (RingIdentity), which the journal keys ring positions by.
struct IngestSource {
  shm::Ring ring;
  std::uint64_t ring_id = 0;
  std::string description;  // where the ring lives, for the log and `status`

  // The source for `ring`, the segment `name` of `scope`: reads its creation identity from the
  // segment header. NotFound when the segment is gone.
  static Result<IngestSource> Of(shm::Ring ring, const shm::Scope& scope, std::string_view name);
  // Opens (or creates) the run's sample ring that `options` names (sample_ring.h) and reads its
  // identity: what the daemon and az-relay, the ring's two kinds of reader, both do at start.
  static Result<IngestSource> Open(const SampleRingOptions& options);
};

struct IngestStats {
  std::uint64_t ingested = 0;           // records committed from the ring
  std::uint64_t rejected = 0;           // malformed records dropped
  std::uint64_t duplicates = 0;         // records the journal recognised as stored already
  std::uint64_t max_model_version = 0;  // largest provenance seen
  bool has_model_version = false;
  std::string last_rejection;  // why the latest malformed record was dropped
  shm::RingStats ring;
};

class Ingestor {
 public:
  // Opens (or creates) the journal and reclaims what a dead predecessor held in the ring; nothing
  // is taken before Start(). InvalidArgument when the ring's records are not the store's size;
  // errors of IngestJournal::Open. `store` and `limiter` must outlive the ingestor.
  static Result<std::unique_ptr<Ingestor>> Create(const IngestOptions& options, IngestSource source,
                                                  replay::ReplayStore& store, RateLimiter& limiter);
  Ingestor(const Ingestor&) = delete;
  Ingestor& operator=(const Ingestor&) = delete;
  ~Ingestor();  // Stop()

  // Starts the thread. Idempotent.
  void Start();
  // Finishes the record in hand and joins the thread (within about 100 ms). Idempotent.
  void Stop();
  // While paused the thread takes nothing from the ring (records wait there). Takes effect within
  // about 100 ms.
  void SetPaused(bool paused) { paused_.store(paused, std::memory_order_release); }

  IngestStats Stats() const;
  std::string RingDescription() const { return source_.description; }

 private:
  Ingestor(const IngestOptions& options, IngestSource source, replay::ReplayStore& store,
           RateLimiter& limiter, IngestJournal journal);
  void Loop();
  void Take(std::span<const std::byte> record, std::uint64_t position);

  IngestOptions options_;
  IngestSource source_;
  replay::ReplayStore& store_;
  RateLimiter& limiter_;
  IngestJournal journal_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<std::uint64_t> ingested_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> duplicates_{0};
  std::atomic<std::uint64_t> max_model_version_{0};
  std::atomic<bool> has_model_version_{false};
  mutable std::mutex mutex_;  // guards last_rejection_
  std::string last_rejection_;
};

}  // namespace az::replayd
