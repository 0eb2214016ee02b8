#pragma once

// The prioritized replay store: a circular buffer of fixed-size records in a memory-mapped file,
// each slot with its priority and insert generation, and a sum-tree over the priorities for
// prioritized sampling (Schaul et al., 2016). Records are opaque bytes of a size fixed at creation;
// a typed layer can put a trivially copyable struct on top (std::as_bytes / std::as_writable_bytes
// of its span).
//
// Durability: every committed record survives the death of the process (a clean stop or SIGKILL)
// with its priority, because its bytes live in the mapped file and its commit marker is written
// last. A record being written when the process died is invisible after the next Open(). Flush()
// additionally protects against power loss. One process (one ReplayStore) at a time may hold the
// file open.
//
// Threads: every method may be called from any number of threads at once. One mutex guards the
// sum-tree and the slot bookkeeping; it is held for the tree work of a call (microseconds), never
// while record bytes are copied. Record copies are checked with the slot's commit marker (a
// seqlock), so a sampled or read record is never a mix of two inserts.
//
// Sampling: p_i = (loss_i + epsilon)^alpha; P(i) = p_i / sum_j p_j; one draw per equal slice of the
// total (stratified); weights w_i = (N P(i))^-beta normalised to a batch maximum of 1. New records
// enter at the largest priority currently in the buffer (initial_priority when none). alpha = 0 is
// exact uniform sampling over the stored records with weights 1 and no sum-tree at all.
//
// Withdrawn records: a record with priority 0 (withdrawn by Withdraw(), the learner's answer to a
// record it cannot decode, or given loss 0 with epsilon 0) is kept, read and snapshotted like any
// other but never drawn, with either kind of sampling, until an insert overwrites its slot.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "core/base/status.h"
#include "core/replay/mapped_file.h"
#include "core/replay/priority.h"
#include "core/replay/random.h"
#include "core/replay/sampling.h"
#include "core/replay/store_layout.h"
#include "core/replay/sum_tree.h"

namespace az::replay {

struct ReplayStoreOptions {
  enum class OpenMode {
    kOpenOrCreate,  // open the file if it exists, else create it
    kCreate,        // AlreadyExists if the file exists
    kOpen,          // NotFound if the file does not exist
  };
  std::string path;            // the store file
  std::uint64_t capacity = 0;  // slots, in [1, 2^32]; checked against an existing file
  std::uint64_t record_size =
      0;                  // bytes per record, in [1, 2^30]; checked against an existing file
  double alpha = 0.6;     // priority exponent in [0, 1]; checked against an existing file
  double epsilon = 1e-6;  // added to every loss, >= 0, so a zero loss keeps a chance
  double initial_priority = 1.0;  // priority of records inserted into a buffer with no priorities
  OpenMode mode = OpenMode::kOpenOrCreate;
};

// What Open() found in the file.
struct OpenReport {
  bool created = false;                     // the file was new
  std::uint64_t records = 0;                // committed records found
  std::uint64_t discarded_uncommitted = 0;  // slots left mid-write by a dead process, now empty
  std::uint64_t next_generation = 0;        // generation the next insert gets
};

// Counters and gauges for the daemon's metrics. A consistent snapshot taken under the lock.
struct ReplayStats {
  // Records held: the committed ones, and those an insert is overwriting until their
  // replacements commit (so a full buffer reads `capacity` throughout).
  std::uint64_t size = 0;
  std::uint64_t capacity = 0;
  std::uint64_t inserts = 0;          // generations ever issued (survives restarts)
  std::uint64_t samples = 0;          // draws returned by Sample() since Open()
  std::uint64_t updates_applied = 0;  // priority updates applied since Open()
  std::uint64_t updates_stale = 0;    // updates dropped: the slot was overwritten or emptied
  std::uint64_t values_rejected =
      0;                             // updates dropped: NaN, infinite or negative loss, or bad slot
  std::uint64_t values_clamped = 0;  // priorities raised or lowered into the representable range
  std::uint64_t withdrawn = 0;       // records held with priority 0, never drawn (see above)
  double priority_sum = 0;  // sum of p_i over stored records (N - withdrawn when alpha = 0)
  double priority_min = 0;  // smallest p_i above zero; 0 when empty
  double priority_max = 0;  // largest p_i; 0 when empty
};

struct UpdateCounts {
  std::uint64_t applied = 0;
  std::uint64_t stale = 0;
  std::uint64_t rejected = 0;
};

// A stored record's bookkeeping.
struct RecordInfo {
  std::uint64_t slot = 0;
  std::uint64_t generation = 0;
  double priority = 0;
};

class ReplayStore {
 public:
  // Opens or creates the store file and rebuilds the sum-tree from its slots; slots left mid-write
  // by a dead process are cleared. Errors: InvalidArgument for bad options; FailedPrecondition when
  // the file's header disagrees with the options (the message names the field and both values) or
  // another ReplayStore holds the file; DataLoss for a corrupt or truncated file;
  // NotFound/AlreadyExists per `mode`; Unavailable for I/O errors. Takes O(capacity) time.
  static Result<std::unique_ptr<ReplayStore>> Open(const ReplayStoreOptions& options);

  ReplayStore(const ReplayStore&) = delete;
  ReplayStore& operator=(const ReplayStore&) = delete;
  ~ReplayStore();

  const ReplayStoreOptions& options() const { return options_; }
  std::uint64_t capacity() const { return options_.capacity; }
  std::uint64_t record_size() const { return options_.record_size; }
  bool uniform() const { return options_.alpha == 0; }
  const OpenReport& open_report() const { return open_report_; }

  // Appends records.size() / record_size() records (records.size() must be a multiple), overwriting
  // the oldest once full. Each gets the next generation and the largest priority in the buffer.
  // When `generations` is non-empty it must have one entry per record and receives their
  // generations. Blocks on the store's mutex (held microseconds per call, not while bytes are
  // copied), while a Replace() runs, and, when more inserts are in flight than there are slots,
  // until the slot it needs is committed by its writer. InvalidArgument for a bad size.
  Status Insert(std::span<const std::byte> records, std::span<std::uint64_t> generations = {});

  // Draws batch.size() records with replacement (stratified by priority), fills `batch`, and, when
  // `records` is non-empty (then exactly batch.size() * record_size() bytes), copies each drawn
  // record into it in batch order. beta in [0, 1]. Never returns an empty or withdrawn
  // (zero-priority) slot. A record overwritten between the draw and its copy is drawn again.
  // FailedPrecondition when the buffer holds no sampleable record; InvalidArgument for bad
  // arguments; Unavailable if concurrent inserts kept overwriting the drawn slots (only plausible
  // with a handful of slots). Blocks on the mutex for the tree search (microseconds) and while a
  // Replace() runs.
  Status Sample(double beta, Rng& rng, std::span<SampledSlot> batch,
                std::span<std::byte> records = {});

  // Sets p = (loss + epsilon)^alpha for each update whose slot still holds its generation; others
  // are counted stale. NaN, infinite or negative losses and slots out of range are rejected and
  // counted. A withdrawn record keeps priority 0 (its update is counted stale). With alpha = 0
  // nothing is stored (priorities are all 1). Holds the mutex for the tree work only.
  UpdateCounts UpdatePriorities(std::span<const PriorityUpdate> updates);

  // Withdraws each record whose slot still holds its generation: priority 0, never drawn again
  // until its slot is overwritten (the record itself stays, for reads and snapshots). Counts them
  // applied (also when already withdrawn); another generation or an empty slot stale; a slot out of
  // range rejected. Works with either kind of sampling.
  UpdateCounts Withdraw(std::span<const RecordKey> records);

  // Copies the record in `slot` into `out` (record_size() bytes). InvalidArgument for a bad slot or
  // size; NotFound when the slot is empty or mid-write. Lock-free, except that it waits out a
  // Replace().
  Result<RecordInfo> ReadRecord(std::uint64_t slot, std::span<std::byte> out) const;

  // A consistent snapshot of the counters, taken under the mutex: O(1).
  ReplayStats Stats() const;

  // Writes the mapping to disk (msync). Not needed to survive a crash of the process; needed to
  // survive a power loss. Unavailable on an I/O error.
  Status Flush();

  // --- For snapshots (snapshot.h) ---

  std::uint64_t next_generation() const;

  // Calls `visit` for each committed record, oldest first, with its bytes. Records inserted after
  // the call starts are not visited; records overwritten meanwhile are skipped. Stops at the first
  // error `visit` returns and returns it. Holds the mutex only briefly at the start.
  Status ForEachRecord(
      const std::function<Status(const RecordInfo&, std::span<const std::byte>)>& visit) const;

  struct RestoredRecord {
    std::uint64_t generation = 0;      // strictly increasing across calls, < next_generation
    double priority = 0;               // finite, >= 0
    std::span<const std::byte> bytes;  // record_size() bytes
  };
  // Replaces the whole contents: empties every slot, then stores what `next` yields until it
  // returns false, each record in slot generation % capacity, and sets the next generation. Waits
  // for inserts in flight to finish and blocks every other call until done. Generations must fit
  // the ring (the last capacity() generations below next_generation). An error from `next` stops
  // the load and is returned; the store then holds the records stored so far (consistent, but
  // partial).
  Status Replace(std::uint64_t next_generation,
                 const std::function<Result<bool>(RestoredRecord*)>& next);

 private:
  struct Claim {
    std::uint64_t slot;
    std::uint64_t generation;
  };

  ReplayStore(const ReplayStoreOptions& options, MappedFile file);
  Status Recover();

  std::atomic_ref<std::uint64_t> State(std::uint64_t slot) const;
  std::atomic_ref<std::uint64_t> Units(std::uint64_t slot) const;
  std::byte* RecordData(std::uint64_t slot) const;
  // A slot's priority as callers see it: 1 for every held record with uniform sampling, 0 for a
  // withdrawn one.
  double PriorityOfUnits(std::uint64_t units) const {
    return uniform() ? (units != 0 ? 1.0 : 0.0) : scale_.ToPriority(units);
  }
  // Copies a committed record of generation `generation` out of its slot; false if the slot does
  // not hold that generation or was overwritten during the copy. *units (when given) gets the
  // slot's priority units read consistently with the bytes.
  bool CopyOut(std::uint64_t slot, std::uint64_t generation, std::span<std::byte> out,
               std::uint64_t* units) const;
  void WaitWhileReplacing() const;
  // The priority a new record gets: the largest in the buffer, or the initial priority.
  std::uint64_t NewRecordUnits() const;

  Status SamplePrioritized(Rng& rng, std::span<SampledSlot> batch, std::span<std::byte> records);
  Status SampleUniform(Rng& rng, std::span<SampledSlot> batch, std::span<std::byte> records);

  ReplayStoreOptions options_;
  MappedFile file_;
  StoreLayout layout_;
  SlotMeta* meta_;
  std::byte* data_;
  PriorityScale scale_;
  OpenReport open_report_;

  mutable std::mutex mutex_;
  // Signalled when inflight_ drops to 0 and when a Replace() ends.
  mutable std::condition_variable changed_;
  std::optional<SumTree> tree_;  // absent when alpha = 0
  // Guarded by mutex_ (atomics so that lock-free readers may peek at them):
  std::atomic<std::uint64_t> next_generation_{0};
  std::atomic<std::uint64_t> oldest_generation_{0};  // the ring window is [oldest, next)
  std::atomic<std::uint64_t> size_{0};
  std::uint64_t inflight_ = 0;   // claimed slots not yet committed
  std::uint64_t withdrawn_ = 0;  // committed records with priority units 0
  bool replacing_ = false;
  // Bumped by Replace(): a copy that straddles a Replace() is retried even if the slot's state
  // reads the same before and after.
  std::atomic<std::uint64_t> epoch_{0};

  std::atomic<std::uint64_t> samples_{0};
  std::atomic<std::uint64_t> updates_applied_{0};
  std::atomic<std::uint64_t> updates_stale_{0};
  std::atomic<std::uint64_t> values_rejected_{0};
  std::atomic<std::uint64_t> values_clamped_{0};
};

}  // namespace az::replay
