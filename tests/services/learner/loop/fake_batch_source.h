#pragma once

// An in-process BatchSource for the learner loop's tests: a small "buffer" of records with an
// insert generation per slot, served either as one fixed batch (the first `batch` slots, in order)
// or as uniform random draws. It keeps every request, priority update and withdrawal it saw, never
// draws a withdrawn slot at random, can say it samples uniformly, can fail the next samples or
// updates on demand, and can overwrite a slot (a new generation) between a draw and its
// update, as self-play does.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "services/learner/loop/batch_source.h"

namespace az::learner::testing {

class FakeBatchSource final : public BatchSource {
 public:
  // `records`: count x record_bytes bytes.
  FakeBatchSource(std::span<const std::byte> records, std::size_t record_bytes)
      : records_(records.begin(), records.end()),
        record_bytes_(record_bytes),
        generations_(records.size() / record_bytes, 1) {}

  // --- Controls. ---

  // true: every batch is slots 0 .. batch-1 in order; false: uniform random draws.
  void SetFixed(bool fixed) { fixed_ = fixed; }
  // false: the source says it samples uniformly (the loop then sends no priorities).
  void SetPrioritized(bool prioritized) { prioritized_ = prioritized; }
  // The importance weight of every draw.
  void SetWeight(double weight) { weight_ = weight; }
  // The next Sample calls fail with these statuses, in order.
  void FailNextSamples(std::vector<Status> errors) {
    for (Status& e : errors) sample_errors_.push_back(std::move(e));
  }
  // The next `n` priority updates get no answer.
  void FailNextUpdates(int n) { update_failures_ = n; }
  // Overwrites `slot` with a new record (its generation goes up): updates for the old one are
  // stale.
  void Overwrite(std::uint64_t slot) {
    ++generations_[slot];
    withdrawn_.erase(slot);
  }
  // Overwrites `slot` right after the next batch is drawn, before its priorities come back.
  void OverwriteAfterNextDraw(std::uint64_t slot) { overwrite_after_draw_ = slot; }
  // Replaces the bytes of `slot`.
  void SetRecord(std::uint64_t slot, std::span<const std::byte> bytes) {
    std::memcpy(records_.data() + slot * record_bytes_, bytes.data(), record_bytes_);
  }

  // --- What it saw. ---

  std::vector<BatchRequest> requests;                        // every Sample call
  std::vector<std::vector<replay::SampledSlot>> batches;     // every batch served
  std::vector<std::vector<replay::PriorityUpdate>> updates;  // every update received
  std::vector<std::vector<replay::RecordKey>> withdrawals;   // every withdrawal received

  // --- BatchSource. ---

  Result<SourceBatch> Sample(const BatchRequest& request) override {
    requests.push_back(request);
    if (!sample_errors_.empty()) {
      Status error = std::move(sample_errors_.front());
      sample_errors_.pop_front();
      return error;
    }
    const std::size_t slots = generations_.size();
    std::vector<replay::SampledSlot> draws;
    batch_.clear();
    for (std::uint32_t i = 0; i < request.batch; ++i) {
      std::uint64_t slot = fixed_ ? i % slots : rng_() % slots;
      while (!fixed_ && withdrawn_.count(slot) != 0 && withdrawn_.size() < slots) {
        slot = rng_() % slots;
      }
      draws.push_back({slot, generations_[slot], 1.0 / static_cast<double>(slots), weight_});
      const std::byte* record = records_.data() + slot * record_bytes_;
      batch_.insert(batch_.end(), record, record + record_bytes_);
    }
    batches.push_back(std::move(draws));
    if (overwrite_after_draw_) {
      Overwrite(*overwrite_after_draw_);
      overwrite_after_draw_.reset();
    }
    return SourceBatch{.draws = batches.back(),
                       .records = batch_,
                       .record_bytes = record_bytes_,
                       .prioritized = prioritized_};
  }

  Result<replay::UpdateCounts> UpdatePriorities(
      std::span<const replay::PriorityUpdate> list) override {
    updates.emplace_back(list.begin(), list.end());
    if (update_failures_ > 0) {
      --update_failures_;
      return DeadlineExceeded("no answer to update-priorities");
    }
    replay::UpdateCounts counts;
    for (const replay::PriorityUpdate& u : list) {
      if (u.slot >= generations_.size() || !(u.loss >= 0)) {
        ++counts.rejected;
      } else if (u.generation != generations_[u.slot]) {
        ++counts.stale;
      } else {
        ++counts.applied;
      }
    }
    return counts;
  }

  Result<replay::UpdateCounts> Withdraw(std::span<const replay::RecordKey> list) override {
    withdrawals.emplace_back(list.begin(), list.end());
    replay::UpdateCounts counts;
    for (const replay::RecordKey& key : list) {
      if (key.slot >= generations_.size()) {
        ++counts.rejected;
      } else if (key.generation != generations_[key.slot]) {
        ++counts.stale;
      } else {
        withdrawn_.insert(key.slot);
        ++counts.applied;
      }
    }
    return counts;
  }

  std::string_view name() const override { return "the fake source"; }

 private:
  std::vector<std::byte> records_;
  std::size_t record_bytes_;
  std::vector<std::uint64_t> generations_;
  std::vector<std::byte> batch_;  // the records of the last batch
  bool fixed_ = true;
  bool prioritized_ = true;
  std::set<std::uint64_t> withdrawn_;
  double weight_ = 1.0;
  std::deque<Status> sample_errors_;
  int update_failures_ = 0;
  std::optional<std::uint64_t> overwrite_after_draw_;
  std::mt19937_64 rng_{42};
};

}  // namespace az::learner::testing
