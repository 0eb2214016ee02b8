#pragma once

// An in-process AsyncEvaluator for the self-play driver's tests: its own thread answers what was
// submitted with uniform priors and a draw WDL, like a network that knows nothing, or with the WDL
// a test's function gives the leaf's record (a network with an opinion). On demand it
// answers late, never (until the driver gives up and Reset()s), with errors or with malformed
// answers, and it can hand out answers to an earlier generation that a correct transport drops.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "services/selfplay/driver/async_evaluator.h"

namespace az::selfplay::testing {

class FakeEvaluator final : public AsyncEvaluator {
 public:
  using Clock = std::chrono::steady_clock;

  enum class Mode {
    kAnswer,            // answer everything (after the delay)
    kSilentUntilReset,  // hold every request; from the next Reset() on, answer again
    kSilent,            // hold every request for good
  };

  // The WDL (side to move's view) of a leaf, from its record's bytes.
  using WdlFunction = std::function<std::array<float, 3>(std::span<const std::byte> record)>;

  struct Counts {
    std::uint64_t submitted = 0;      // requests taken by Submit
    std::uint64_t answered = 0;       // answers visited by Receive
    std::uint64_t held = 0;           // requests held unanswered (silent)
    std::uint64_t stale_dropped = 0;  // answers of an earlier generation dropped by Receive
    std::uint64_t stale_leaked = 0;   // answers of an earlier generation visited (leak_stale)
    std::uint64_t resets = 0;
    std::uint64_t in_flight = 0;  // submitted, not yet answered nor held
  };

  explicit FakeEvaluator(std::uint64_t model_version = 7, std::uint64_t max_in_flight = 0)
      : model_version_(model_version), max_in_flight_(max_in_flight) {
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeEvaluator() override {
    {
      std::lock_guard lock(mutex_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // --- Controls, from any thread. ---

  void SetMode(Mode mode) {
    std::lock_guard lock(mutex_);
    mode_ = mode;
  }
  // Answers come at least this long after their request was submitted.
  void SetDelay(std::chrono::milliseconds delay) {
    std::lock_guard lock(mutex_);
    delay_ = delay;
  }
  // Answers with wdl(record) instead of a draw; nullptr: a draw again.
  void SetWdlFunction(WdlFunction wdl) {
    std::lock_guard lock(mutex_);
    wdl_ = std::move(wdl);
  }
  // The next `n` answers say kEvaluationFailed (the network failed on the batch).
  void FailNext(int n) {
    std::lock_guard lock(mutex_);
    fail_next_ = n;
  }
  // The next `n` answers cannot be read (kMalformed).
  void GarbleNext(int n) {
    std::lock_guard lock(mutex_);
    garble_next_ = n;
  }
  // Answers of an earlier generation are visited instead of dropped: a transport that fails to
  // recognise them, so that the driver's own defence is what is tested.
  void SetLeakStale(bool leak) {
    std::lock_guard lock(mutex_);
    leak_stale_ = leak;
  }
  // Answers every held request now (with the generation it was submitted under).
  void ReleaseHeld() {
    {
      std::lock_guard lock(mutex_);
      for (Pending& p : held_) answers_.push_back(Answer(p, EvalAnswerStatus::kOk));
      counts_.held -= held_.size();
      held_.clear();
    }
    cv_.notify_all();
  }
  Counts counts() const {
    std::lock_guard lock(mutex_);
    return counts_;
  }
  // What a transport reports when the evaluator serving it died: EvaluatorsLost() moves on.
  void LoseEvaluator() { lost_.fetch_add(1); }

  // --- AsyncEvaluator. ---

  Result<std::size_t> Submit(std::span<const LeafRequest> requests,
                             std::chrono::milliseconds) override {
    {
      std::lock_guard lock(mutex_);
      for (const LeafRequest& r : requests) {
        pending_.push_back({.request_id = r.request_id,
                            .generation = generation_,
                            .moves = r.policy_indices.size(),
                            .due = Clock::now() + delay_,
                            .wdl = wdl_ ? wdl_(r.record) : std::array<float, 3>{0.0f, 1.0f, 0.0f}});
      }
      counts_.submitted += requests.size();
      counts_.in_flight += requests.size();
    }
    cv_.notify_all();
    return requests.size();
  }

  Result<std::size_t> Receive(std::size_t max_answers, std::chrono::milliseconds timeout,
                              const AnswerVisitor& visit) override {
    std::vector<Ready> taken;
    {
      std::unique_lock lock(mutex_);
      const Clock::time_point deadline = Clock::now() + timeout;
      for (;;) {
        while (!answers_.empty() && taken.size() < max_answers) {
          Ready a = answers_.front();
          answers_.pop_front();
          if (a.generation != generation_) {
            if (!leak_stale_) {
              ++counts_.stale_dropped;
              continue;
            }
            ++counts_.stale_leaked;
          }
          taken.push_back(a);
        }
        if (!taken.empty()) break;
        if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && answers_.empty()) {
          return DeadlineExceeded("no answer");
        }
      }
      counts_.answered += taken.size();
    }
    for (const Ready& a : taken) {
      const std::vector<float> priors(a.moves, 1.0f / static_cast<float>(a.moves));
      EvalAnswer answer;
      answer.request_id = a.request_id;
      answer.status = a.status;
      answer.model_version = model_version_;
      if (a.status == EvalAnswerStatus::kOk) {
        answer.wdl = a.wdl;
        answer.priors = priors;
      } else if (a.status == EvalAnswerStatus::kMalformed) {
        answer.error = DataLoss("eval response: bad magic 0");
      }
      visit(answer);
    }
    return taken.size();
  }

  std::uint32_t Reset() override {
    std::lock_guard lock(mutex_);
    ++generation_;
    ++counts_.resets;
    if (mode_ == Mode::kSilentUntilReset) mode_ = Mode::kAnswer;
    return generation_;
  }
  std::uint64_t EvaluatorsLost() override { return lost_.load(); }
  std::uint64_t max_in_flight() const override { return max_in_flight_; }
  std::string_view name() const override { return "the fake evaluator"; }

 private:
  struct Pending {
    std::uint64_t request_id;
    std::uint32_t generation;
    std::size_t moves;
    Clock::time_point due;
    std::array<float, 3> wdl;
  };
  struct Ready {
    std::uint64_t request_id;
    std::uint32_t generation;
    std::size_t moves;
    EvalAnswerStatus status;
    std::array<float, 3> wdl;
  };

  static Ready Answer(const Pending& p, EvalAnswerStatus status) {
    return {p.request_id, p.generation, p.moves, status, p.wdl};
  }

  // The evaluator's own thread: takes the requests that are due and answers or holds them.
  void Serve() {
    std::unique_lock lock(mutex_);
    while (!quit_) {
      if (pending_.empty()) {
        cv_.wait(lock);
        continue;
      }
      const Clock::time_point due = pending_.front().due;
      if (Clock::now() < due) {
        cv_.wait_until(lock, due);
        continue;
      }
      const Pending p = pending_.front();
      pending_.pop_front();
      --counts_.in_flight;
      if (mode_ != Mode::kAnswer) {
        held_.push_back(p);
        ++counts_.held;
        continue;
      }
      EvalAnswerStatus status = EvalAnswerStatus::kOk;
      if (fail_next_ > 0) {
        --fail_next_;
        status = EvalAnswerStatus::kEvaluationFailed;
      } else if (garble_next_ > 0) {
        --garble_next_;
        status = EvalAnswerStatus::kMalformed;
      }
      answers_.push_back(Answer(p, status));
      cv_.notify_all();
    }
  }

  const std::uint64_t model_version_;
  const std::uint64_t max_in_flight_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  Mode mode_ = Mode::kAnswer;
  std::chrono::milliseconds delay_{0};
  int fail_next_ = 0;
  int garble_next_ = 0;
  bool leak_stale_ = false;
  WdlFunction wdl_;
  bool quit_ = false;
  std::uint32_t generation_ = 1;
  std::deque<Pending> pending_;
  std::deque<Pending> held_;
  std::deque<Ready> answers_;
  Counts counts_;
  std::atomic<std::uint64_t> lost_{0};
  std::thread thread_;
};

}  // namespace az::selfplay::testing
