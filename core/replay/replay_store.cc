#include "core/replay/replay_store.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "core/base/check.h"

namespace az::replay {
namespace {

constexpr std::uint64_t kMaxCapacity = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxRecordSize = std::uint64_t{1} << 30;
// A copy fails only when an insert overwrites the slot during the copy; this many failures in a row
// means inserts lap the whole ring faster than one record can be copied.
constexpr int kMaxCopyAttempts = 1000;
constexpr std::size_t kMaxClaimsPerRound = 256;

// Record bytes move a 64-bit word at a time through atomics: a reader may overlap a writer of the
// same slot (it then notices and discards its copy, seqlock style), and atomics make that overlap
// defined behaviour, also for ThreadSanitizer. Stores are release and loads acquire, which orders a
// slot's state word around its bytes without standalone fences (which ThreadSanitizer cannot
// model): a reader that sees any new byte also sees the writing mark stored before it. On x86-64
// these are plain moves either way.
void CopyToSlot(std::byte* slot, std::span<const std::byte> src) {
  auto* words = reinterpret_cast<std::uint64_t*>(slot);
  const std::size_t full = src.size() / 8;
  for (std::size_t i = 0; i < full; ++i) {
    std::uint64_t word;
    std::memcpy(&word, src.data() + 8 * i, 8);
    std::atomic_ref<std::uint64_t>(words[i]).store(word, std::memory_order_release);
  }
  if (const std::size_t tail = src.size() % 8; tail != 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, src.data() + 8 * full, tail);
    std::atomic_ref<std::uint64_t>(words[full]).store(word, std::memory_order_release);
  }
}

void CopyFromSlot(std::byte* slot, std::span<std::byte> dst) {
  auto* words = reinterpret_cast<std::uint64_t*>(slot);
  const std::size_t full = dst.size() / 8;
  for (std::size_t i = 0; i < full; ++i) {
    const std::uint64_t word =
        std::atomic_ref<std::uint64_t>(words[i]).load(std::memory_order_acquire);
    std::memcpy(dst.data() + 8 * i, &word, 8);
  }
  if (const std::size_t tail = dst.size() % 8; tail != 0) {
    const std::uint64_t word =
        std::atomic_ref<std::uint64_t>(words[full]).load(std::memory_order_acquire);
    std::memcpy(dst.data() + 8 * full, &word, tail);
  }
}

// The shortest text that reads back as the same double: "0.6", not "0.59999999999999998".
std::string Number(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

Status ValidateOptions(const ReplayStoreOptions& o) {
  if (o.path.empty()) return InvalidArgument("replay store path is empty");
  if (o.capacity < 1 || o.capacity > kMaxCapacity) {
    return InvalidArgument("replay capacity must be in [1, 2^32], got " +
                           std::to_string(o.capacity));
  }
  if (o.record_size < 1 || o.record_size > kMaxRecordSize) {
    return InvalidArgument("replay record size must be in [1, 2^30] bytes, got " +
                           std::to_string(o.record_size));
  }
  if (!(o.alpha >= 0 && o.alpha <= 1)) {
    return InvalidArgument("replay alpha must be in [0, 1], got " + Number(o.alpha));
  }
  if (!(o.epsilon >= 0 && std::isfinite(o.epsilon))) {
    return InvalidArgument("replay epsilon must be finite and >= 0, got " + Number(o.epsilon));
  }
  if (!(o.initial_priority > 0 && o.initial_priority <= PriorityScale::kMaxPriority)) {
    return InvalidArgument("replay initial priority must be in (0, 65536], got " +
                           Number(o.initial_priority));
  }
  return Status::Ok();
}

void WriteHeader(std::span<std::byte> file, const ReplayStoreOptions& o, const StoreLayout& layout,
                 int fraction_bits) {
  StoreHeader header{};
  std::memcpy(header.magic, kStoreMagic, sizeof(header.magic));
  header.layout_version = kStoreLayoutVersion;
  header.header_size = sizeof(StoreHeader);
  header.record_size = o.record_size;
  header.record_stride = layout.record_stride;
  header.capacity = o.capacity;
  header.alpha = o.alpha;
  header.priority_fraction_bits = static_cast<std::uint32_t>(fraction_bits);
  header.meta_offset = layout.meta_offset;
  header.data_offset = layout.data_offset;
  header.file_size = layout.file_size;
  header.creator_pid = static_cast<std::uint64_t>(::getpid());
  header.created_unix_seconds =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  std::memcpy(file.data(), &header, sizeof(header));
}

Status CheckHeader(std::span<const std::byte> file, const ReplayStoreOptions& o,
                   const StoreLayout& layout, int fraction_bits) {
  const std::string where = "replay store " + o.path + ": ";
  if (file.size() < sizeof(StoreHeader)) {
    return DataLoss(where + "file is " + std::to_string(file.size()) +
                    " bytes, too small for a replay store header");
  }
  StoreHeader h;
  std::memcpy(&h, file.data(), sizeof(h));
  if (std::memcmp(h.magic, kStoreMagic, sizeof(h.magic)) != 0) {
    return FailedPrecondition(where + "not a replay store (the magic is not AZREPLAY)");
  }
  if (h.layout_version != kStoreLayoutVersion) {
    return FailedPrecondition(where + "layout version in the file is " +
                              std::to_string(h.layout_version) + ", this build reads " +
                              std::to_string(kStoreLayoutVersion));
  }
  std::vector<std::string> differences;
  if (h.record_size != o.record_size) {
    differences.push_back("record size in the file is " + std::to_string(h.record_size) +
                          " bytes, the options ask for " + std::to_string(o.record_size));
  }
  if (h.capacity != o.capacity) {
    differences.push_back("capacity in the file is " + std::to_string(h.capacity) +
                          " slots, the options ask for " + std::to_string(o.capacity));
  }
  if (h.alpha != o.alpha) {
    differences.push_back("alpha in the file is " + Number(h.alpha) + ", the options ask for " +
                          Number(o.alpha));
  }
  if (!differences.empty()) {
    std::string message = where + "header does not match the options: ";
    for (std::size_t i = 0; i < differences.size(); ++i) {
      message += (i == 0 ? "" : "; ") + differences[i];
    }
    return FailedPrecondition(message);
  }
  if (h.header_size != sizeof(StoreHeader) || h.record_stride != layout.record_stride ||
      h.meta_offset != layout.meta_offset || h.data_offset != layout.data_offset ||
      h.file_size != layout.file_size ||
      h.priority_fraction_bits != static_cast<std::uint32_t>(fraction_bits)) {
    return DataLoss(where +
                    "header layout fields (sizes, offsets, priority scale) are inconsistent "
                    "with its record size and capacity: the header is corrupt");
  }
  if (file.size() < layout.file_size) {
    return DataLoss(where + "file is " + std::to_string(file.size()) + " bytes, its header needs " +
                    std::to_string(layout.file_size) + ": truncated");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<ReplayStore>> ReplayStore::Open(const ReplayStoreOptions& options) {
  AZ_RETURN_IF_ERROR(ValidateOptions(options));
  const StoreLayout layout = ComputeStoreLayout(options.capacity, options.record_size);
  const PriorityScale scale(options.capacity);
  using Mode = ReplayStoreOptions::OpenMode;
  auto create = [&] {
    return MappedFile::Create(options.path, layout.file_size, [&](std::span<std::byte> file) {
      WriteHeader(file, options, layout, scale.fraction_bits());
    });
  };
  bool created = false;
  Result<MappedFile> file = NotFound("");
  switch (options.mode) {
    case Mode::kOpen: file = MappedFile::Open(options.path); break;
    case Mode::kCreate:
      file = create();
      created = file.ok();
      break;
    case Mode::kOpenOrCreate:
      file = MappedFile::Open(options.path);
      if (!file.ok() && file.status().code() == StatusCode::kNotFound) {
        file = create();
        created = file.ok();
        // Lost a creation race with another process: open what it made.
        if (!file.ok() && file.status().code() == StatusCode::kAlreadyExists) {
          file = MappedFile::Open(options.path);
        }
      }
      break;
  }
  if (!file.ok()) return file.status().WithContext("opening replay store");
  AZ_RETURN_IF_ERROR(CheckHeader(file->bytes(), options, layout, scale.fraction_bits()));
  std::unique_ptr<ReplayStore> store(new ReplayStore(options, std::move(file).value()));
  store->open_report_.created = created;
  AZ_RETURN_IF_ERROR(store->Recover());
  return store;
}

ReplayStore::ReplayStore(const ReplayStoreOptions& options, MappedFile file)
    : options_(options),
      file_(std::move(file)),
      layout_(ComputeStoreLayout(options.capacity, options.record_size)),
      meta_(reinterpret_cast<SlotMeta*>(file_.bytes().data() + layout_.meta_offset)),
      data_(file_.bytes().data() + layout_.data_offset),
      scale_(options.capacity) {
  if (!uniform()) tree_.emplace(options.capacity);
}

ReplayStore::~ReplayStore() {
  std::lock_guard lock(mutex_);
  auto* header = reinterpret_cast<StoreHeader*>(file_.bytes().data());
  std::atomic_ref<std::uint64_t>(header->next_generation_floor)
      .store(next_generation_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

std::atomic_ref<std::uint64_t> ReplayStore::State(std::uint64_t slot) const {
  return std::atomic_ref<std::uint64_t>(meta_[slot].state);
}
std::atomic_ref<std::uint64_t> ReplayStore::Units(std::uint64_t slot) const {
  return std::atomic_ref<std::uint64_t>(meta_[slot].priority_units);
}
std::byte* ReplayStore::RecordData(std::uint64_t slot) const {
  return data_ + slot * layout_.record_stride;
}

Status ReplayStore::Recover() {
  const std::uint64_t capacity = options_.capacity;
  const std::uint64_t one = scale_.ToUnits(1.0);
  std::vector<std::uint64_t> leaves(tree_ ? capacity : 0, 0);
  std::uint64_t records = 0;
  std::uint64_t withdrawn = 0;
  std::uint64_t discarded = 0;
  std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t newest = 0;
  const std::string where = "replay store " + options_.path + ": ";
  for (std::uint64_t slot = 0; slot < capacity; ++slot) {
    const std::uint64_t state = State(slot).load(std::memory_order_relaxed);
    if (state == kSlotEmpty) continue;
    if (IsWriting(state)) {
      // A writer died between claiming this slot and committing it: its bytes are incomplete.
      State(slot).store(kSlotEmpty, std::memory_order_relaxed);
      Units(slot).store(0, std::memory_order_relaxed);
      ++discarded;
      continue;
    }
    const std::uint64_t generation = GenerationOf(state);
    if (generation % capacity != slot) {
      return DataLoss(where + "slot " + std::to_string(slot) + " holds generation " +
                      std::to_string(generation) + ", which belongs in slot " +
                      std::to_string(generation % capacity) + ": the file is corrupt");
    }
    std::uint64_t units = Units(slot).load(std::memory_order_relaxed);
    if (units > scale_.max_units()) {
      return DataLoss(where + "slot " + std::to_string(slot) + " has priority units " +
                      std::to_string(units) + ", above the maximum " +
                      std::to_string(scale_.max_units()) + ": the file is corrupt");
    }
    // Uniform sampling keeps no priorities, only whether a record is withdrawn (0).
    if (uniform() && units != 0) units = one;
    if (tree_) leaves[slot] = units;
    withdrawn += units == 0 ? 1 : 0;
    ++records;
    oldest = std::min(oldest, generation);
    newest = std::max(newest, generation);
  }
  if (records > 0 && newest - oldest >= capacity) {
    return DataLoss(where + "stored generations span " + std::to_string(oldest) + ".." +
                    std::to_string(newest) + ", more than the capacity: the file is corrupt");
  }
  const auto* header = reinterpret_cast<const StoreHeader*>(file_.bytes().data());
  std::uint64_t next = records > 0 ? newest + 1 : 0;
  next = std::max(next, header->next_generation_floor);
  if (tree_) tree_->Assign(leaves);
  std::lock_guard lock(mutex_);
  next_generation_.store(next, std::memory_order_relaxed);
  oldest_generation_.store(records > 0 ? oldest : next, std::memory_order_relaxed);
  size_.store(records, std::memory_order_relaxed);
  withdrawn_ = withdrawn;
  open_report_.records = records;
  open_report_.discarded_uncommitted = discarded;
  open_report_.next_generation = next;
  return Status::Ok();
}

std::uint64_t ReplayStore::NewRecordUnits() const {
  if (!tree_) return scale_.ToUnits(1.0);
  const std::uint64_t max = tree_->Max();
  return max > 0 ? max : scale_.ToUnits(options_.initial_priority);
}

Status ReplayStore::Insert(std::span<const std::byte> records,
                           std::span<std::uint64_t> generations) {
  const std::uint64_t record_size = options_.record_size;
  const std::uint64_t capacity = options_.capacity;
  if (records.size() % record_size != 0) {
    return InvalidArgument("insert of " + std::to_string(records.size()) +
                           " bytes is not a whole number of " + std::to_string(record_size) +
                           "-byte records");
  }
  const std::size_t count = records.size() / record_size;
  if (!generations.empty() && generations.size() != count) {
    return InvalidArgument("insert of " + std::to_string(count) + " records given room for " +
                           std::to_string(generations.size()) + " generations");
  }
  Claim claims[kMaxClaimsPerRound];
  std::uint64_t tree_slots[kMaxClaimsPerRound];
  std::uint64_t tree_units[kMaxClaimsPerRound];
  static constexpr std::uint64_t zeros[kMaxClaimsPerRound] = {};
  std::size_t done = 0;
  while (done < count) {
    std::size_t claimed = 0;
    std::size_t removed = 0;  // committed records this round overwrites
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !replacing_; });
      std::uint64_t next = next_generation_.load(std::memory_order_relaxed);
      while (claimed < kMaxClaimsPerRound && done + claimed < count) {
        const std::uint64_t slot = next % capacity;
        const std::uint64_t state = State(slot).load(std::memory_order_relaxed);
        // Another insert still copies into this slot: more records are in flight than there are
        // slots. Commit what we claimed (or wait for it) before going on.
        if (IsWriting(state)) break;
        if (IsCommitted(state)) {
          tree_slots[removed++] = slot;
          if (Units(slot).load(std::memory_order_relaxed) == 0) --withdrawn_;
        }
        State(slot).store(WritingState(next), std::memory_order_relaxed);
        Units(slot).store(0, std::memory_order_relaxed);
        claims[claimed++] = {slot, next};
        ++next;
      }
      if (tree_) {
        // The overwritten records leave the tree now; the new ones enter it when committed.
        tree_->SetMany(std::span(tree_slots).first(removed), std::span(zeros).first(removed));
      }
      next_generation_.store(next, std::memory_order_relaxed);
      if (next - oldest_generation_.load(std::memory_order_relaxed) > capacity) {
        oldest_generation_.store(next - capacity, std::memory_order_relaxed);
      }
      inflight_ += claimed;
    }
    if (claimed == 0) {
      std::this_thread::yield();
      continue;
    }
    for (std::size_t i = 0; i < claimed; ++i) {
      CopyToSlot(RecordData(claims[i].slot),
                 records.subspan((done + i) * record_size, record_size));
    }
    {
      std::lock_guard lock(mutex_);
      const std::uint64_t units = NewRecordUnits();
      for (std::size_t i = 0; i < claimed; ++i) {
        const Claim& claim = claims[i];
        AZ_CHECK(
            State(claim.slot).load(std::memory_order_relaxed) == WritingState(claim.generation),
            "a claimed replay slot changed hands before its commit");
        Units(claim.slot).store(units, std::memory_order_relaxed);
        // The commit marker goes last, after the bytes and the priority.
        State(claim.slot).store(CommittedState(claim.generation), std::memory_order_release);
        tree_slots[i] = claim.slot;
        tree_units[i] = units;
        if (!generations.empty()) generations[done + i] = claim.generation;
      }
      if (tree_) {
        tree_->SetMany(std::span(tree_slots).first(claimed), std::span(tree_units).first(claimed));
      }
      // The overwritten records count until their replacements do, so that a full buffer reads
      // its capacity throughout (a dip would look like lost data to anyone watching the size).
      size_.fetch_add(claimed - removed, std::memory_order_relaxed);
      inflight_ -= claimed;
      if (inflight_ == 0) changed_.notify_all();
    }
    done += claimed;
  }
  return Status::Ok();
}

bool ReplayStore::CopyOut(std::uint64_t slot, std::uint64_t generation, std::span<std::byte> out,
                          std::uint64_t* units) const {
  const std::uint64_t epoch = epoch_.load(std::memory_order_acquire);
  if (epoch % 2 != 0) return false;  // a Replace() is rewriting every slot
  const std::uint64_t before = State(slot).load(std::memory_order_acquire);
  if (before != CommittedState(generation)) return false;
  CopyFromSlot(RecordData(slot), out);
  if (units != nullptr) *units = Units(slot).load(std::memory_order_acquire);
  // The byte loads were acquire, so these loads cannot move before them.
  return State(slot).load(std::memory_order_relaxed) == before &&
         epoch_.load(std::memory_order_relaxed) == epoch;
}

Status ReplayStore::Sample(double beta, Rng& rng, std::span<SampledSlot> batch,
                           std::span<std::byte> records) {
  if (!(beta >= 0 && beta <= 1)) {
    return InvalidArgument("beta must be in [0, 1], got " + Number(beta));
  }
  if (!records.empty() && records.size() != batch.size() * options_.record_size) {
    return InvalidArgument("sample of " + std::to_string(batch.size()) + " records of " +
                           std::to_string(options_.record_size) + " bytes given " +
                           std::to_string(records.size()) + " bytes of room");
  }
  if (batch.empty()) return Status::Ok();
  if (uniform()) {
    AZ_RETURN_IF_ERROR(SampleUniform(rng, batch, records));
    for (SampledSlot& draw : batch) draw.weight = 1.0;
  } else {
    AZ_RETURN_IF_ERROR(SamplePrioritized(rng, batch, records));
    SetImportanceWeights(batch, beta);
  }
  samples_.fetch_add(batch.size(), std::memory_order_relaxed);
  return Status::Ok();
}

Status ReplayStore::SamplePrioritized(Rng& rng, std::span<SampledSlot> batch,
                                      std::span<std::byte> records) {
  thread_local std::vector<std::uint64_t> targets, slots, units;
  thread_local std::vector<std::uint32_t> pending;
  const std::size_t n = batch.size();
  const std::uint64_t record_size = options_.record_size;
  targets.resize(n);
  slots.resize(n);
  units.resize(n);
  pending.resize(n);
  for (std::size_t i = 0; i < n; ++i) pending[i] = static_cast<std::uint32_t>(i);
  for (int attempt = 0; !pending.empty(); ++attempt) {
    if (attempt == kMaxCopyAttempts) {
      return Unavailable("sampling kept losing its drawn records to concurrent inserts");
    }
    const std::size_t m = pending.size();
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !replacing_; });
      const std::uint64_t total = tree_->Total();
      if (total == 0) {
        return FailedPrecondition(size_.load(std::memory_order_relaxed) == 0
                                      ? "the replay buffer is empty"
                                      : "every record in the replay buffer has priority 0");
      }
      StratifiedTargets(total, rng, targets);
      // A redrawn draw keeps its own stratum. pending is ascending, so this compaction is in place.
      for (std::size_t i = 0; i < m; ++i) targets[i] = targets[pending[i]];
      tree_->Find(std::span(targets).first(m), std::span(slots).first(m),
                  std::span(units).first(m));
      for (std::size_t i = 0; i < m; ++i) __builtin_prefetch(&meta_[slots[i]]);
      const double inverse_total = 1.0 / static_cast<double>(total);
      for (std::size_t i = 0; i < m; ++i) {
        const std::uint64_t state = State(slots[i]).load(std::memory_order_relaxed);
        AZ_CHECK(IsCommitted(state), "the sum-tree holds priority for an uncommitted slot");
        SampledSlot& draw = batch[pending[i]];
        draw.slot = slots[i];
        draw.generation = GenerationOf(state);
        draw.probability = static_cast<double>(units[i]) * inverse_total;
      }
    }
    if (records.empty()) break;
    // The drawn records are scattered over the file: fetch a few ahead of the copy so that their
    // misses overlap (the first kilobyte of each; the hardware streams the rest of a long record).
    auto prefetch = [&](std::size_t i) {
      const std::byte* p = RecordData(batch[pending[i]].slot);
      for (std::uint64_t offset = 0; offset < std::min<std::uint64_t>(record_size, 1024);
           offset += 64) {
        __builtin_prefetch(p + offset);
      }
    };
    constexpr std::size_t kAhead = 4;
    for (std::size_t i = 0; i < std::min(kAhead, m); ++i) prefetch(i);
    std::size_t still = 0;
    for (std::size_t i = 0; i < m; ++i) {
      if (i + kAhead < m) prefetch(i + kAhead);
      const std::uint32_t k = pending[i];
      if (!CopyOut(batch[k].slot, batch[k].generation,
                   records.subspan(k * record_size, record_size), nullptr)) {
        pending[still++] = k;
      }
    }
    pending.resize(still);
  }
  return Status::Ok();
}

Status ReplayStore::SampleUniform(Rng& rng, std::span<SampledSlot> batch,
                                  std::span<std::byte> records) {
  thread_local std::vector<std::uint64_t> ranks;
  const std::size_t n = batch.size();
  const std::uint64_t capacity = options_.capacity;
  const std::uint64_t record_size = options_.record_size;
  ranks.resize(n);
  std::uint64_t oldest = 0, window = 0, sampleable = 0;
  auto refresh = [&]() -> Status {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !replacing_; });
    const std::uint64_t size = size_.load(std::memory_order_relaxed);
    if (size == 0) return FailedPrecondition("the replay buffer is empty");
    if (withdrawn_ >= size) {
      return FailedPrecondition("every record in the replay buffer is withdrawn");
    }
    sampleable = size - withdrawn_;
    oldest = oldest_generation_.load(std::memory_order_relaxed);
    window = next_generation_.load(std::memory_order_relaxed) - oldest;
    return Status::Ok();
  };
  AZ_RETURN_IF_ERROR(refresh());
  // Stratified over the ring window, oldest to newest: the same draws a tree of equal priorities
  // would make, without the tree.
  StratifiedTargets(window, rng, ranks);
  for (std::size_t k = 0; k < n; ++k) {
    for (int attempt = 0;; ++attempt) {
      if (attempt == kMaxCopyAttempts) {
        return Unavailable("sampling kept drawing records lost to concurrent inserts or withdrawn");
      }
      if (attempt > 0 && attempt % 16 == 0) AZ_RETURN_IF_ERROR(refresh());
      // After a miss (a slot mid-write, overwritten or withdrawn), redraw from the whole window.
      const std::uint64_t generation = oldest + (attempt == 0 ? ranks[k] : rng.Below(window));
      const std::uint64_t slot = generation % capacity;
      bool ok;
      std::uint64_t units = 0;
      if (records.empty()) {
        ok = State(slot).load(std::memory_order_acquire) == CommittedState(generation);
        units = Units(slot).load(std::memory_order_acquire);
      } else {
        ok = CopyOut(slot, generation, records.subspan(k * record_size, record_size), &units);
      }
      if (ok && units != 0) {
        batch[k] = {slot, generation, 1.0 / static_cast<double>(sampleable), 1.0};
        break;
      }
    }
  }
  return Status::Ok();
}

UpdateCounts ReplayStore::UpdatePriorities(std::span<const PriorityUpdate> updates) {
  constexpr std::uint64_t kRejected = std::numeric_limits<std::uint64_t>::max();
  thread_local std::vector<std::uint64_t> units;
  units.resize(updates.size());
  UpdateCounts counts;
  std::uint64_t clamped = 0;
  // The pow() calls and checks run before the lock is taken.
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const PriorityUpdate& update = updates[i];
    const std::optional<double> priority =
        PriorityFromLoss(update.loss, options_.epsilon, options_.alpha);
    if (update.slot >= options_.capacity || !priority) {
      units[i] = kRejected;
      ++counts.rejected;
      continue;
    }
    bool was_clamped = false;
    units[i] = uniform() ? 0 : scale_.ToUnits(*priority, &was_clamped);
    clamped += was_clamped ? 1 : 0;
  }
  if (uniform()) {
    // Nothing to store: every priority is 1. Only the generation and withdrawal checks remain.
    for (std::size_t i = 0; i < updates.size(); ++i) {
      if (units[i] == kRejected) continue;
      const std::uint64_t state = State(updates[i].slot).load(std::memory_order_acquire);
      const bool held = state == CommittedState(updates[i].generation) &&
                        Units(updates[i].slot).load(std::memory_order_relaxed) != 0;
      ++(held ? counts.applied : counts.stale);
    }
  } else {
    thread_local std::vector<std::uint64_t> slots;
    slots.clear();
    for (std::size_t i = 0; i < updates.size(); ++i) {
      if (units[i] != kRejected) __builtin_prefetch(&meta_[updates[i].slot]);
    }
    std::lock_guard lock(mutex_);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < updates.size(); ++i) {
      if (units[i] == kRejected) continue;
      const std::uint64_t slot = updates[i].slot;
      if (State(slot).load(std::memory_order_relaxed) != CommittedState(updates[i].generation) ||
          Units(slot).load(std::memory_order_relaxed) == 0) {
        ++counts.stale;  // overwritten, emptied or withdrawn
        continue;
      }
      Units(slot).store(units[i], std::memory_order_relaxed);
      withdrawn_ += units[i] == 0 ? 1 : 0;
      slots.push_back(slot);
      units[kept++] = units[i];  // kept <= i: compacts in place
      ++counts.applied;
    }
    tree_->SetMany(slots, std::span(units).first(kept));
  }
  updates_applied_.fetch_add(counts.applied, std::memory_order_relaxed);
  updates_stale_.fetch_add(counts.stale, std::memory_order_relaxed);
  values_rejected_.fetch_add(counts.rejected, std::memory_order_relaxed);
  values_clamped_.fetch_add(clamped, std::memory_order_relaxed);
  return counts;
}

UpdateCounts ReplayStore::Withdraw(std::span<const RecordKey> records) {
  UpdateCounts counts;
  std::lock_guard lock(mutex_);
  for (const RecordKey& record : records) {
    if (record.slot >= options_.capacity) {
      ++counts.rejected;
      continue;
    }
    if (State(record.slot).load(std::memory_order_relaxed) != CommittedState(record.generation)) {
      ++counts.stale;
      continue;
    }
    ++counts.applied;
    if (Units(record.slot).load(std::memory_order_relaxed) == 0) continue;  // already
    Units(record.slot).store(0, std::memory_order_relaxed);
    ++withdrawn_;
    if (tree_) tree_->Set(record.slot, 0);
  }
  updates_stale_.fetch_add(counts.stale, std::memory_order_relaxed);
  values_rejected_.fetch_add(counts.rejected, std::memory_order_relaxed);
  return counts;
}

void ReplayStore::WaitWhileReplacing() const {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !replacing_; });
}

Result<RecordInfo> ReplayStore::ReadRecord(std::uint64_t slot, std::span<std::byte> out) const {
  if (slot >= options_.capacity) {
    return InvalidArgument("slot " + std::to_string(slot) + " is beyond the capacity " +
                           std::to_string(options_.capacity));
  }
  if (out.size() != options_.record_size) {
    return InvalidArgument("reading a " + std::to_string(options_.record_size) +
                           "-byte record into " + std::to_string(out.size()) + " bytes");
  }
  for (int attempt = 0; attempt < kMaxCopyAttempts; ++attempt) {
    if (epoch_.load(std::memory_order_acquire) % 2 != 0) WaitWhileReplacing();
    const std::uint64_t state = State(slot).load(std::memory_order_acquire);
    if (!IsCommitted(state)) return NotFound("slot " + std::to_string(slot) + " is empty");
    std::uint64_t units = 0;
    if (CopyOut(slot, GenerationOf(state), out, &units)) {
      return RecordInfo{slot, GenerationOf(state), PriorityOfUnits(units)};
    }
  }
  return Unavailable("slot " + std::to_string(slot) + " kept being overwritten while read");
}

ReplayStats ReplayStore::Stats() const {
  ReplayStats stats;
  stats.capacity = options_.capacity;
  stats.samples = samples_.load(std::memory_order_relaxed);
  stats.updates_applied = updates_applied_.load(std::memory_order_relaxed);
  stats.updates_stale = updates_stale_.load(std::memory_order_relaxed);
  stats.values_rejected = values_rejected_.load(std::memory_order_relaxed);
  stats.values_clamped = values_clamped_.load(std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  stats.size = size_.load(std::memory_order_relaxed);
  stats.inserts = next_generation_.load(std::memory_order_relaxed);
  if (tree_) {
    stats.priority_sum = scale_.ToPriority(tree_->Total());
    stats.priority_min = scale_.ToPriority(tree_->MinPositive());
    stats.priority_max = scale_.ToPriority(tree_->Max());
  } else {
    const std::uint64_t sampleable = stats.size - std::min(withdrawn_, stats.size);
    stats.priority_sum = static_cast<double>(sampleable);
    stats.priority_min = stats.priority_max = sampleable > 0 ? 1.0 : 0.0;
  }
  stats.withdrawn = withdrawn_;
  return stats;
}

Status ReplayStore::Flush() {
  {
    std::lock_guard lock(mutex_);
    auto* header = reinterpret_cast<StoreHeader*>(file_.bytes().data());
    std::atomic_ref<std::uint64_t>(header->next_generation_floor)
        .store(next_generation_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  return file_.Flush();
}

std::uint64_t ReplayStore::next_generation() const {
  std::lock_guard lock(mutex_);
  return next_generation_.load(std::memory_order_relaxed);
}

Status ReplayStore::ForEachRecord(
    const std::function<Status(const RecordInfo&, std::span<const std::byte>)>& visit) const {
  std::uint64_t oldest, next;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !replacing_; });
    oldest = oldest_generation_.load(std::memory_order_relaxed);
    next = next_generation_.load(std::memory_order_relaxed);
  }
  std::vector<std::byte> record(options_.record_size);
  for (std::uint64_t generation = oldest; generation < next; ++generation) {
    const std::uint64_t slot = generation % options_.capacity;
    std::uint64_t units = 0;
    bool copied = false;
    for (int attempt = 0; attempt < kMaxCopyAttempts && !copied; ++attempt) {
      if (epoch_.load(std::memory_order_acquire) % 2 != 0) WaitWhileReplacing();
      copied = CopyOut(slot, generation, record, &units);
      // Not this generation any more (empty, or overwritten by a newer one): nothing to retry.
      if (!copied && State(slot).load(std::memory_order_acquire) != CommittedState(generation)) {
        break;
      }
    }
    if (!copied) continue;
    AZ_RETURN_IF_ERROR(visit(RecordInfo{slot, generation, PriorityOfUnits(units)}, record));
  }
  return Status::Ok();
}

Status ReplayStore::Replace(std::uint64_t next_generation,
                            const std::function<Result<bool>(RestoredRecord*)>& next) {
  const std::uint64_t capacity = options_.capacity;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !replacing_; });
  if (next_generation < next_generation_.load(std::memory_order_relaxed)) {
    return FailedPrecondition("replace would move the next generation back from " +
                              std::to_string(next_generation_.load(std::memory_order_relaxed)) +
                              " to " + std::to_string(next_generation) +
                              ", and generations must never be reused");
  }
  replacing_ = true;
  changed_.wait(lock, [&] { return inflight_ == 0; });
  // Odd epoch: copies that overlap this call fail and are retried after it.
  epoch_.fetch_add(1, std::memory_order_relaxed);
  for (std::uint64_t slot = 0; slot < capacity; ++slot) {
    State(slot).store(kSlotEmpty, std::memory_order_relaxed);
    Units(slot).store(0, std::memory_order_relaxed);
  }
  std::vector<std::uint64_t> leaves(tree_ ? capacity : 0, 0);
  const std::uint64_t lowest = next_generation >= capacity ? next_generation - capacity : 0;
  const std::uint64_t one = scale_.ToUnits(1.0);
  std::uint64_t count = 0;
  std::uint64_t first = next_generation;
  std::uint64_t last = 0;
  std::uint64_t clamped = 0;
  std::uint64_t withdrawn = 0;
  Status result = Status::Ok();
  RestoredRecord record;
  while (true) {
    Result<bool> more = next(&record);
    if (!more.ok()) {
      result = more.status();
      break;
    }
    if (!*more) break;
    if (record.bytes.size() != options_.record_size || !std::isfinite(record.priority) ||
        record.priority < 0 || record.generation >= next_generation || record.generation < lowest ||
        (count > 0 && record.generation <= last)) {
      result = InvalidArgument("restored record " + std::to_string(count) +
                               " has a bad size, priority or generation " +
                               std::to_string(record.generation));
      break;
    }
    const std::uint64_t slot = record.generation % capacity;
    CopyToSlot(RecordData(slot), record.bytes);
    bool was_clamped = false;
    std::uint64_t units = 0;  // a record restored with priority 0 stays withdrawn
    if (record.priority > 0)
      units = uniform() ? one : scale_.ToUnits(record.priority, &was_clamped);
    clamped += was_clamped ? 1 : 0;
    withdrawn += units == 0 ? 1 : 0;
    Units(slot).store(units, std::memory_order_relaxed);
    State(slot).store(CommittedState(record.generation), std::memory_order_release);
    if (tree_) leaves[slot] = units;
    if (count == 0) first = record.generation;
    last = record.generation;
    ++count;
  }
  if (tree_) tree_->Assign(leaves);
  next_generation_.store(next_generation, std::memory_order_relaxed);
  oldest_generation_.store(first, std::memory_order_relaxed);
  size_.store(count, std::memory_order_relaxed);
  withdrawn_ = withdrawn;
  values_clamped_.fetch_add(clamped, std::memory_order_relaxed);
  auto* header = reinterpret_cast<StoreHeader*>(file_.bytes().data());
  std::atomic_ref<std::uint64_t>(header->next_generation_floor)
      .store(next_generation, std::memory_order_relaxed);
  epoch_.fetch_add(1, std::memory_order_release);
  replacing_ = false;
  changed_.notify_all();
  return result;
}

}  // namespace az::replay
