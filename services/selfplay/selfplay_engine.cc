#include "services/selfplay/selfplay_engine.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/base/log.h"
#include "core/mcts/random.h"
#include "core/mcts/search.h"
#include "services/common/eval_protocol.h"
#include "services/selfplay/selfplay_game.h"

namespace az::selfplay {
namespace {

using Clock = std::chrono::steady_clock;

// Receives and submits in slices this long, so that Stop() is noticed soon.
constexpr std::chrono::milliseconds kSlice{100};

template <games::Game G>
class GameSelfPlayEngine final : public SelfPlayEngine {
  using Traits = SelfPlayGame<G>;
  using Sample = typename Traits::Sample;
  using State = typename G::State;

  struct Slot {
    std::optional<mcts::Search<G>> search;
    bool active = false;
    int group = 0;
    std::uint64_t game_id = 0;
    std::uint64_t model_version = 0;  // of the latest answer for this game
    std::uint64_t counted_playouts = 0;
    bool failed = false;  // an answer of its batch in flight said invalid or failed
    std::vector<Sample> samples;
  };
  // One request of a group in flight.
  struct Entry {
    int slot;
    int leaf;  // index into the slot's search leaves() / evals()
    bool answered = false;
  };
  struct Group {
    std::vector<int> slots;
    std::vector<Entry> entries;
    std::uint64_t base_id = 0;  // request id of entries[0]
    int unanswered = 0;
    bool in_flight = false;
    Clock::time_point submitted;
  };

 public:
  GameSelfPlayEngine(const EngineOptions& options, shm::RequestClient client, shm::Ring samples,
                     EngineObserver observer)
      : options_(options),
        client_(std::move(client)),
        ring_(std::move(samples)),
        observer_(std::move(observer)),
        slots_(options.games),
        groups_(options.groups) {
    // Game ids: worker id, a per-process salt (so a restarted worker's ids differ), a counter.
    std::random_device device;
    salt_ = device() & 0xFFFFu;
    for (int i = 0; i < options.games; ++i) {
      Slot& slot = slots_[i];
      slot.group = i % options.groups;
      groups_[slot.group].slots.push_back(i);
      mcts::SearchOptions search = options.search;
      std::uint64_t seed = options.search.seed ^ (std::uint64_t{options.worker_id} << 40) ^
                           static_cast<std::uint64_t>(i);
      search.seed = mcts::SplitMix64(seed);
      Result<mcts::Search<G>> made = mcts::Search<G>::Create(search, Traits::NewGame(0));
      AZ_CHECK(made.ok(), made.status().ToString());  // options were validated by the factory
      slot.search.emplace(std::move(made).value());
      StartGame(slot);
    }
    for (Group& group : groups_)
      group.entries.reserve(group.slots.size() * options.leaves_per_game);
  }

  Status Step() override {
    if (stop_.load(std::memory_order_acquire)) return Cancelled("self-play stopped");
    if (!paused_.load(std::memory_order_acquire)) {
      for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
        if (!groups_[g].in_flight) AZ_RETURN_IF_ERROR(PrepareAndSubmit(g));
      }
    }
    // The oldest group in flight.
    int oldest = -1;
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
      if (groups_[g].in_flight &&
          (oldest < 0 || groups_[g].submitted < groups_[oldest].submitted)) {
        oldest = g;
      }
    }
    if (oldest < 0) {
      // Nothing to evaluate: paused, or every game finished.
      PublishCounters();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return Status::Ok();
    }
    const Clock::time_point wait_start = Clock::now();
    AZ_RETURN_IF_ERROR(WaitFor(oldest));
    const Clock::time_point answered = Clock::now();
    counters_.wait_seconds += std::chrono::duration<double>(answered - wait_start).count();
    Group& group = groups_[oldest];
    group.in_flight = false;
    ++counters_.rounds;
    if (observer_.round_trip) {
      observer_.round_trip(std::chrono::duration<double>(answered - group.submitted).count());
    }
    for (int index : group.slots) {
      Slot& slot = slots_[index];
      mcts::Search<G>& search = *slot.search;
      if (!search.has_pending()) continue;
      if (slot.failed) {
        search.Cancel();
        slot.failed = false;
      } else {
        counters_.leaves_evaluated += search.leaves().size();
        search.Backup();
      }
      CountPlayouts(slot);
    }
    counters_.search_seconds += std::chrono::duration<double>(Clock::now() - answered).count();
    if (!paused_.load(std::memory_order_acquire)) AZ_RETURN_IF_ERROR(PrepareAndSubmit(oldest));
    PublishCounters();
    return Status::Ok();
  }

  bool Done() const override {
    return options_.max_games > 0 && counters_.games_finished >= options_.max_games;
  }
  void SetPaused(bool paused) override { paused_.store(paused, std::memory_order_release); }
  void Stop() override { stop_.store(true, std::memory_order_release); }

  EngineCounters counters() const override {
    std::lock_guard<std::mutex> lock(counters_mutex_);
    return published_;
  }
  shm::ChannelClientStats ChannelStats() const override { return client_.Stats(); }
  shm::RingStats SampleRingStats() const override { return ring_.Stats(); }

 private:
  // --- Games. ---

  bool MayStartGame() const {
    return options_.max_games == 0 || counters_.games_started < options_.max_games;
  }

  void StartGame(Slot& slot) {
    if (!MayStartGame()) {
      slot.active = false;
      return;
    }
    slot.search->SetRoot(Traits::NewGame(options_.max_plies));
    slot.active = true;
    slot.game_id = (std::uint64_t{options_.worker_id} << 48) | (std::uint64_t{salt_} << 32) |
                   (counters_.games_started & 0xFFFFFFFFu);
    slot.samples.clear();
    ++counters_.games_started;
  }

  void CountPlayouts(Slot& slot) {
    const std::uint64_t playouts = slot.search->stats().playouts;
    counters_.simulations += playouts - slot.counted_playouts;
    slot.counted_playouts = playouts;
  }

  // Plays the moves that are due and gathers the game's next leaves; returns with a batch pending
  // or the slot inactive (no more games to start). Pushing finished games may block.
  Status Advance(Slot& slot) {
    const auto target = static_cast<std::uint32_t>(options_.simulations);
    while (slot.active) {
      mcts::Search<G>& search = *slot.search;
      const bool expanded = search.root().state == mcts::NodeState::kExpanded;
      const std::uint32_t done = search.RootChildVisits();
      if (!expanded || done < target) {
        const int want =
            expanded
                ? static_cast<int>(std::min<std::uint32_t>(options_.leaves_per_game, target - done))
                : 1;
        const auto gathered = search.Gather(want);
        CountPlayouts(slot);
        if (gathered.leaves > 0) return Status::Ok();
        AZ_CHECK(gathered.terminal_playouts > 0, "a gather made no progress");
        continue;
      }
      AZ_RETURN_IF_ERROR(PlayMove(slot));
    }
    return Status::Ok();
  }

  Status PlayMove(Slot& slot) {
    mcts::Search<G>& search = *slot.search;
    const int ply = Traits::Ply(search.root_state());
    const std::uint32_t version =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(slot.model_version, 0xFFFFFFFFu));
    Result<Sample> sample = Traits::MakeSample(search, slot.game_id, version);
    if (sample.ok()) {
      slot.samples.push_back(*sample);
    } else {
      ++counters_.samples_dropped;
      AZ_LOG(kError) << "game " << slot.game_id << " ply " << ply
                     << ": no sample: " << sample.status().ToString();
    }
    search.Advance(search.SelectMove(options_.temperature.AtPly(ply)));
    ++counters_.moves;
    const int plies = ply + 1;
    const games::GameOutcome outcome = search.root_outcome();
    if (games::IsTerminal(outcome) || plies >= options_.max_plies) {
      // The outcome for the side to move in the final position; a cut-off is a draw.
      const int value =
          games::IsTerminal(outcome) ? static_cast<int>(games::OutcomeValue(outcome)) : 0;
      AZ_RETURN_IF_ERROR(FinishGame(slot, value, plies));
      StartGame(slot);
    }
    return Status::Ok();
  }

  Status FinishGame(Slot& slot, int final_value, int plies) {
    Traits::SetOutcome(slot.samples, slot.search->root_state(), final_value);
    // The side to move at the end is the first player when an even number of plies was played.
    GameResultKind result = GameResultKind::kDraw;
    if (final_value != 0) {
      const bool first_to_move = plies % 2 == 0;
      const bool first_won = (final_value > 0) == first_to_move;
      result = first_won ? GameResultKind::kFirstPlayerWins : GameResultKind::kSecondPlayerWins;
    }
    ++counters_.games_finished;
    ++counters_.results[static_cast<int>(result)];
    if (observer_.game_finished) observer_.game_finished(plies, result);
    for (const Sample& sample : slot.samples) AZ_RETURN_IF_ERROR(Push(sample));
    slot.samples.clear();
    return Status::Ok();
  }

  Status Push(const Sample& sample) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(&sample),
                                           sizeof sample);
    Clock::time_point waiting_since{};
    for (;;) {
      const Status status = ring_.Push(
          bytes, waiting_since == Clock::time_point{}
                     ? options_.push_timeout
                     : std::min<std::chrono::milliseconds>(options_.push_timeout, kSlice));
      if (status.ok()) {
        ++counters_.samples_pushed;
        if (waiting_since != Clock::time_point{}) {
          AZ_LOG(kInfo) << "the sample ring has room again after "
                        << std::chrono::duration<double>(Clock::now() - waiting_since).count()
                        << " s";
        }
        return Status::Ok();
      }
      if (status.code() != StatusCode::kDeadlineExceeded) return status.WithContext("sample ring");
      if (waiting_since == Clock::time_point{}) {
        waiting_since = Clock::now();
        ++counters_.ring_waits;
        AZ_LOG(kWarning) << "the sample ring has been full for " << options_.push_timeout.count()
                         << " ms (is az-replay running?); waiting to push";
      }
      PublishCounters();
      if (stop_.load(std::memory_order_acquire)) {
        ++counters_.samples_dropped;
        return Cancelled("stopped while waiting for room in the sample ring");
      }
    }
  }

  // --- Requests. ---

  Status PrepareAndSubmit(int g) {
    Group& group = groups_[g];
    group.entries.clear();
    const Clock::time_point start = Clock::now();
    for (int index : group.slots) {
      Slot& slot = slots_[index];
      AZ_RETURN_IF_ERROR(Advance(slot));
      if (!slot.active) continue;
      const int n = static_cast<int>(slot.search->leaves().size());
      for (int leaf = 0; leaf < n; ++leaf) group.entries.push_back({index, leaf});
    }
    counters_.search_seconds += std::chrono::duration<double>(Clock::now() - start).count();
    PublishCounters();
    if (group.entries.empty()) return Status::Ok();
    group.in_flight = true;
    group.submitted = Clock::now();
    return SubmitGroup(group);
  }

  // Submits every unanswered entry of `group` under a fresh range of request ids.
  Status SubmitGroup(Group& group) {
    group.base_id = next_request_id_;
    next_request_id_ += group.entries.size();
    group.unanswered = 0;
    for (std::size_t i = 0; i < group.entries.size(); ++i) {
      Entry& entry = group.entries[i];
      if (entry.answered) continue;
      ++group.unanswered;
      const Slot& slot = slots_[entry.slot];
      const mcts::Leaf<G>& leaf = slot.search->leaves()[entry.leaf];
      const auto fill = [&](std::span<std::byte> payload) {
        service::WriteEvalRequest<G>(leaf, slot.game_id, payload);
      };
      const Clock::time_point start = Clock::now();
      for (;;) {
        const Status status = client_.SubmitWith(group.base_id + i, kSlice, fill);
        if (status.ok()) break;
        if (status.code() != StatusCode::kDeadlineExceeded) return status.WithContext("submit");
        if (stop_.load(std::memory_order_acquire)) return Cancelled("self-play stopped");
        if (Clock::now() - start > options_.eval_timeout) {
          AZ_LOG(kWarning) << "the eval request ring has been full for "
                           << options_.eval_timeout.count()
                           << " ms (is az-evaluator running?); still trying";
        }
      }
      ++counters_.requests_submitted;
    }
    return Status::Ok();
  }

  Group* GroupOf(std::uint64_t request_id) {
    for (Group& group : groups_) {
      if (group.in_flight && request_id >= group.base_id &&
          request_id < group.base_id + group.entries.size()) {
        return &group;
      }
    }
    return nullptr;
  }

  void OnAnswer(std::uint64_t request_id, std::span<const std::byte> payload) {
    Group* group = GroupOf(request_id);
    if (group == nullptr) {
      ++counters_.protocol_errors;
      return;
    }
    Entry& entry = group->entries[request_id - group->base_id];
    if (entry.answered) return;
    Slot& slot = slots_[entry.slot];
    mcts::Search<G>& search = *slot.search;
    const int moves = static_cast<int>(search.leaves()[entry.leaf].moves.size());
    service::EvalResponseHeader header;
    const Status status = service::ReadEvalResponseHeader<G>(payload, moves, header);
    if (!status.ok()) {
      // Left unanswered: the timeout resubmits it.
      ++counters_.protocol_errors;
      AZ_LOG(kWarning) << "dropped a malformed eval answer: " << status.ToString();
      return;
    }
    entry.answered = true;
    --group->unanswered;
    slot.model_version = header.model_version;
    counters_.model_version = header.model_version;
    if (header.status != static_cast<std::uint8_t>(service::EvalStatus::kOk)) {
      ++counters_.eval_errors;
      slot.failed = true;
      if (counters_.eval_errors <= 10 || counters_.eval_errors % 1000 == 0) {
        AZ_LOG(kWarning) << "the evaluator answered status " << int{header.status} << " for game "
                         << slot.game_id << " (" << counters_.eval_errors
                         << " so far); its leaves are searched again";
      }
      return;
    }
    mcts::LeafEval& eval = search.evals()[entry.leaf];
    service::CopyPriors<G>(payload, eval.priors);
    eval.SetWdl(header.wdl[0], header.wdl[1], header.wdl[2]);
  }

  Status WaitFor(int g) {
    Group& group = groups_[g];
    Clock::time_point last_progress = Clock::now();
    const auto visit = [this](std::uint64_t id, std::span<const std::byte> payload) {
      OnAnswer(id, payload);
    };
    while (group.unanswered > 0) {
      Result<std::size_t> got = client_.Receive(1024, kSlice, visit);
      if (got.ok()) {
        last_progress = Clock::now();
        continue;
      }
      if (got.status().code() != StatusCode::kDeadlineExceeded) {
        return got.status().WithContext("receiving eval answers");
      }
      if (stop_.load(std::memory_order_acquire)) return Cancelled("self-play stopped");
      if (Clock::now() - last_progress < options_.eval_timeout) continue;
      // Nothing for eval_timeout: the evaluator died or lost our requests. A new generation makes
      // any late answer to the old ones stale; then everything unanswered goes again.
      ++counters_.eval_timeouts;
      client_.Reset();
      int resubmitted = 0;
      for (Group& other : groups_) {
        if (!other.in_flight) continue;
        AZ_RETURN_IF_ERROR(SubmitGroup(other));
        resubmitted += other.unanswered;
      }
      AZ_LOG(kWarning) << "no eval answer for " << options_.eval_timeout.count()
                       << " ms (is az-evaluator running?): resubmitted " << resubmitted
                       << " requests as generation " << client_.generation();
      PublishCounters();
      last_progress = Clock::now();
    }
    return Status::Ok();
  }

  void PublishCounters() {
    std::uint64_t in_progress = 0;
    for (const Slot& slot : slots_) in_progress += slot.active ? 1 : 0;
    counters_.games_in_progress = in_progress;
    std::lock_guard<std::mutex> lock(counters_mutex_);
    published_ = counters_;
  }

  EngineOptions options_;
  shm::RequestClient client_;
  shm::Ring ring_;
  EngineObserver observer_;
  std::vector<Slot> slots_;
  std::vector<Group> groups_;
  std::uint32_t salt_ = 0;
  std::uint64_t next_request_id_ = 1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  EngineCounters counters_;  // the engine thread's
  mutable std::mutex counters_mutex_;
  EngineCounters published_;  // a copy for other threads
};

Status ValidateOptions(const EngineOptions& o) {
  const auto range = [](const char* name, long long value, long long lo, long long hi) {
    if (value < lo || value > hi) {
      return InvalidArgument(std::string(name) + " " + std::to_string(value) + " is not in " +
                             std::to_string(lo) + ".." + std::to_string(hi));
    }
    return Status::Ok();
  };
  AZ_RETURN_IF_ERROR(range("games", o.games, 1, 1 << 20));
  AZ_RETURN_IF_ERROR(range("simulations", o.simulations, 1, 1 << 24));
  AZ_RETURN_IF_ERROR(range("leaves per game", o.leaves_per_game, 1, 256));
  AZ_RETURN_IF_ERROR(range("groups", o.groups, 1, 64));
  AZ_RETURN_IF_ERROR(range("max plies", o.max_plies, 1, 1 << 20));
  if (o.groups > o.games) {
    return InvalidArgument("groups " + std::to_string(o.groups) + " exceed games " +
                           std::to_string(o.games));
  }
  if (o.eval_timeout.count() <= 0 || o.push_timeout.count() <= 0) {
    return InvalidArgument("timeouts must be positive");
  }
  mcts::SearchOptions search = o.search;
  search.max_batch = o.leaves_per_game;
  AZ_RETURN_IF_ERROR(search.Validate().WithContext("search options"));
  return o.temperature.Validate().WithContext("temperature");
}

template <games::Game G>
Result<std::unique_ptr<SelfPlayEngine>> Make(EngineOptions options, shm::RequestClient client,
                                             shm::Ring samples, EngineObserver observer) {
  using Sample = typename SelfPlayGame<G>::Sample;
  if (samples.record_bytes() != sizeof(Sample)) {
    return FailedPrecondition("the sample ring carries " + std::to_string(samples.record_bytes()) +
                              "-byte records, not this game's " + std::to_string(sizeof(Sample)) +
                              "-byte samples");
  }
  const shm::ChannelClientStats stats = client.Stats();
  const std::uint64_t in_flight =
      static_cast<std::uint64_t>(options.games) * options.leaves_per_game;
  if (stats.responses.capacity < in_flight) {
    return InvalidArgument(
        "this worker keeps up to " + std::to_string(in_flight) +
        " requests in flight (games x leaves per game) but its response ring holds " +
        std::to_string(stats.responses.capacity) +
        ": play fewer games or start the evaluator with a larger --response-capacity");
  }
  if (stats.requests.record_bytes != sizeof(shm::Envelope) + sizeof(service::EvalRequest<G>)) {
    return FailedPrecondition("the eval channel does not carry this game's requests");
  }
  options.search.max_batch = options.leaves_per_game;
  options.search.root_noise = true;
  return std::unique_ptr<SelfPlayEngine>(new GameSelfPlayEngine<G>(
      options, std::move(client), std::move(samples), std::move(observer)));
}

}  // namespace

Result<std::unique_ptr<SelfPlayEngine>> CreateSelfPlayEngine(service::GameKind game,
                                                             const EngineOptions& options,
                                                             shm::RequestClient client,
                                                             shm::Ring samples,
                                                             EngineObserver observer) {
  AZ_RETURN_IF_ERROR(ValidateOptions(options));
  switch (game) {
    case service::GameKind::kChess:
      return Make<games::Chess>(options, std::move(client), std::move(samples),
                                std::move(observer));
    case service::GameKind::kConnectFour:
      return Make<games::ConnectFour>(options, std::move(client), std::move(samples),
                                      std::move(observer));
  }
  return InvalidArgument("unknown game");
}

std::uint32_t SampleBytes(service::GameKind game) {
  return game == service::GameKind::kChess ? sizeof(sample::ChessSample)
                                           : sizeof(sample::ConnectFourSample);
}

}  // namespace az::selfplay
