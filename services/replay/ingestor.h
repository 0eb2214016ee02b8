#pragma once

// The ingest thread: takes finished-game samples off the run's sample ring and commits them to the
// replay store, continuously.
//
// Acknowledgement: a ring record is committed to the store (its bytes and commit marker in the
// mapped file) before the ring slot is released. So a daemon killed at any instruction leaves every
// record either committed or still in the ring (a record it held is handed to the next consumer by
// the ring's dead-consumer reclaim); the ingest journal (ingest_journal.h) drops the one record
// that was committed but not yet released, so nothing is stored twice. Malformed records (chess
// layout: sample::ValidateSample, legal-move check) are counted and dropped, never stored.
//
// With a rate limiter that blocks inserts, the thread stops taking records while the limiter says
// wait: the ring fills and producers wait (up to their own timeout).

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/base/status.h"
#include "core/replay/replay_store.h"
#include "services/replay/ingest_journal.h"
#include "services/replay/rate_limiter.h"
#include "services/replay/record_layout.h"
#include "services/replay/sample_ring.h"
#include "shm/ring.h"

namespace az::replayd {

struct IngestOptions {
  SampleRingOptions ring;    // record_bytes must equal the store's record size
  std::string journal_path;  // the ingest journal file
  RecordLayout layout = RecordLayout::kChess;
  std::size_t max_batch = 64;  // records taken per ring call
  // Test hook: SIGKILL this process after committing this many records, before releasing the
  // last one in the ring (the window the journal covers). 0: never.
  std::uint64_t crash_after = 0;
};

struct IngestStats {
  std::uint64_t ingested = 0;           // records committed from the ring
  std::uint64_t rejected = 0;           // malformed records dropped
  std::uint64_t duplicates = 0;         // records the journal recognised as stored already
  std::uint64_t max_model_version = 0;  // largest provenance seen (chess layout)
  bool has_model_version = false;
  std::string last_rejection;  // why the latest malformed record was dropped
  shm::RingStats ring;
};

class Ingestor {
 public:
  // Opens (or creates) the sample ring and the journal and reclaims what a dead predecessor held.
  // Errors of OpenSampleRing and IngestJournal::Open.
  static Result<std::unique_ptr<Ingestor>> Create(const IngestOptions& options,
                                                  replay::ReplayStore& store, RateLimiter& limiter);
  Ingestor(const Ingestor&) = delete;
  Ingestor& operator=(const Ingestor&) = delete;
  ~Ingestor();  // Stop()

  // Starts the thread. Idempotent.
  void Start();
  // Finishes the record in hand and joins the thread (within about 100 ms). Idempotent.
  void Stop();
  // While paused the thread takes nothing from the ring (records wait there).
  void SetPaused(bool paused) { paused_.store(paused, std::memory_order_release); }

  IngestStats Stats() const;
  std::string RingDescription() const { return ring_description_; }

 private:
  Ingestor(const IngestOptions& options, replay::ReplayStore& store, RateLimiter& limiter,
           shm::Ring ring, IngestJournal journal, std::uint64_t ring_id, std::string description);
  void Loop();
  void Take(std::span<const std::byte> record, std::uint64_t position);

  IngestOptions options_;
  replay::ReplayStore& store_;
  RateLimiter& limiter_;
  shm::Ring ring_;
  IngestJournal journal_;
  std::uint64_t ring_id_;
  std::string ring_description_;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::atomic<std::uint64_t> ingested_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> duplicates_{0};
  std::atomic<std::uint64_t> max_model_version_{0};
  std::atomic<bool> has_model_version_{false};
  mutable std::mutex mutex_;  // guards last_rejection_ and ring_ stats reads
  std::string last_rejection_;
};

}  // namespace az::replayd
