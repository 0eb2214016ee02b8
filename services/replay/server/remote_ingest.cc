#include "services/replay/server/remote_ingest.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <system_error>

#include "core/base/log.h"

namespace az::replayd {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kJournalSuffix = ".journal";

std::int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The last sequence number the journal says is handled, and the one left uncertain by a daemon
// killed mid-insert (0: none).
struct LedgerState {
  std::uint64_t done = 0;
  std::uint64_t uncertain = 0;
};

LedgerState StateOf(const JournalEntry& entry, std::uint64_t tag) {
  if (entry.ring_id != tag) return {};
  if (entry.state == JournalEntry::kCommitted) return {entry.position, 0};
  if (entry.state == JournalEntry::kInserting) return {entry.position - 1, entry.position};
  return {};
}

}  // namespace

Status ValidateHostName(std::string_view host) {
  const bool ok = !host.empty() && host.size() <= 64 &&
                  std::all_of(host.begin(), host.end(),
                              [](char c) {
                                return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                                       c == '_' || c == '-';
                              }) &&
                  host != "." && host != "..";
  if (ok) return Status::Ok();
  return InvalidArgument("a host name is 1 to 64 characters of [A-Za-z0-9._-], got \"" +
                         std::string(host.substr(0, 80)) + "\"");
}

std::uint64_t HostTag(std::string_view host) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : host) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h | 1;  // never 0, which a fresh journal entry holds
}

Result<std::unique_ptr<RemoteIngest>> RemoteIngest::Open(const RemoteIngestOptions& options,
                                                         replay::ReplayStore& store,
                                                         RateLimiter& limiter) {
  std::error_code error;
  fs::create_directories(options.dir, error);
  if (error) {
    return Unavailable("creating the remote hosts' journal directory " + options.dir + ": " +
                       error.message());
  }
  std::unique_ptr<RemoteIngest> ingest(new RemoteIngest(options, store, limiter));
  for (const fs::directory_entry& file : fs::directory_iterator(options.dir, error)) {
    const std::string name = file.path().filename().string();
    if (!name.ends_with(kJournalSuffix)) continue;
    const std::string host = name.substr(0, name.size() - kJournalSuffix.size());
    if (!ValidateHostName(host).ok()) continue;
    AZ_RETURN_IF_ERROR(ingest->HostFor(host).status());
  }
  if (error) return Unavailable("listing " + options.dir + ": " + error.message());
  return ingest;
}

Result<RemoteIngest::Host*> RemoteIngest::HostFor(std::string_view host) {
  std::lock_guard lock(mutex_);
  if (auto found = hosts_.find(host); found != hosts_.end()) return found->second.get();
  AZ_RETURN_IF_ERROR(ValidateHostName(host));
  if (hosts_.size() >= kMaxRemoteHosts) {
    return ResourceExhausted("this daemon already takes samples from " +
                             std::to_string(kMaxRemoteHosts) + " hosts; host " + std::string(host) +
                             " is refused");
  }
  const std::string path = options_.dir + "/" + std::string(host) + std::string(kJournalSuffix);
  AZ_ASSIGN_OR_RETURN(IngestJournal journal, IngestJournal::Open(path));
  auto entry = std::make_unique<Host>(Host{std::move(journal), {}});
  const LedgerState state = StateOf(entry->journal.entry(), HostTag(host));
  entry->stats.committed_through = state.done;
  if (state.uncertain != 0) {
    AZ_LOG(kInfo) << "host " << host << ": sample " << state.uncertain
                  << " was being stored when the daemon stopped; it is checked when pushed again";
  }
  Host* raw = entry.get();
  hosts_.emplace(std::string(host), std::move(entry));
  return raw;
}

Result<PushResult> RemoteIngest::Push(std::string_view host, std::uint64_t first_seq,
                                      std::span<const std::byte> records) {
  const std::size_t record_bytes = store_.record_size();
  if (first_seq == 0) return InvalidArgument("sequence numbers start at 1");
  if (records.empty() || records.size() % record_bytes != 0) {
    return InvalidArgument("a push of " + std::to_string(records.size()) +
                           " bytes is not a whole, non-zero number of " +
                           std::to_string(record_bytes) + "-byte records");
  }
  const std::uint64_t count = records.size() / record_bytes;
  AZ_ASSIGN_OR_RETURN(Host * entry, HostFor(host));
  const std::uint64_t tag = HostTag(host);
  const LedgerState before = StateOf(entry->journal.entry(), tag);
  const std::uint64_t fresh =
      first_seq + count - 1 > before.done ? first_seq + count - 1 - before.done : 0;
  if (fresh > 0 && !limiter_.CanInsert(std::min(fresh, count))) {
    return ResourceExhausted(
        "the rate limiter holds inserts back (the learner is behind); push "
        "again later");
  }

  PushResult result;
  std::uint64_t gaps = 0;
  std::string last_rejection;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t seq = first_seq + i;
    const std::span<const std::byte> record = records.subspan(i * record_bytes, record_bytes);
    const LedgerState state = StateOf(entry->journal.entry(), tag);
    if (seq <= state.done) {
      ++result.duplicates;
      continue;
    }
    if (seq == state.uncertain && entry->journal.AlreadyStored(tag, seq, record, store_)) {
      entry->journal.Commit(0);  // it was stored before the restart; the ledger catches up
      ++result.duplicates;
      continue;
    }
    if (seq > state.done + 1) gaps += seq - state.done - 1;
    if (Status valid = options_.check ? options_.check(record) : Status::Ok(); !valid.ok()) {
      // Past it for good: the relay must not push a malformed record forever.
      entry->journal.Begin(tag, seq, store_.next_generation());
      entry->journal.Commit(0);
      if (result.rejected++ == 0) result.first_rejection = valid.message();
      last_rejection = valid.message();
      continue;
    }
    entry->journal.Begin(tag, seq, store_.next_generation());
    std::uint64_t generation = 0;
    AZ_RETURN_IF_ERROR(store_.Insert(record, std::span(&generation, 1)));
    if (options_.crash_after != 0 && ++inserted_ == options_.crash_after) {
      AZ_LOG(kWarning) << "test hook: killing this process after storing sample " << seq
                       << " of host " << host << ", before its journal commit";
      ::raise(SIGKILL);
    }
    entry->journal.Commit(generation);
    ++result.stored;
    if (options_.model_version) {
      if (std::optional<std::uint32_t> version = options_.model_version(record)) {
        max_model_version_.store(std::max<std::uint64_t>(max_model_version_.load(), *version));
      }
    }
  }
  if (result.stored > 0) limiter_.OnInsert(result.stored);
  result.committed_through = StateOf(entry->journal.entry(), tag).done;

  if (gaps > 0) {
    AZ_LOG(kWarning) << "host " << host << " pushed from sample " << first_seq << " where "
                     << before.done + 1 << " was next: " << gaps
                     << " samples skipped (its spool lost them, or this store was replaced)";
  }
  if (result.rejected > 0) {
    AZ_LOG(kWarning) << "host " << host << ": dropped " << result.rejected
                     << " malformed samples: " << result.first_rejection;
  }
  std::lock_guard lock(mutex_);
  RemoteHostStats& stats = entry->stats;
  stats.committed_through = result.committed_through;
  stats.stored += result.stored;
  stats.duplicates += result.duplicates;
  stats.rejected += result.rejected;
  stats.gaps += gaps;
  ++stats.pushes;
  stats.last_push_unix_ms = NowUnixMs();
  if (!last_rejection.empty()) stats.last_rejection = last_rejection;
  return result;
}

std::map<std::string, RemoteHostStats> RemoteIngest::Stats() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, RemoteHostStats> stats;
  for (const auto& [name, host] : hosts_) stats.emplace(name, host->stats);
  return stats;
}

}  // namespace az::replayd
