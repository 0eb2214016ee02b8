#include "services/selfplay/driver/selfplay_engine.h"

#include <algorithm>
#include <atomic>
#include <boost/circular_buffer.hpp>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/base/log.h"
#include "core/games/registry.h"
#include "core/mcts/random.h"
#include "core/mcts/search.h"
#include "services/selfplay/driver/position_cap.h"
#include "services/selfplay/driver/surprise.h"
#include "services/selfplay/driver/value_targets.h"
#include "services/selfplay/selfplay_game.h"

namespace az::selfplay {
namespace {

using Clock = std::chrono::steady_clock;

// Receives, submits and pushes in slices this long, so that Stop() is noticed soon.
constexpr std::chrono::milliseconds kSlice{100};
// Answers taken from the evaluator per Receive.
constexpr std::size_t kReceiveBatch = 1024;

std::string_view AnswerStatusName(EvalAnswerStatus status) {
  switch (status) {
    case EvalAnswerStatus::kOk: return "ok";
    case EvalAnswerStatus::kInvalidRequest: return "invalid request";
    case EvalAnswerStatus::kEvaluationFailed: return "evaluation failed";
    case EvalAnswerStatus::kMalformed: return "malformed";
  }
  return "unknown";
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

template <games::GameDefinition G>
class GameSelfPlayEngine final : public SelfPlayEngine {
  using Traits = SelfPlayGame<G>;
  using Sample = typename Traits::Sample;
  using Record = typename G::Record;

  struct Slot {
    std::optional<mcts::Search<G>> search;
    bool active = false;
    int group = 0;
    std::uint64_t game_id = 0;
    std::uint64_t model_version = 0;  // of the latest answer for this game
    std::uint64_t counted_playouts = 0;
    bool failed = false;  // an answer of its batch in flight said invalid or failed
    std::vector<Sample> samples;
    std::vector<double> surprise;   // each sample's policy surprise (policy_surprise_weight > 0)
    std::vector<int> sample_plies;  // each sample's ply (value_lambda < 1)
    Adjudicator adjudicator;
    bool measuring = false;    // a verdict was withheld: the game's result is evidence (Trusted)
    int material_run = 0;      // consecutive plies with one side ahead by the material margin
    int material_leader = 0;   // +1 the first player, -1 the second
    bool full_search = true;   // this move: full search, recorded (playout-cap randomisation)
    int random_until = 0;      // plies below this are random, searched and recorded off-policy
    std::uint32_t budget = 0;  // this move's visits of the root's children (PlanMove)
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
  GameSelfPlayEngine(const EngineOptions& options, std::unique_ptr<AsyncEvaluator> evaluator,
                     std::unique_ptr<SampleSink> sink, EngineObserver observer,
                     std::vector<typename G::State> openings)
      : options_(options),
        evaluator_(std::move(evaluator)),
        sink_(std::move(sink)),
        observer_(std::move(observer)),
        slots_(options.games),
        groups_(options.groups),
        openings_(std::move(openings)) {
    // Game ids: worker id, a per-process salt (so a restarted worker's ids differ), a counter.
    std::random_device device;
    salt_ = device() & 0xFFFFu;
    evaluators_lost_ = evaluator_->EvaluatorsLost();
    // Openings and playthrough draws: their own stream, reproducible from the seed.
    std::uint64_t opening_seed =
        options.search.seed ^ (std::uint64_t{options.worker_id} << 40) ^ 0x6F70656E696E6773ull;
    rng_ = mcts::Rng(mcts::SplitMix64(opening_seed));
    if (options.position_cap > 0) {
      recent_.emplace(options.position_cap,
                      static_cast<std::size_t>(options.position_cap_window));
    }
    if (options.branch_fraction > 0.0f) branch_pool_.set_capacity(EngineOptions::kBranchPool);
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
    for (Group& group : groups_) {
      group.entries.reserve(group.slots.size() * options.leaves_per_game);
    }
    visit_ = [this](const EvalAnswer& answer) { OnAnswer(answer); };
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
    counters_.wait_seconds += Seconds(answered - wait_start);
    Group& group = groups_[oldest];
    group.in_flight = false;
    ++counters_.rounds;
    if (observer_.round_trip) observer_.round_trip(Seconds(answered - group.submitted));
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
    counters_.search_seconds += Seconds(Clock::now() - answered);
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

 private:
  bool Stopped() const { return stop_.load(std::memory_order_acquire); }

  // --- Games. ---

  bool MayStartGame() const {
    return options_.max_games == 0 || counters_.games_started < options_.max_games;
  }

  void StartGame(Slot& slot) {
    if (!MayStartGame()) {
      slot.active = false;
      return;
    }
    slot.search->SetRoot(StartState(slot));
    PlanMove(slot);
    const AdjudicationOptions& adjudication = options_.adjudication;
    const bool playthrough = (adjudication.resign_on() || adjudication.draw_on()) &&
                             rng_.Uniform() < adjudication.resign_playthrough_fraction;
    slot.adjudicator = Adjudicator(adjudication, playthrough);
    slot.measuring = false;
    slot.material_run = 0;
    slot.material_leader = 0;
    slot.active = true;
    slot.game_id = (std::uint64_t{options_.worker_id} << 48) | (std::uint64_t{salt_} << 32) |
                   (counters_.games_started & 0xFFFFFFFFu);
    slot.samples.clear();
    slot.surprise.clear();
    slot.sample_plies.clear();
    ++counters_.games_started;
  }

  // A game's start: with branch_fraction, a branch off a recent game (BranchState); else a book
  // position (or the game's own start), then the random opening plies: those before
  // random_opening_record_from played here, the rest left to PlayMove (the slot's random_until).
  typename G::State StartState(Slot& slot) {
    slot.random_until = 0;
    if (!branch_pool_.empty() && rng_.Uniform() < options_.branch_fraction) {
      if (std::optional<typename G::State> branch = BranchState()) {
        ++counters_.games_branched;
        return *std::move(branch);
      }
    }
    typename G::State state =
        openings_.empty() ? Traits::NewGame(options_.max_plies)
                          : openings_[static_cast<std::size_t>(rng_.Uniform() * openings_.size())];
    const int spread = options_.random_opening_plies_max - options_.random_opening_plies_min;
    const int plies =
        options_.random_opening_plies_min + static_cast<int>(rng_.Uniform() * (spread + 1));
    const int from = options_.random_opening_record_from;
    const int unsearched = from < 0 ? plies : std::clamp(from - Traits::Ply(state), 0, plies);
    const int played = PlayRandomPlies<G>(state, unsearched, rng_, options_.random_opening_careful);
    counters_.opening_plies += played;
    slot.random_until = played == unsearched ? Traits::Ply(state) + (plies - unsearched) : 0;
    return state;
  }

  // A position of the branch pool with one random ply played on it, or nothing when every move
  // there would end the game.
  std::optional<typename G::State> BranchState() {
    typename G::State state =
        branch_pool_[static_cast<std::size_t>(rng_.Uniform() * branch_pool_.size())];
    const std::optional<typename G::Move> move =
        RandomPly<G>(state, rng_, options_.random_opening_careful);
    if (!move) return std::nullopt;
    G::Apply(state, *move);
    return state;
  }

  void CountPlayouts(Slot& slot) {
    const std::uint64_t playouts = slot.search->stats().playouts;
    counters_.simulations += playouts - slot.counted_playouts;
    slot.counted_playouts = playouts;
  }

  // Decides how the slot's new root is searched: fully (noise, recorded) or fast, and with how
  // many visits.
  void PlanMove(Slot& slot) {
    slot.full_search =
        options_.full_search_fraction >= 1.0f || rng_.Uniform() < options_.full_search_fraction;
    const int ply = Traits::Ply(slot.search->root_state());
    const bool opening = ply < options_.opening_simulations_plies;
    slot.budget = static_cast<std::uint32_t>(!slot.full_search ? options_.fast_simulations
                                             : opening         ? options_.opening_simulations
                                                               : options_.simulations);
    const bool noise_due = options_.root_noise_plies < 0 || ply < options_.root_noise_plies;
    slot.search->SetRootNoise(slot.full_search && noise_due);
    slot.search->SetVisitBudget(slot.budget);
  }

  // Plays the moves that are due and gathers the game's next leaves; returns with a batch pending
  // or the slot inactive (no more games to start). Pushing finished games may block.
  Status Advance(Slot& slot) {
    while (slot.active) {
      mcts::Search<G>& search = *slot.search;
      const std::uint32_t target = slot.budget;
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
    // A random opening ply searched only to be recorded (random_opening_record_from): the move
    // played is random, and it is not adjudicated, since random moves follow it and neither its
    // root value nor the material says how the game will end.
    std::optional<typename G::Move> random_move;
    if (ply < slot.random_until) {
      typename G::State state = search.root_state();
      random_move = RandomPly<G>(state, rng_, options_.random_opening_careful);
      if (!random_move) slot.random_until = 0;  // every move ends the game: the search plays on
    }
    if (!random_move) {
      if (const int value = MaterialVerdict(slot, ply); value != 0) {
        ++counters_.material_adjudications;
        AZ_RETURN_IF_ERROR(FinishGame(slot, value, ply));
        StartGame(slot);
        return Status::Ok();
      }
      // Adjudicated: the game ends at this root, which is not recorded (as a final position is
      // not).
      if (const Verdict verdict = slot.adjudicator.Observe(ply, search.RootValue());
          verdict != Verdict::kNone) {
        if (Trusted(verdict)) return Adjudicate(slot, verdict, ply);
        // Withheld: the game goes on to its end and shows whether the verdict was right.
        ++(verdict == Verdict::kResign ? counters_.resignations_withheld
                                       : counters_.draws_withheld);
        slot.measuring = true;
      }
    }
    const std::uint32_t version =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(slot.model_version, 0xFFFFFFFFu));
    if (slot.full_search) {
      Result<Sample> sample =
          Traits::MakeSample(search, slot.game_id, version, /*off_policy=*/random_move.has_value(),
                             options_.improved_root_wdl);
      if (sample.ok()) {
        slot.samples.push_back(*sample);
        if (options_.branch_fraction > 0.0f && !random_move) {
          branch_pool_.push_back(search.root_state());  // over the oldest, once full
        }
        if (options_.policy_surprise_weight > 0.0f) slot.surprise.push_back(RootSurprise(search));
        if (options_.value_lambda < 1.0f) slot.sample_plies.push_back(ply);
      } else {
        ++counters_.samples_dropped;
        AZ_LOG(kError) << "game " << slot.game_id << " ply " << ply
                       << ": no sample: " << sample.status().ToString();
      }
    } else {
      ++counters_.fast_moves;
    }
    if (random_move) {
      ++counters_.opening_plies;
      if (slot.full_search) ++counters_.opening_plies_recorded;
      search.Advance(*random_move);
    } else {
      search.Advance(search.SelectMove(options_.temperature.AtPly(ply)));
    }
    PlanMove(slot);
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

  // +1 (-1) when the side to move at this root has won (lost) on material (EngineOptions), else 0.
  int MaterialVerdict(Slot& slot, int ply) {
    if constexpr (requires(const typename G::State& s) { G::MaterialBalance(s); }) {
      if (options_.material_adjudicate_margin <= 0) return 0;
      const int balance = G::MaterialBalance(slot.search->root_state());
      if (std::abs(balance) < options_.material_adjudicate_margin) {
        slot.material_run = 0;
        return 0;
      }
      const int leader = (balance > 0) == (ply % 2 == 0) ? 1 : -1;
      slot.material_run = leader == slot.material_leader ? slot.material_run + 1 : 1;
      slot.material_leader = leader;
      if (slot.material_run < options_.material_adjudicate_plies) return 0;
      return balance > 0 ? 1 : -1;
    } else {
      (void)slot;
      (void)ply;
      return 0;
    }
  }

  Status Adjudicate(Slot& slot, Verdict verdict, int ply) {
    int value = 0;  // for the side to move at `ply`
    if (verdict == Verdict::kResign) {
      ++counters_.resignations;
      value = slot.adjudicator.resigner_parity() == ply % 2 ? -1 : 1;
    } else {
      ++counters_.draw_adjudications;
    }
    AZ_RETURN_IF_ERROR(FinishGame(slot, value, ply));
    StartGame(slot);
    return Status::Ok();
  }

  // Whether verdicts of this kind have shown themselves reliable in the games played to the end.
  bool Trusted(Verdict verdict) const {
    const AdjudicationOptions& a = options_.adjudication;
    if (a.max_false_positives >= 1.0f) return true;
    const bool resign = verdict == Verdict::kResign;
    const double evidence = static_cast<double>(resign ? counters_.playthrough_would_resign
                                                       : counters_.playthrough_would_draw);
    const double wrong = static_cast<double>(resign ? counters_.resign_false_positives
                                                    : counters_.draw_false_positives);
    return evidence >= a.min_evidence && wrong <= a.max_false_positives * evidence;
  }

  // The would-be verdicts of a playthrough game, or of one whose verdict was withheld, against
  // its result (-1 draw, else the winner's parity).
  void CountPlaythrough(const Adjudicator& adjudicator, bool measuring, int winner) {
    if (!adjudicator.playthrough() && !measuring) return;
    if (adjudicator.playthrough()) ++counters_.playthrough_games;
    if (adjudicator.resigner_parity() >= 0) {
      ++counters_.playthrough_would_resign;
      if (winner != 1 - adjudicator.resigner_parity()) ++counters_.resign_false_positives;
    }
    if (adjudicator.would_draw()) {
      ++counters_.playthrough_would_draw;
      if (winner >= 0) ++counters_.draw_false_positives;
    }
  }

  Status FinishGame(Slot& slot, int final_value, int plies) {
    Traits::SetOutcome(slot.samples, slot.search->root_state(), final_value);
    if (options_.value_lambda < 1.0f) BlendValueTargets(slot);
    if (recent_) CapPositions(slot);
    // The side to move at the end is the first player when an even number of plies was played.
    GameResultKind result = GameResultKind::kDraw;
    if (final_value != 0) {
      const bool first_to_move = plies % 2 == 0;
      const bool first_won = (final_value > 0) == first_to_move;
      result = first_won ? GameResultKind::kFirstPlayerWins : GameResultKind::kSecondPlayerWins;
    }
    ++counters_.games_finished;
    ++counters_.results[static_cast<int>(result)];
    CountPlaythrough(slot.adjudicator, slot.measuring,
                     result == GameResultKind::kDraw ? -1 : static_cast<int>(result));
    if (observer_.game_finished) observer_.game_finished(plies, result);
    std::span<const Sample> samples = slot.samples;
    if (options_.policy_surprise_weight > 0.0f) samples = SurpriseWeighted(slot);
    if (result == GameResultKind::kDraw && options_.drawn_game_weight != 1.0f) {
      samples = DrawWeighted(samples);
    }
    AZ_RETURN_IF_ERROR(PushSamples(samples));
    slot.samples.clear();
    slot.surprise.clear();
    slot.sample_plies.clear();
    return Status::Ok();
  }

  // Leaves out the samples whose position the window already holds position_cap times.
  void CapPositions(Slot& slot) {
    const bool surprise = slot.surprise.size() == slot.samples.size();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < slot.samples.size(); ++i) {
      if (!recent_->Admit(PositionKey(G::SampleRecord(slot.samples[i])))) {
        ++counters_.position_cap_left_out;
        continue;
      }
      slot.samples[kept] = slot.samples[i];
      if (surprise) slot.surprise[kept] = slot.surprise[i];
      ++kept;
    }
    slot.samples.resize(kept);
    if (surprise) slot.surprise.resize(kept);
  }

  // Replaces each sample's outcome with its TD(lambda) value target (value_targets.h).
  void BlendValueTargets(Slot& slot) {
    if (slot.sample_plies.size() != slot.samples.size()) return;  // cannot happen
    thread_local std::vector<ValuePoint> points;
    points.clear();
    for (std::size_t i = 0; i < slot.samples.size(); ++i) {
      const std::array<float, 3> wdl = G::SampleRootWdl(slot.samples[i]);
      points.push_back({slot.sample_plies[i], wdl[0] - wdl[2], G::SampleZ(slot.samples[i])});
    }
    const std::vector<float> targets = LambdaValueTargets(points, options_.value_lambda);
    for (std::size_t i = 0; i < slot.samples.size(); ++i)
      G::SetSampleZ(slot.samples[i], targets[i]);
  }

  // KL(policy target || prior) at the search's root (surprise.h).
  static double RootSurprise(const mcts::Search<G>& search) {
    thread_local std::vector<double> target;
    thread_local std::vector<float> prior;
    target.clear();
    prior.clear();
    for (const auto& child : search.RootChildren()) {
      target.push_back(child.policy);
      prior.push_back(child.prior);
    }
    return PolicySurprise(target, prior);
  }

  // The game's samples, each repeated by SurpriseCopies (options_.policy_surprise_weight).
  std::span<const Sample> SurpriseWeighted(const Slot& slot) {
    weighted_.clear();
    if (slot.surprise.size() != slot.samples.size()) return slot.samples;  // cannot happen
    const std::vector<int> copies =
        SurpriseCopies(slot.surprise, options_.policy_surprise_weight, rng_);
    for (std::size_t i = 0; i < slot.samples.size(); ++i) {
      for (int c = 0; c < copies[i]; ++c) weighted_.push_back(slot.samples[i]);
      counters_.surprise_extra_copies += copies[i] > 1 ? copies[i] - 1 : 0;
      counters_.surprise_left_out += copies[i] == 0 ? 1 : 0;
    }
    return weighted_;
  }

  // A drawn game's samples, each repeated floor(w) or floor(w) + 1 times (w the drawn game
  // weight, its fraction the chance of the extra copy): w copies on average.
  std::span<const Sample> DrawWeighted(std::span<const Sample> samples) {
    drawn_weighted_.clear();
    for (const Sample& sample : samples) {
      const int copies = RoundAtRandom(options_.drawn_game_weight, rng_);
      for (int c = 0; c < copies; ++c) drawn_weighted_.push_back(sample);
      counters_.drawn_extra_copies += copies > 1 ? copies - 1 : 0;
      counters_.drawn_left_out += copies == 0 ? 1 : 0;
    }
    return drawn_weighted_;
  }

  // Pushes a finished game's samples, in slices so that a stop is noticed. A sink that stays full
  // for push_timeout is logged (once per record that waits) and waited for.
  Status PushSamples(std::span<const Sample> samples) {
    const std::span<const std::byte> bytes = std::as_bytes(samples);
    const std::size_t n = samples.size();
    std::size_t done = 0;
    Clock::time_point since = Clock::now();  // the record at `done` has waited since
    bool full = false;                       // logged as full, not pushed since
    while (done < n) {
      const Result<std::size_t> pushed = sink_->Push(bytes.subspan(done * sizeof(Sample)), kSlice);
      if (!pushed.ok() && pushed.status().code() != StatusCode::kDeadlineExceeded) {
        return pushed.status().WithContext(std::string(sink_->name()));
      }
      const std::size_t k = pushed.ok() ? *pushed : 0;
      if (k > 0) {
        done += k;
        counters_.samples_pushed += k;
        if (full) {
          AZ_LOG(kInfo) << sink_->name() << " has room again after "
                        << Seconds(Clock::now() - since) << " s";
          full = false;
        }
        since = Clock::now();
        if (done == n) break;
      }
      if (!full && Clock::now() - since >= options_.push_timeout) {
        full = true;
        ++counters_.ring_waits;
        AZ_LOG(kWarning) << sink_->name() << " has been full for " << options_.push_timeout.count()
                         << " ms (is " << sink_->consumer() << " running?); waiting to push";
      }
      const bool stopped = Stopped();
      if (stopped) counters_.samples_dropped += n - done;
      PublishCounters();
      if (stopped) {
        return Cancelled("stopped while waiting for room in " + std::string(sink_->name()));
      }
    }
    return Status::Ok();
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
    counters_.search_seconds += Seconds(Clock::now() - start);
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
    requests_.clear();
    for (std::size_t i = 0; i < group.entries.size(); ++i) {
      const Entry& entry = group.entries[i];
      if (entry.answered) continue;
      ++group.unanswered;
      const Slot& slot = slots_[entry.slot];
      const mcts::Leaf<G>& leaf = slot.search->leaves()[entry.leaf];
      requests_.push_back({.request_id = group.base_id + i,
                           .game_id = slot.game_id,
                           .record = std::as_bytes(std::span<const Record>(leaf.record, 1)),
                           .policy_indices = leaf.policy_indices});
    }
    std::size_t done = 0;
    Clock::time_point since = Clock::now();
    bool warned = false;
    while (done < requests_.size()) {
      const Result<std::size_t> submitted =
          evaluator_->Submit(std::span(requests_).subspan(done), kSlice);
      if (!submitted.ok() && submitted.status().code() != StatusCode::kDeadlineExceeded) {
        return submitted.status().WithContext("submit");
      }
      if (submitted.ok() && *submitted > 0) {
        done += *submitted;
        counters_.requests_submitted += *submitted;
        since = Clock::now();
        if (done == requests_.size()) break;
      }
      if (Stopped()) return Cancelled("self-play stopped");
      if (!warned && Clock::now() - since > options_.eval_timeout) {
        warned = true;
        AZ_LOG(kWarning) << "the eval requests have found no room for "
                         << options_.eval_timeout.count() << " ms (is " << evaluator_->name()
                         << " running?); still trying";
      }
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

  void OnAnswer(const EvalAnswer& answer) {
    Group* group = GroupOf(answer.request_id);
    if (group == nullptr) {
      // Not a request in flight: a late answer that the transport did not recognise as stale.
      ++counters_.protocol_errors;
      return;
    }
    Entry& entry = group->entries[answer.request_id - group->base_id];
    if (entry.answered) return;
    Slot& slot = slots_[entry.slot];
    mcts::Search<G>& search = *slot.search;
    const std::size_t moves = search.leaves()[entry.leaf].moves.size();
    if (answer.status == EvalAnswerStatus::kMalformed ||
        (answer.status == EvalAnswerStatus::kOk && answer.priors.size() != moves)) {
      // Left unanswered: the timeout resubmits it.
      ++counters_.protocol_errors;
      AZ_LOG(kWarning) << "dropped a malformed eval answer: "
                       << (answer.status == EvalAnswerStatus::kMalformed
                               ? answer.error.ToString()
                               : std::to_string(answer.priors.size()) + " priors for " +
                                     std::to_string(moves) + " moves");
      return;
    }
    entry.answered = true;
    --group->unanswered;
    slot.model_version = answer.model_version;
    counters_.model_version = answer.model_version;
    if (answer.status != EvalAnswerStatus::kOk) {
      ++counters_.eval_errors;
      slot.failed = true;
      if (counters_.eval_errors <= 10 || counters_.eval_errors % 1000 == 0) {
        AZ_LOG(kWarning) << evaluator_->name() << " answered \"" << AnswerStatusName(answer.status)
                         << "\" for game " << slot.game_id << " (" << counters_.eval_errors
                         << " so far); its leaves are searched again";
      }
      return;
    }
    mcts::LeafEval& eval = search.evals()[entry.leaf];
    std::copy(answer.priors.begin(), answer.priors.end(), eval.priors.begin());
    eval.SetWdl(answer.wdl[0], answer.wdl[1], answer.wdl[2]);
  }

  Status WaitFor(int g) {
    Group& group = groups_[g];
    Clock::time_point last_progress = Clock::now();
    while (group.unanswered > 0) {
      const Result<std::size_t> got = evaluator_->Receive(kReceiveBatch, kSlice, visit_);
      if (got.ok()) {
        last_progress = Clock::now();
        continue;
      }
      if (got.status().code() != StatusCode::kDeadlineExceeded) {
        return got.status().WithContext("receiving eval answers");
      }
      if (Stopped()) return Cancelled("self-play stopped");
      // An evaluator that died or left may have taken requests with it: submit again at once.
      const std::uint64_t lost = evaluator_->EvaluatorsLost();
      if (lost != evaluators_lost_) {
        evaluators_lost_ = lost;
        ++counters_.evaluator_losses;
        AZ_RETURN_IF_ERROR(ResubmitEverything("an evaluator stopped serving"));
        last_progress = Clock::now();
        continue;
      }
      if (Clock::now() - last_progress < options_.eval_timeout) continue;
      // Nothing for eval_timeout: the evaluator hangs or lost our requests.
      ++counters_.eval_timeouts;
      AZ_RETURN_IF_ERROR(
          ResubmitEverything("no eval answer for " + std::to_string(options_.eval_timeout.count()) +
                             " ms (is " + std::string(evaluator_->name()) + " running?)"));
      last_progress = Clock::now();
    }
    return Status::Ok();
  }

  // A new generation makes any late answer to the old requests stale; then everything unanswered
  // goes again.
  Status ResubmitEverything(const std::string& why) {
    const std::uint32_t generation = evaluator_->Reset();
    int resubmitted = 0;
    for (Group& other : groups_) {
      if (!other.in_flight) continue;
      AZ_RETURN_IF_ERROR(SubmitGroup(other));
      resubmitted += other.unanswered;
    }
    AZ_LOG(kWarning) << why << ": resubmitted " << resubmitted << " requests as generation "
                     << generation;
    PublishCounters();
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
  std::unique_ptr<AsyncEvaluator> evaluator_;
  std::unique_ptr<SampleSink> sink_;
  EngineObserver observer_;
  AsyncEvaluator::AnswerVisitor visit_;
  std::vector<Slot> slots_;
  std::vector<Group> groups_;
  std::vector<typename G::State> openings_;  // the opening book's positions
  mcts::Rng rng_;                            // openings, playthrough, surprise and draw weights
  std::vector<Sample> weighted_;             // a game's samples with their surprise copies
  std::vector<Sample> drawn_weighted_;       // a drawn game's samples with their copies
  std::optional<RecentPositions> recent_;    // position_cap's window (when on)
  // branch_fraction's pool: the positions the last kBranchPool full searches played from (no
  // capacity when off).
  boost::circular_buffer<typename G::State> branch_pool_;
  std::vector<LeafRequest> requests_;        // SubmitGroup's scratch
  std::uint32_t salt_ = 0;
  std::uint64_t evaluators_lost_ = 0;  // evaluator_->EvaluatorsLost() when last submitted
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
  AZ_RETURN_IF_ERROR(range("position cap", o.position_cap, 0, 1 << 20));
  AZ_RETURN_IF_ERROR(range("position cap window", o.position_cap_window, 1, 1 << 26));
  if (!(o.full_search_fraction > 0.0f && o.full_search_fraction <= 1.0f)) {
    return InvalidArgument("full search fraction " + std::to_string(o.full_search_fraction) +
                           " is not in (0, 1]");
  }
  if (o.full_search_fraction < 1.0f) {
    AZ_RETURN_IF_ERROR(range("fast simulations", o.fast_simulations, 1, o.simulations));
  }
  if (!(o.policy_surprise_weight >= 0.0f && o.policy_surprise_weight <= 1.0f)) {
    return InvalidArgument("policy surprise weight " + std::to_string(o.policy_surprise_weight) +
                           " is not in [0, 1]");
  }
  if (!(o.drawn_game_weight >= 0.0f && o.drawn_game_weight <= 16.0f)) {
    return InvalidArgument("drawn game weight " + std::to_string(o.drawn_game_weight) +
                           " is not in [0, 16]");
  }
  if (!(o.branch_fraction >= 0.0f && o.branch_fraction <= 1.0f)) {
    return InvalidArgument("branch fraction " + std::to_string(o.branch_fraction) +
                           " is not in [0, 1]");
  }
  if (!(o.value_lambda >= 0.0f && o.value_lambda <= 1.0f)) {
    return InvalidArgument("value lambda " + std::to_string(o.value_lambda) + " is not in [0, 1]");
  }
  AZ_RETURN_IF_ERROR(range("opening simulations plies", o.opening_simulations_plies, 0, 1 << 20));
  if (o.opening_simulations_plies > 0) {
    AZ_RETURN_IF_ERROR(range("opening simulations", o.opening_simulations, 1, 1 << 24));
  }
  AZ_RETURN_IF_ERROR(range("root noise plies", o.root_noise_plies, -1, 1 << 20));
  AZ_RETURN_IF_ERROR(range("groups", o.groups, 1, 64));
  AZ_RETURN_IF_ERROR(range("max plies", o.max_plies, 1, 1 << 20));
  AZ_RETURN_IF_ERROR(range("random opening plies", o.random_opening_plies_max, 0, o.max_plies - 1));
  AZ_RETURN_IF_ERROR(range("material adjudicate margin", o.material_adjudicate_margin, 0, 100));
  AZ_RETURN_IF_ERROR(range("material adjudicate plies", o.material_adjudicate_plies, 1, 1 << 20));
  AZ_RETURN_IF_ERROR(
      range("random opening plies min", o.random_opening_plies_min, 0, o.random_opening_plies_max));
  AZ_RETURN_IF_ERROR(o.adjudication.Validate().WithContext("adjudication"));
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

template <games::GameDefinition G>
Result<std::unique_ptr<SelfPlayEngine>> Make(EngineOptions options,
                                             std::unique_ptr<AsyncEvaluator> evaluator,
                                             std::unique_ptr<SampleSink> sink,
                                             EngineObserver observer) {
  using Sample = typename SelfPlayGame<G>::Sample;
  if (sink->record_bytes() != sizeof(Sample)) {
    return FailedPrecondition(
        std::string(sink->name()) + " carries " + std::to_string(sink->record_bytes()) +
        "-byte records, not this game's " + std::to_string(sizeof(Sample)) + "-byte samples");
  }
  const std::uint64_t in_flight =
      static_cast<std::uint64_t>(options.games) * options.leaves_per_game;
  const std::uint64_t room = evaluator->max_in_flight();
  if (room > 0 && room < in_flight) {
    return InvalidArgument("this worker keeps up to " + std::to_string(in_flight) +
                           " requests in flight (games x leaves per game) but " +
                           std::string(evaluator->name()) + " holds only " + std::to_string(room) +
                           " answers for it: play fewer games or start the evaluator with a larger "
                           "--response-capacity");
  }
  std::vector<typename G::State> openings;
  if (!options.opening_book.empty()) {
    AZ_ASSIGN_OR_RETURN(openings, OpeningPositions<G>(options.opening_book));
  }
  options.search.max_batch = options.leaves_per_game;
  options.search.root_noise = true;
  return std::unique_ptr<SelfPlayEngine>(new GameSelfPlayEngine<G>(
      options, std::move(evaluator), std::move(sink), std::move(observer), std::move(openings)));
}

}  // namespace

Result<std::unique_ptr<SelfPlayEngine>> CreateSelfPlayEngine(
    service::GameKind game, const EngineOptions& options, std::unique_ptr<AsyncEvaluator> evaluator,
    std::unique_ptr<SampleSink> sink, EngineObserver observer) {
  if (evaluator == nullptr || sink == nullptr) {
    return InvalidArgument("a self-play engine needs an evaluator and a sample sink");
  }
  if (games::FindGameById(game) == nullptr) {
    return InvalidArgument("unknown game id " + std::to_string(game));
  }
  AZ_RETURN_IF_ERROR(ValidateOptions(options));
  return games::VisitGame(
      game, [&]<games::GameDefinition G>() -> Result<std::unique_ptr<SelfPlayEngine>> {
        return Make<G>(options, std::move(evaluator), std::move(sink), std::move(observer));
      });
}

std::uint32_t SampleBytes(service::GameKind game) {
  const games::GameInfo* info = games::FindGameById(game);
  AZ_CHECK(info != nullptr, "SampleBytes of an unregistered game");
  return static_cast<std::uint32_t>(info->sample_bytes);
}

}  // namespace az::selfplay
