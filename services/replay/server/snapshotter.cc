#include "services/replay/server/snapshotter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "core/base/log.h"
#include "core/replay/snapshot.h"

namespace az::replayd {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "replay-";
constexpr std::string_view kSuffix = ".azsnap";

bool IsSnapshotName(const std::string& name) {
  return name.starts_with(kPrefix) && name.ends_with(kSuffix);
}

std::string SnapshotName(std::uint64_t next_generation) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[96];
  std::snprintf(text, sizeof text, "replay-%04d%02d%02dT%02d%02d%02dZ-g%016llu.azsnap",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                utc.tm_sec, static_cast<unsigned long long>(next_generation));
  return text;
}

}  // namespace

Result<std::unique_ptr<Snapshotter>> Snapshotter::Create(const replay::ReplayStore& store,
                                                         const SnapshotterOptions& options,
                                                         Done on_done) {
  if (!(options.interval_seconds >= 0) || !std::isfinite(options.interval_seconds)) {
    return InvalidArgument("the snapshot interval must be >= 0 seconds");
  }
  if (options.keep < 1) return InvalidArgument("snapshot keep must be at least 1");
  std::error_code error;
  fs::create_directories(options.dir, error);
  if (error) {
    return Unavailable("creating the snapshot directory " + options.dir + ": " + error.message());
  }
  // The daemon holds the store's lock, so no other process writes snapshots here: temporary files
  // are leftovers of a predecessor killed mid-write.
  for (const auto& entry : fs::directory_iterator(options.dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(kPrefix) &&
        name.find(std::string(kSuffix) + ".tmp.") != std::string::npos) {
      fs::remove(entry.path(), error);
      AZ_LOG(kInfo) << "removed the unfinished snapshot " << entry.path().string();
    }
  }
  return std::unique_ptr<Snapshotter>(new Snapshotter(store, options, std::move(on_done)));
}

Snapshotter::Snapshotter(const replay::ReplayStore& store, const SnapshotterOptions& options,
                         Done on_done)
    : store_(store), on_done_(std::move(on_done)), options_(options) {
  stats_.interval_seconds = options.interval_seconds;
  stats_.keep = options.keep;
}

Snapshotter::~Snapshotter() { Stop(); }

void Snapshotter::Start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { Loop(); });
}

void Snapshotter::Stop() {
  std::vector<Done> pending;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(mutex_);
    pending.swap(requests_);
  }
  for (Done& done : pending) done(Cancelled("the replay daemon is shutting down"));
}

void Snapshotter::RequestNow(Done done) {
  {
    std::lock_guard lock(mutex_);
    if (stop_) {
      done(Cancelled("the replay daemon is shutting down"));
      return;
    }
    requests_.push_back(std::move(done));
  }
  wake_.notify_all();
}

Status Snapshotter::SetInterval(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) {
    return InvalidArgument("the snapshot interval must be a finite number of seconds >= 0");
  }
  {
    std::lock_guard lock(mutex_);
    options_.interval_seconds = seconds;
    stats_.interval_seconds = seconds;
  }
  wake_.notify_all();
  return Status::Ok();
}

Status Snapshotter::SetKeep(int keep) {
  if (keep < 1) return InvalidArgument("snapshot keep must be at least 1");
  std::lock_guard lock(mutex_);
  options_.keep = keep;
  stats_.keep = keep;
  return Status::Ok();
}

SnapshotterStats Snapshotter::Stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Snapshotter::Loop() {
  auto last_end = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!stop_) {
    const double interval = options_.interval_seconds;
    const auto due = last_end + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(interval));
    const bool periodic_due = interval > 0 && std::chrono::steady_clock::now() >= due;
    if (requests_.empty() && !periodic_due) {
      if (interval > 0) {
        wake_.wait_until(lock, due);
      } else {
        wake_.wait(lock);
      }
      continue;
    }
    std::vector<Done> answering;
    answering.swap(requests_);
    lock.unlock();
    Result<SnapshotResult> result = WriteNow();
    for (Done& done : answering) done(result);
    lock.lock();
    last_end = std::chrono::steady_clock::now();
  }
}

Result<SnapshotResult> Snapshotter::WriteNow() {
  std::lock_guard write(write_mutex_);
  {
    std::lock_guard lock(mutex_);
    stats_.in_progress = true;
  }
  Result<SnapshotResult> result = Write();
  {
    std::lock_guard lock(mutex_);
    stats_.in_progress = false;
    if (result.ok()) {
      ++stats_.written;
      stats_.last = *result;
      stats_.last_time = std::chrono::system_clock::now();
    } else {
      ++stats_.failed;
      stats_.last_error = result.status().ToString();
    }
  }
  if (result.ok()) {
    AZ_LOG(kInfo) << "snapshot " << result->path << ": " << result->records << " records, "
                  << result->bytes << " bytes in " << result->seconds << " s";
    Prune();
  } else {
    AZ_LOG(kError) << "snapshot failed: " << result.status().ToString();
  }
  if (on_done_) on_done_(result);
  return result;
}

Result<SnapshotResult> Snapshotter::Write() {
  std::string dir;
  std::string metadata;
  {
    std::lock_guard lock(mutex_);
    dir = options_.dir;
  }
  if (options_.metadata) metadata = options_.metadata();
  const auto start = std::chrono::steady_clock::now();
  const std::string path = (fs::path(dir) / SnapshotName(store_.next_generation())).string();
  AZ_ASSIGN_OR_RETURN(
      std::uint64_t records,
      replay::SaveSnapshot(store_, path,
                           std::as_bytes(std::span(metadata.data(), metadata.size()))));
  SnapshotResult result;
  result.path = path;
  result.records = records;
  std::error_code error;
  result.bytes = fs::file_size(path, error);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void Snapshotter::Prune() {
  int keep;
  std::string dir;
  {
    std::lock_guard lock(mutex_);
    keep = options_.keep;
    dir = options_.dir;
  }
  std::vector<std::string> all = List(dir);
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < all.size(); ++i) {
    std::error_code error;
    fs::remove(all[i], error);
    if (error) {
      AZ_LOG(kWarning) << "removing the old snapshot " << all[i] << ": " << error.message();
    }
  }
}

std::vector<std::string> Snapshotter::List(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (IsSnapshotName(name) && entry.is_regular_file(error)) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::string> Snapshotter::Latest(const std::string& dir) {
  std::vector<std::string> all = List(dir);
  if (all.empty()) return NotFound("no snapshot (replay-*.azsnap) in " + dir);
  return all.back();
}

}  // namespace az::replayd
