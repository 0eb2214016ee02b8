#pragma once

// Periodic and on-demand snapshots of the replay store (core/replay/snapshot.h: versioned,
// checksummed, written under a temporary name, synced and renamed), keeping the newest few.
//
// Files are <dir>/replay-<UTC time>-g<next generation, 16 digits>.azsnap, so names sort by age.
// Inserts, samples and updates go on while a snapshot is written. One snapshot at a time, on the
// snapshotter's own thread; a request made while one runs is answered when the next one finishes.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "core/replay/replay_store.h"

namespace az::replayd {

struct SnapshotterOptions {
  std::string dir;  // created if missing
  double interval_seconds =
      600;       // between the end of one snapshot and the next; 0: only on request
  int keep = 3;  // newest snapshots kept, >= 1
  // Bytes saved in each snapshot's metadata blob (the daemon's model version, limiter state).
  std::function<std::string()> metadata;
};

struct SnapshotResult {
  std::string path;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
};

struct SnapshotterStats {
  std::uint64_t written = 0;
  std::uint64_t failed = 0;
  bool in_progress = false;
  std::optional<SnapshotResult> last;  // the latest successful one
  std::chrono::system_clock::time_point last_time{};
  std::string last_error;
  double interval_seconds = 0;
  int keep = 0;
};

class Snapshotter {
 public:
  using Done = std::function<void(const Result<SnapshotResult>& result)>;

  // Creates the directory and removes temporary files a killed predecessor left there.
  // Unavailable when the directory cannot be created. `on_done` is called after every snapshot
  // (for metrics).
  static Result<std::unique_ptr<Snapshotter>> Create(const replay::ReplayStore& store,
                                                     const SnapshotterOptions& options,
                                                     Done on_done);
  Snapshotter(const Snapshotter&) = delete;
  Snapshotter& operator=(const Snapshotter&) = delete;
  ~Snapshotter();  // Stop()

  void Start();
  // Finishes the snapshot in progress (if any), then stops. Requests still queued are answered
  // CANCELLED. Idempotent.
  void Stop();

  // Writes a snapshot as soon as the one in progress (if any) is done; `done` gets the result on
  // the snapshotter's thread.
  void RequestNow(Done done);
  // Writes one on the caller's thread (for the final snapshot at exit, after Stop()).
  Result<SnapshotResult> WriteNow();

  // InvalidArgument for a negative or non-finite interval, or keep < 1.
  Status SetInterval(double seconds);
  Status SetKeep(int keep);
  SnapshotterStats Stats() const;

  // The newest snapshot in `dir` (by name); NotFound when there is none.
  static Result<std::string> Latest(const std::string& dir);
  // Every snapshot in `dir`, oldest first.
  static std::vector<std::string> List(const std::string& dir);

 private:
  Snapshotter(const replay::ReplayStore& store, const SnapshotterOptions& options, Done on_done);
  void Loop();
  Result<SnapshotResult> Write();
  void Prune();

  const replay::ReplayStore& store_;
  Done on_done_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  SnapshotterOptions options_;
  bool stop_ = false;
  std::vector<Done> requests_;
  SnapshotterStats stats_;
  std::mutex write_mutex_;  // one snapshot at a time (the thread, or WriteNow)
  std::thread thread_;
};

}  // namespace az::replayd
