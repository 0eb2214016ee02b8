#include "services/uci/uci_engine.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "core/chess/uci.h"

namespace az::uci {
namespace {

using Clock = std::chrono::steady_clock;

// Past this many visits at the root a search stops adding (Search::Run counts in int).
constexpr std::uint32_t kMaxRootVisits = 1u << 30;
// A new position more plies than this past the tree's root starts a fresh tree.
constexpr int kMaxReusePlies = 8;
// The PV printed, at most.
constexpr int kMaxPvPlies = 64;

std::int64_t MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string FormatFloat(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value + 0.0);
  return text;
}

std::optional<std::int64_t> ParseSpin(std::string_view text, std::int64_t min, std::int64_t max) {
  const std::string copy(text);
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(copy.c_str(), &end, 10);
  if (errno != 0 || end != copy.c_str() + copy.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> ParseReal(std::string_view text, double min, double max) {
  const std::string copy(text);
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(value) || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

// Two arenas (the tree and the target of subtree reuse) of 64-byte nodes share the Hash budget.
std::uint32_t NodesForHash(int hash_mb) {
  const std::uint64_t nodes =
      (static_cast<std::uint64_t>(hash_mb) << 20) / (2 * sizeof(mcts::Node));
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(nodes, 1024, 1u << 30));
}

mcts::SearchOptions MakeSearchOptions(const EngineOptions& options, bool is_network) {
  mcts::SearchOptions search;
  search.c_puct = options.c_puct;
  // The FPU reduction trusts the priors; uniform priors carry none (docs/mcts.md, as az-search).
  search.fpu_base = is_network ? 1.0f : 0.0f;
  search.risk_beta = options.risk_beta;
  search.draw_score = 0.0f;  // a game against an opponent: a draw is worth exactly 0
  search.virtual_loss = mcts::VirtualLoss::kLoss;  // spreads one tree's batch (docs/mcts.md)
  search.root_noise = false;
  search.max_batch = options.minibatch;
  search.reuse_tree = true;
  search.max_nodes = NodesForHash(options.hash_mb);
  return search;
}

bool IsProvenWin(const mcts::Node& child) {  // for the side choosing it
  return child.state == mcts::NodeState::kTerminal && child.outcome == games::GameOutcome::kLoss;
}
bool IsProvenLoss(const mcts::Node& child) {
  return child.state == mcts::NodeState::kTerminal && child.outcome == games::GameOutcome::kWin;
}

// True when searching on cannot change the answer: a move is proven to win, or every move's
// value is exact.
bool RootSolved(const mcts::Search<games::Chess>& search) {
  const mcts::Node& root = search.root();
  if (root.state != mcts::NodeState::kExpanded) return false;
  bool all_exact = true;
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const mcts::Node& child = search.arena()[root.first_child + i];
    if (IsProvenWin(child)) return true;
    all_exact = all_exact && child.state == mcts::NodeState::kTerminal;
  }
  return all_exact;
}

// The index (among the root's children) of the move to play: a proven win first, then the most
// visited move that is not proven lost (the higher prior on ties, as Search::BestMove); -1 when
// the root is not expanded.
int ChooseChild(const mcts::Search<games::Chess>& search) {
  const mcts::Node& root = search.root();
  if (root.state != mcts::NodeState::kExpanded || root.num_children == 0) return -1;
  int best = -1;
  std::pair<int, std::uint32_t> best_key{-1, 0};
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const mcts::Node& child = search.arena()[root.first_child + i];
    const int category = IsProvenWin(child) ? 2 : (IsProvenLoss(child) ? 0 : 1);
    const std::pair<int, std::uint32_t> key{category, child.N()};
    if (key > best_key) {
      best_key = key;
      best = static_cast<int>(i);
    }
  }
  return best;
}

// True when the most visited move leads the second by more playouts than the rest of the budget
// can give at the rate seen so far (lc0's "smart pruning"): the time is better kept for later.
bool BestMoveSettled(const mcts::Search<games::Chess>& search, std::uint64_t playouts,
                     double elapsed_s, std::int64_t budget_ms) {
  const mcts::Node& root = search.root();
  if (root.state != mcts::NodeState::kExpanded || elapsed_s <= 0.0 || playouts < 32) return false;
  std::uint32_t first = 0, second = 0;
  for (std::uint32_t i = 0; i < root.num_children; ++i) {
    const std::uint32_t n = search.arena()[root.first_child + i].N();
    if (n > first) {
      second = first;
      first = n;
    } else if (n > second) {
      second = n;
    }
  }
  const double remaining_s = std::max(0.0, budget_ms / 1000.0 - elapsed_s);
  const double more_playouts = static_cast<double>(playouts) / elapsed_s * remaining_s;
  return static_cast<double>(first - second) > more_playouts;
}

struct TreeDepth {
  int depth = 0;     // the playouts' average depth, rounded (lc0's "depth")
  int seldepth = 0;  // the deepest visited node
};

// One pass over the visited tree: sum over non-root nodes of their visits is the sum of the
// playouts' depths (every playout visits each node on its path once).
TreeDepth MeasureDepth(const mcts::Search<games::Chess>& search,
                       std::vector<std::pair<std::uint32_t, int>>& stack) {
  const mcts::NodeArena& arena = search.arena();
  const mcts::Node& root = search.root();
  const std::uint32_t root_visits = root.N();
  if (root_visits == 0) return {};
  std::uint64_t depth_sum = 0;
  int deepest = 0;
  stack.clear();
  stack.emplace_back(search.root_index(), 0);
  while (!stack.empty()) {
    const auto [index, depth] = stack.back();
    stack.pop_back();
    const mcts::Node& node = arena[index];
    if (node.state != mcts::NodeState::kExpanded) continue;
    for (std::uint32_t i = 0; i < node.num_children; ++i) {
      const mcts::Node& child = arena[node.first_child + i];
      const std::uint32_t visits = child.N();
      if (visits == 0) continue;
      depth_sum += visits;
      deepest = std::max(deepest, depth + 1);
      if (child.state == mcts::NodeState::kExpanded)
        stack.emplace_back(node.first_child + i, depth + 1);
    }
  }
  TreeDepth result;
  result.depth =
      std::max(1, static_cast<int>(std::lround(static_cast<double>(depth_sum) / root_visits)));
  result.seldepth = std::max(result.depth, deepest);
  return result;
}

}  // namespace

Status EngineOptions::Validate() const {
  if (model.empty()) return InvalidArgument("the model must be a weights file or 'uniform'");
  if (threads < 1 || threads > kMaxThreads) {
    return InvalidArgument("Threads must be within [1, " + std::to_string(kMaxThreads) + "]");
  }
  if (hash_mb < kMinHashMb || hash_mb > kMaxHashMb) {
    return InvalidArgument("Hash must be within [1, " + std::to_string(kMaxHashMb) + "] MiB");
  }
  if (nn_cache_entries > kMaxNnCacheEntries) {
    return InvalidArgument("NNCacheSize must be within [0, " + std::to_string(kMaxNnCacheEntries) +
                           "]");
  }
  if (minibatch < 1 || minibatch > kMaxMinibatch) {
    return InvalidArgument("MinibatchSize must be within [1, " + std::to_string(kMaxMinibatch) +
                           "]");
  }
  if (!(std::isfinite(c_puct) && c_puct > 0.0f && c_puct <= 100.0f)) {
    return InvalidArgument("CPuct must be within (0, 100]");
  }
  if (!(std::isfinite(risk_beta) && std::fabs(risk_beta) <= 100.0f)) {
    return InvalidArgument("RiskBeta must be within [-100, 100]");
  }
  if (move_overhead_ms < 0 || move_overhead_ms > kMaxMoveOverheadMs) {
    return InvalidArgument("Move Overhead must be within [0, " +
                           std::to_string(kMaxMoveOverheadMs) + "] ms");
  }
  if (info_interval_ms < 1) return InvalidArgument("the info interval must be at least 1 ms");
  return Status::Ok();
}

Result<std::unique_ptr<UciEngine>> UciEngine::Create(const EngineOptions& options, LineSink sink,
                                                     EvaluatorFactory factory) {
  AZ_RETURN_IF_ERROR(options.Validate());
  AZ_CHECK(sink != nullptr && factory != nullptr, "UciEngine needs a sink and a factory");
  EvaluatorSettings settings{options.model, options.threads, options.nn_cache_entries};
  AZ_ASSIGN_OR_RETURN(LoadedEvaluator evaluator, factory(settings));
  AZ_CHECK(evaluator.evaluator != nullptr, "the evaluator factory returned no evaluator");
  return std::unique_ptr<UciEngine>(
      new UciEngine(options, std::move(sink), std::move(factory), std::move(evaluator)));
}

UciEngine::UciEngine(const EngineOptions& options, LineSink sink, EvaluatorFactory factory,
                     LoadedEvaluator evaluator)
    : options_(options),
      sink_(std::move(sink)),
      factory_(std::move(factory)),
      evaluator_(std::move(evaluator)) {}

UciEngine::~UciEngine() { StopSearch(); }

SearchReport UciEngine::last_report() const {
  std::lock_guard lock(report_mutex_);
  return report_;
}

void UciEngine::Emit(std::string_view line) {
  std::lock_guard lock(sink_mutex_);
  sink_(line);
}

void UciEngine::EmitInfoString(std::string_view text) {
  std::string line = "info string ";
  line += text;
  std::replace(line.begin(), line.end(), '\n', ' ');
  Emit(line);
}

void UciEngine::Run(std::istream& in) {
  std::string line;
  while (std::getline(in, line)) {
    if (!HandleLine(line)) return;
  }
  StopSearch();  // the end of input is a quit
}

bool UciEngine::HandleLine(std::string_view line) {
  const auto [command, arguments] = SplitCommand(line);
  if (command.empty()) return true;
  if (command == "uci") {
    HandleUci();
  } else if (command == "isready") {
    // Answered at once, even mid-search; a finished search's thread is collected first.
    if (!searching() && search_thread_.joinable()) search_thread_.join();
    Emit("readyok");
  } else if (command == "setoption") {
    HandleSetOption(arguments);
  } else if (command == "ucinewgame") {
    StopSearch();
    position_ = chess::Game();
    tree_game_.reset();  // the next search starts a fresh tree
  } else if (command == "position") {
    HandlePosition(arguments);
  } else if (command == "go") {
    HandleGo(arguments);
  } else if (command == "stop") {
    StopSearch();
  } else if (command == "quit") {
    StopSearch();
    return false;
  } else if (command == "debug" || command == "register" || command == "ponderhit") {
    // Nothing to do: no debug output, no registration, no pondering (Ponder is not offered).
  } else {
    EmitInfoString("unknown command '" + std::string(command) + "' ignored");
  }
  return true;
}

void UciEngine::HandleUci() {
  Emit("id name az-uci");
  Emit("id author the alphazero_pipeline authors");
  Emit("option name WeightsFile type string default " + options_.model);
  Emit("option name Threads type spin default " + std::to_string(options_.threads) + " min 1 max " +
       std::to_string(kMaxThreads));
  Emit("option name Hash type spin default " + std::to_string(options_.hash_mb) + " min " +
       std::to_string(kMinHashMb) + " max " + std::to_string(kMaxHashMb));
  Emit("option name NNCacheSize type spin default " + std::to_string(options_.nn_cache_entries) +
       " min 0 max " + std::to_string(kMaxNnCacheEntries));
  Emit("option name MinibatchSize type spin default " + std::to_string(options_.minibatch) +
       " min 1 max " + std::to_string(kMaxMinibatch));
  Emit("option name CPuct type string default " + FormatFloat(options_.c_puct));
  Emit("option name RiskBeta type string default " + FormatFloat(options_.risk_beta));
  Emit("option name Move Overhead type spin default " + std::to_string(options_.move_overhead_ms) +
       " min 0 max " + std::to_string(kMaxMoveOverheadMs));
  Emit(std::string("option name UCI_ShowWDL type check default ") +
       (options_.show_wdl ? "true" : "false"));
  Emit("uciok");
}

EvaluatorSettings UciEngine::CurrentEvaluatorSettings() const {
  return {options_.model, options_.threads, options_.nn_cache_entries};
}

bool UciEngine::ReloadEvaluator(const EvaluatorSettings& settings) {
  Result<LoadedEvaluator> loaded = factory_(settings);
  if (!loaded.ok()) {
    EmitInfoString("cannot load the evaluator, keeping the current one: " +
                   loaded.status().ToString());
    return false;
  }
  evaluator_ = std::move(*loaded);
  EmitInfoString("evaluator: " + evaluator_.description);
  return true;
}

void UciEngine::HandleSetOption(std::string_view arguments) {
  if (searching()) {
    EmitInfoString("setoption ignored: a search is running (send stop first)");
    return;
  }
  if (search_thread_.joinable()) search_thread_.join();
  Result<OptionSetting> setting = ParseSetOption(arguments);
  if (!setting.ok()) {
    EmitInfoString(setting.status().message());
    return;
  }
  const std::string name = Lowercase(setting->name);  // option names are case-insensitive
  const std::string& value = setting->value;
  EngineOptions updated = options_;
  bool understood = true;
  const auto spin = [&](std::int64_t min, std::int64_t max) {
    std::optional<std::int64_t> parsed = ParseSpin(value, min, max);
    if (!parsed) understood = false;
    return parsed.value_or(0);
  };
  const auto real = [&](double min, double max) {
    std::optional<double> parsed = ParseReal(value, min, max);
    if (!parsed) understood = false;
    return static_cast<float>(parsed.value_or(0.0));
  };
  std::string range;
  if (name == "weightsfile") {
    updated.model = value.empty() ? "uniform" : value;
  } else if (name == "threads") {
    updated.threads = static_cast<int>(spin(1, kMaxThreads));
    range = "an integer in [1, " + std::to_string(kMaxThreads) + "]";
  } else if (name == "hash") {
    updated.hash_mb = static_cast<int>(spin(kMinHashMb, kMaxHashMb));
    range = "an integer in [1, " + std::to_string(kMaxHashMb) + "]";
  } else if (name == "nncachesize") {
    updated.nn_cache_entries =
        static_cast<std::uint64_t>(spin(0, static_cast<std::int64_t>(kMaxNnCacheEntries)));
    range = "an integer in [0, " + std::to_string(kMaxNnCacheEntries) + "]";
  } else if (name == "minibatchsize") {
    updated.minibatch = static_cast<int>(spin(1, kMaxMinibatch));
    range = "an integer in [1, " + std::to_string(kMaxMinibatch) + "]";
  } else if (name == "cpuct") {
    updated.c_puct = real(1e-6, 100.0);
    range = "a number in (0, 100]";
  } else if (name == "riskbeta") {
    updated.risk_beta = real(-100.0, 100.0);
    range = "a number in [-100, 100]";
  } else if (name == "move overhead") {
    updated.move_overhead_ms = static_cast<int>(spin(0, kMaxMoveOverheadMs));
    range = "an integer in [0, " + std::to_string(kMaxMoveOverheadMs) + "]";
  } else if (name == "uci_showwdl") {
    const std::string lower = Lowercase(value);
    understood = lower == "true" || lower == "false";
    updated.show_wdl = lower == "true";
    range = "true or false";
  } else {
    EmitInfoString("unknown option '" + setting->name + "' ignored");
    return;
  }
  if (!understood) {
    EmitInfoString("setoption " + setting->name + ": '" + value + "' is not " + range +
                   "; unchanged");
    return;
  }
  if (Status valid = updated.Validate(); !valid.ok()) {
    EmitInfoString("setoption " + setting->name + ": " + valid.message() + "; unchanged");
    return;
  }
  const EvaluatorSettings evaluator_settings{updated.model, updated.threads,
                                             updated.nn_cache_entries};
  const bool new_evaluator = !(evaluator_settings == CurrentEvaluatorSettings());
  if (new_evaluator && !ReloadEvaluator(evaluator_settings)) return;
  const bool new_search = new_evaluator || updated.hash_mb != options_.hash_mb ||
                          updated.minibatch != options_.minibatch ||
                          updated.c_puct != options_.c_puct ||
                          updated.risk_beta != options_.risk_beta;
  if (new_search) {  // rebuilt at the next go; a tree valued by other settings is not reused
    search_.reset();
    tree_game_.reset();
  }
  options_ = updated;
}

void UciEngine::HandlePosition(std::string_view arguments) {
  // A running search has its own copy of its position: this only sets the next one.
  PositionCommand command = ParsePosition(arguments);
  if (!command.error.empty()) {
    EmitInfoString("position: " + command.error +
                   (command.game ? std::string() : "; the position is unchanged"));
  }
  if (command.game) position_ = std::move(*command.game);
}

void UciEngine::StopSearch() {
  if (!search_thread_.joinable()) return;
  stop_requested_.store(true, std::memory_order_release);
  stop_requested_.notify_all();
  search_thread_.join();
  stop_requested_.store(false, std::memory_order_release);
}

void UciEngine::HandleGo(std::string_view arguments) {
  const Clock::time_point start = Clock::now();  // the clock runs from the moment go arrived
  StopSearch();  // a go during a search ends that search first (its bestmove is printed)
  const GoLimits limits = ParseGo(arguments);
  for (const std::string& warning : limits.warnings) EmitInfoString(warning);

  SearchJob job{position_, start};
  TimeManagerOptions time_options;
  time_options.move_overhead_ms = options_.move_overhead_ms;
  const bool white_to_move = position_.position().SideToMove() == chess::kWhite;
  SearchTimePlan plan = PlanSearchTime(limits, white_to_move, time_options);
  const bool has_limit = plan.budget_ms || limits.nodes || limits.depth;
  const bool plain_go = SplitCommand(arguments).first.empty();
  if (!limits.infinite && !has_limit && !plain_go) {
    // The GUI meant to give a limit that cannot be used (unreadable, or only the other side's
    // clock): a short search, not an endless one. A plain `go` searches until stop.
    EmitInfoString("no usable limit in this go: searching for 1000 ms");
    plan.budget_ms = MoveTimeBudgetMs(1000, time_options);
  }
  job.until_stop = limits.infinite || !(plan.budget_ms || limits.nodes || limits.depth);
  if (!job.until_stop) {
    job.budget_ms = plan.budget_ms;
    job.from_clock = plan.from_clock;
    job.nodes = limits.nodes;
    job.depth = limits.depth;
  }
  search_running_.store(true, std::memory_order_release);
  search_thread_ = std::thread(&UciEngine::SearchMain, this, std::move(job));
}

void UciEngine::WaitForStop() {
  while (!stop_requested_.load(std::memory_order_acquire)) stop_requested_.wait(false);
}

Status UciEngine::PrepareTree(const chess::Game& game) {
  if (!search_) {
    AZ_ASSIGN_OR_RETURN(Search made,
                        Search::Create(MakeSearchOptions(options_, evaluator_.is_network), game));
    search_.emplace(std::move(made));
    tree_game_ = game;
    return Status::Ok();
  }
  // Reuse the tree when the new position continues the game at its root: same start, the root's
  // moves, then a few more (our move and the reply, typically).
  bool reuse =
      tree_game_.has_value() && game.ply() >= tree_game_->ply() &&
      game.ply() - tree_game_->ply() <= kMaxReusePlies &&
      game.PositionAt(game.ply()).ToFen() == tree_game_->PositionAt(tree_game_->ply()).ToFen();
  for (int i = 0; reuse && i < tree_game_->ply(); ++i) {
    reuse = game.moves()[i] == tree_game_->moves()[i];
  }
  if (reuse) {
    for (int i = tree_game_->ply(); i < game.ply(); ++i) search_->Advance(game.moves()[i]);
  } else {
    search_->SetRoot(game);
  }
  tree_game_ = game;
  return Status::Ok();
}

chess::Move UciEngine::MoveWithoutSearch(const chess::Game& game) {
  const chess::MoveList legal = game.LegalMoves();
  if (legal.empty()) return chess::Move::Null();
  std::vector<chess::Move> moves(legal.begin(), legal.end());
  std::vector<std::uint16_t> indices;
  for (chess::Move move : moves) {
    indices.push_back(static_cast<std::uint16_t>(games::Chess::PolicyIndex(game, move)));
  }
  const games::Chess::Record record = games::Chess::ToRecord(game);
  const mcts::Leaf<games::Chess> leaf{&record, moves, indices};
  std::vector<float> priors(moves.size(), 0.0f);
  std::array<float, 3> wdl{};
  mcts::LeafEval eval{priors, std::span<float, 3>(wdl)};
  if (Status status = evaluator_.evaluator->Evaluate({&leaf, 1}, {&eval, 1}); !status.ok()) {
    EmitInfoString("evaluator error, playing the first legal move: " + status.ToString());
    return moves.front();
  }
  const auto best = std::max_element(priors.begin(), priors.end());  // the first on ties
  return moves[static_cast<std::size_t>(best - priors.begin())];
}

void UciEngine::SearchMain(SearchJob job) {
  SearchReport report;
  const chess::MoveList legal = job.game.LegalMoves();
  const chess::GameOutcome outcome = job.game.Outcome();
  chess::Move best = chess::Move::Null();
  if (legal.empty()) {
    EmitInfoString("no legal move: " + std::string(chess::ToString(outcome.reason)));
    if (job.until_stop) WaitForStop();
  } else if (legal.size() == 1) {
    best = legal[0];  // nothing to think about
    if (job.until_stop) WaitForStop();
  } else if (outcome.is_terminal()) {
    // Drawn by our rules (threefold, fifty moves, material) although the GUI plays on: the
    // search refuses a finished root, so the evaluator's first choice answers.
    EmitInfoString("the game is already drawn (" + std::string(chess::ToString(outcome.reason)) +
                   "): playing the evaluator's first choice");
    best = MoveWithoutSearch(job.game);
    if (job.until_stop) WaitForStop();
  } else {
    best = SearchAndChoose(job, report);
  }

  std::string text = "0000";
  if (!legal.empty()) {
    if (!legal.contains(best)) {  // never print an illegal move, whatever went wrong above
      EmitInfoString("internal error: " + chess::MoveToUci(best) +
                     " is not legal here; playing the first legal move");
      best = legal[0];
    }
    text = chess::MoveToUci(best);
  }
  report.elapsed_ms = MillisecondsSince(job.start);
  {
    std::lock_guard lock(report_mutex_);
    report_ = report;
  }
  // Not running from before the bestmove on: a GUI that reads it may send setoption at once.
  // Whoever touches the engine's state next joins this thread first, so the line still comes
  // before anything they print.
  search_running_.store(false, std::memory_order_release);
  Emit("bestmove " + text);
}

chess::Move UciEngine::SearchAndChoose(const SearchJob& job, SearchReport& report) {
  if (Status prepared = PrepareTree(job.game); !prepared.ok()) {
    EmitInfoString("cannot build the search: " + prepared.ToString());
    return MoveWithoutSearch(job.game);
  }
  Search& search = *search_;
  report.searched = true;
  report.inherited_visits = search.root().N();
  const std::uint32_t start_visits = search.RootChildVisits();
  const std::uint64_t start_unexpanded = search.stats().unexpanded_full;
  const auto playouts = [&] {
    return static_cast<std::uint64_t>(search.RootChildVisits() - start_visits);
  };
  const auto interval = std::chrono::milliseconds(options_.info_interval_ms);
  Clock::time_point next_info = job.start + interval;
  Clock::time_point next_depth_check = job.start;
  Clock::duration last_batch{0};

  for (;;) {
    const std::uint64_t done = playouts();
    // Even a stop that came at once waits for one batch: the move then comes from a search.
    if (done >= 1 && stop_requested_.load(std::memory_order_acquire)) break;
    if (!job.until_stop && done >= 1) {  // at least one playout, whatever the limits
      if (job.nodes && done >= *job.nodes) break;
      const Clock::duration elapsed = Clock::now() - job.start;
      const double elapsed_s = std::chrono::duration<double>(elapsed).count();
      // Stop one batch early rather than overrun: the next batch would take about as long as
      // the last one.
      if (job.budget_ms && elapsed + last_batch >= std::chrono::milliseconds(*job.budget_ms)) {
        break;
      }
      if (RootSolved(search)) break;
      if (job.from_clock && BestMoveSettled(search, done, elapsed_s, *job.budget_ms)) break;
      if (job.depth && Clock::now() >= next_depth_check) {
        const Clock::time_point measure_start = Clock::now();
        if (MeasureDepth(search, depth_stack_).depth >= *job.depth) break;
        // A full tree (Hash) stops deepening: the depth asked for may never come.
        if (search.stats().unexpanded_full > start_unexpanded) break;
        // The walk is O(tree): keep it to a tenth of the time or less.
        next_depth_check =
            Clock::now() + std::max<Clock::duration>(std::chrono::milliseconds(10),
                                                     10 * (Clock::now() - measure_start));
      }
    }
    if (search.RootChildVisits() >= kMaxRootVisits ||
        (job.until_stop && done >= 1 && RootSolved(search))) {
      // Nothing left to count or to learn; go infinite still answers only after stop.
      if (job.until_stop) WaitForStop();
      break;
    }
    std::uint64_t target = search.RootChildVisits() +
                           static_cast<std::uint64_t>(job.budget_ms == 0 ? 1 : options_.minibatch);
    if (job.nodes) target = std::min<std::uint64_t>(target, start_visits + *job.nodes);
    target = std::min<std::uint64_t>(target, kMaxRootVisits);
    const Clock::time_point batch_start = Clock::now();
    if (Status status = search.Run(*evaluator_.evaluator, static_cast<int>(target)); !status.ok()) {
      EmitInfoString("search stopped by an error: " + status.ToString());
      break;
    }
    last_batch = Clock::now() - batch_start;
    if (Clock::now() >= next_info) {
      EmitInfo(job, start_visits);
      next_info = Clock::now() + interval;
    }
  }
  EmitInfo(job, start_visits);
  report.playouts = playouts();
  const int chosen = ChooseChild(search);
  if (chosen < 0) return MoveWithoutSearch(job.game);
  return games::Chess::UnpackMove(search.root_state(),
                                  search.arena()[search.root().first_child + chosen].move);
}

void UciEngine::EmitInfo(const SearchJob& job, std::uint32_t start_visits) {
  const Search& search = *search_;
  const int chosen = ChooseChild(search);
  if (chosen < 0) return;
  const mcts::NodeArena& arena = search.arena();
  const mcts::Node& root = search.root();
  const std::uint32_t child_index = root.first_child + static_cast<std::uint32_t>(chosen);
  const mcts::Node& child = arena[child_index];
  const chess::Move move = games::Chess::UnpackMove(search.root_state(), child.move);

  const std::int64_t elapsed_ms = MillisecondsSince(job.start);
  const std::uint64_t nodes = search.RootChildVisits() - start_visits;
  const std::uint64_t nps =
      nodes * 1000 / static_cast<std::uint64_t>(std::max<std::int64_t>(elapsed_ms, 1));
  const TreeDepth depth = MeasureDepth(search, depth_stack_);
  const int hashfull = static_cast<int>(std::min<std::uint64_t>(
      1000, std::uint64_t{arena.used()} * 1000 / NodesForHash(options_.hash_mb)));

  // The chosen move's value for us: Q as the search uses it (risk-adjusted when RiskBeta != 0,
  // exact for a decided move), and its win/draw/loss averages.
  double q = 0.0, win = 0.0, draw = 1.0, loss = 0.0;
  if (child.state == mcts::NodeState::kTerminal) {
    q = -games::OutcomeValue(child.outcome);  // the child's outcome is for the side to move there
    win = q > 0 ? 1.0 : 0.0;
    loss = q < 0 ? 1.0 : 0.0;
    draw = q == 0 ? 1.0 : 0.0;
  } else if (child.N() > 0) {
    const std::vector<mcts::ChildStats<chess::Move>> children = search.RootChildren();
    q = children[static_cast<std::size_t>(chosen)].q;
    const double n = static_cast<double>(child.N()) * mcts::kValueScale;
    const double d = static_cast<double>(child.DrawSum());
    const double v = std::clamp(-static_cast<double>(child.ValueSum()), -(n - d), n - d);
    win = (n - d + v) / 2 / n;
    draw = d / n;
    loss = (n - d - v) / 2 / n;
  }
  std::string score = "cp " + std::to_string(QToCentipawns(q));
  if (IsProvenWin(child)) {  // "mate 1" when the move mates; a deeper proof shows as cp
    chess::Game after = job.game;
    after.Play(move);
    if (after.Outcome().reason == chess::EndReason::kCheckmate) score = "mate 1";
  }

  std::string line = "info depth " + std::to_string(depth.depth) + " seldepth " +
                     std::to_string(depth.seldepth) + " time " + std::to_string(elapsed_ms) +
                     " nodes " + std::to_string(nodes) + " nps " + std::to_string(nps) +
                     " hashfull " + std::to_string(hashfull) + " score " + score;
  if (options_.show_wdl) {
    const WdlPermille wdl = ToPermille(win, draw, loss);
    line += " wdl " + std::to_string(wdl.win) + " " + std::to_string(wdl.draw) + " " +
            std::to_string(wdl.loss);
  }
  // The principal variation: the chosen move, then the most visited reply at each ply.
  line += " pv " + chess::MoveToUci(move);
  std::uint32_t index = child_index;
  for (int ply = 1; ply < kMaxPvPlies; ++ply) {
    const mcts::Node& node = arena[index];
    if (node.state != mcts::NodeState::kExpanded) break;
    std::uint32_t next = mcts::kNullNode;
    std::uint32_t most = 0;
    for (std::uint32_t i = 0; i < node.num_children; ++i) {
      const std::uint32_t visits = arena[node.first_child + i].N();
      if (visits > most) {
        most = visits;
        next = node.first_child + i;
      }
    }
    if (next == mcts::kNullNode) break;
    line += ' ';
    line += chess::MoveToUci(games::Chess::UnpackMove(search.root_state(), arena[next].move));
    index = next;
  }
  Emit(line);
}

}  // namespace az::uci
