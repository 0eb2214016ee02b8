#include "services/replay/server/ingestor.h"

#include <signal.h>

#include <chrono>

#include "core/base/log.h"
#include "shm/segment.h"

namespace az::replayd {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);

}  // namespace

Result<IngestSource> IngestSource::Of(shm::Ring ring, const shm::Scope& scope,
                                      std::string_view name) {
  AZ_ASSIGN_OR_RETURN(shm::SegmentInfo info, shm::Segment::Inspect(scope, name));
  IngestSource source{.ring = std::move(ring)};
  source.ring_id = RingIdentity(info.header.creator_pid, info.header.creator_start_ticks,
                                info.header.created_unix_ns);
  source.description = info.location + " (" + std::to_string(source.ring.capacity()) +
                       " slots of " + std::to_string(source.ring.record_bytes()) + " bytes)";
  return source;
}

Result<IngestSource> IngestSource::Open(const SampleRingOptions& options) {
  AZ_ASSIGN_OR_RETURN(shm::Ring ring, OpenSampleRing(options));
  AZ_ASSIGN_OR_RETURN(shm::Scope scope, SampleRingScope(options));
  return Of(std::move(ring), scope, options.name);
}

Result<std::unique_ptr<Ingestor>> Ingestor::Create(const IngestOptions& options,
                                                   IngestSource source, replay::ReplayStore& store,
                                                   RateLimiter& limiter) {
  if (source.ring.record_bytes() != store.record_size()) {
    return InvalidArgument(
        "the sample ring's records (" + std::to_string(source.ring.record_bytes()) +
        " bytes) must be the store's (" + std::to_string(store.record_size()) + " bytes)");
  }
  if (options.max_batch < 1) return InvalidArgument("the ingest batch must be at least 1");
  AZ_ASSIGN_OR_RETURN(IngestJournal journal, IngestJournal::Open(options.journal_path));
  // A record our predecessor held when it died goes back to the ring now, not after the first
  // blocking wait.
  const std::size_t reclaimed = source.ring.ReclaimDead();
  AZ_LOG(kInfo) << "sample ring " << source.description << ": " << source.ring.Stats().occupancy
                << " records waiting" << (reclaimed ? ", reclaimed " : "")
                << (reclaimed ? std::to_string(reclaimed) + " slots of dead processes" : "");
  return std::unique_ptr<Ingestor>(
      new Ingestor(options, std::move(source), store, limiter, std::move(journal)));
}

Ingestor::Ingestor(const IngestOptions& options, IngestSource source, replay::ReplayStore& store,
                   RateLimiter& limiter, IngestJournal journal)
    : options_(options),
      source_(std::move(source)),
      store_(store),
      limiter_(limiter),
      journal_(std::move(journal)) {}

Ingestor::~Ingestor() { Stop(); }

void Ingestor::Start() {
  if (thread_.joinable()) return;
  stop_.store(false);
  thread_ = std::thread([this] { Loop(); });
}

void Ingestor::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  limiter_.Wake();
  thread_.join();
}

void Ingestor::Loop() {
  auto last_error_log = std::chrono::steady_clock::time_point{};
  while (!stop_.load(std::memory_order_acquire)) {
    if (paused_.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(kPoll);
      continue;
    }
    const std::uint64_t seen = limiter_.version();
    if (!limiter_.CanInsert(1)) {
      limiter_.CountInsertWait();
      limiter_.WaitForChange(seen, std::chrono::steady_clock::now() + kPoll);
      continue;
    }
    Result<std::size_t> taken =
        source_.ring.Consume(options_.max_batch, kPoll,
                             [this](std::span<const std::byte> record, std::uint64_t position) {
                               Take(record, position);
                             });
    if (!taken.ok() && taken.status().code() != StatusCode::kDeadlineExceeded) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_error_log > std::chrono::seconds(10)) {
        AZ_LOG(kError) << "taking samples from the ring: " << taken.status().ToString();
        last_error_log = now;
      }
      std::this_thread::sleep_for(kPoll);
    }
  }
}

// Runs inside the ring's visitor: the slot is held until this returns, so the record is committed
// (or deliberately dropped) before the ring releases it.
void Ingestor::Take(std::span<const std::byte> record, std::uint64_t position) {
  if (journal_.AlreadyStored(source_.ring_id, position, record, store_)) {
    duplicates_.fetch_add(1, std::memory_order_relaxed);
    AZ_LOG(kInfo) << "ring record at position " << position
                  << " was stored before a restart; not stored again";
    return;
  }
  if (Status valid = options_.check ? options_.check(record) : Status::Ok(); !valid.ok()) {
    const std::uint64_t count = rejected_.fetch_add(1, std::memory_order_relaxed) + 1;
    {
      std::lock_guard lock(mutex_);
      last_rejection_ = valid.message();
    }
    // The first few, then one in a thousand: a broken producer must not flood the log.
    if (count <= 10 || count % 1000 == 0) {
      AZ_LOG(kWarning) << "dropped malformed sample #" << count
                       << " from the ring: " << valid.ToString();
    }
    return;
  }
  journal_.Begin(source_.ring_id, position, store_.next_generation());
  std::uint64_t generation = 0;
  const Status inserted = store_.Insert(record, std::span(&generation, 1));
  AZ_CHECK(inserted.ok(), "inserting a ring record of the store's size: " + inserted.ToString());
  journal_.Commit(generation);
  limiter_.OnInsert(1);
  const std::optional<std::uint32_t> version =
      options_.model_version ? options_.model_version(record) : std::nullopt;
  if (version) {
    std::uint64_t seen = max_model_version_.load(std::memory_order_relaxed);
    while (*version > seen &&
           !max_model_version_.compare_exchange_weak(seen, *version, std::memory_order_relaxed)) {
    }
    has_model_version_.store(true, std::memory_order_relaxed);
  }
  const std::uint64_t count = ingested_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (options_.crash_after != 0 && count == options_.crash_after) {
    AZ_LOG(kWarning) << "test hook: killing this process after committing ring record " << position
                     << ", before releasing it";
    ::raise(SIGKILL);
  }
}

IngestStats Ingestor::Stats() const {
  IngestStats stats;
  stats.ingested = ingested_.load(std::memory_order_relaxed);
  stats.rejected = rejected_.load(std::memory_order_relaxed);
  stats.duplicates = duplicates_.load(std::memory_order_relaxed);
  stats.max_model_version = max_model_version_.load(std::memory_order_relaxed);
  stats.has_model_version = has_model_version_.load(std::memory_order_relaxed);
  stats.ring = source_.ring.Stats();
  std::lock_guard lock(mutex_);
  stats.last_rejection = last_rejection_;
  return stats;
}

}  // namespace az::replayd
