#pragma once

// az-uci's engine: the UCI protocol over the project's search (core/mcts, the one self-play uses)
// and a chess evaluator (engine_evaluator.h: uniform, or a network behind the NN cache). main.cc
// feeds it stdin; tests feed it scripted lines and read what it prints. docs/chess.md, "Playing
// the model: az-uci", has the options and an example session.
//
// Threads. HandleLine runs on the caller's thread (the reader) and never waits for a search,
// except where the protocol needs the search over first (stop, quit, go, ucinewgame): `go`
// starts the search on a thread of its own and returns, so `isready` (answered `readyok` at
// once, even mid-search), `stop` and `quit` are handled while it runs. The search checks for
// `stop` between batches of leaves (after the first), so it ends within a network call or two.
// Lines reach the sink whole, one at a time, from either thread.
//
// Guarantees: exactly one `bestmove` per `go`, after its last `info`; the move is legal in the
// position searched (checked with core/chess before it is printed), or `0000` when there is
// none (mate, stalemate); with `go infinite` (or `go` with no limit) it comes only after `stop`
// or `quit`; with a single legal move and a limit it comes at once, without a search. Bad input
// is answered with `info string <why>` and never ends the engine. Nothing but protocol lines goes
// to the sink.
//
// The search: PUCT with a batch of leaves in flight (MinibatchSize, virtual loss), no root noise,
// the most visited move played (a move proven to win first, a move proven to lose last); the
// tree is kept between moves and reused when the next position continues the game (subtree reuse,
// as in self-play).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/status.h"
#include "core/chess/game.h"
#include "core/games/chess/chess.h"
#include "core/mcts/search.h"
#include "services/uci/engine_evaluator.h"
#include "services/uci/time_manager.h"
#include "services/uci/uci_commands.h"

namespace az::uci {

// The engine's settings. The command line sets their starting values, which `uci` reports as
// the options' defaults; `setoption` changes them (between searches).
struct EngineOptions {
  std::string model = "uniform";                            // WeightsFile
  int threads = 1;                                          // Threads: LibTorch intra-op threads
  int hash_mb = 256;                                        // Hash: the tree's memory, MiB
  std::uint64_t nn_cache_entries = std::uint64_t{1} << 16;  // NNCacheSize
  int minibatch = 16;                                       // MinibatchSize: leaves in flight
  float c_puct = 1.5f;                                      // CPuct
  float risk_beta = 0.0f;                                   // RiskBeta: < 0 averse, > 0 seeking
  int move_overhead_ms = 100;                               // Move Overhead (time_manager.h)
  bool show_wdl = true;                                     // UCI_ShowWDL
  // Not a UCI option: how often `info` lines come while a search runs (and once at its end).
  int info_interval_ms = 1000;

  // InvalidArgument naming the first setting out of its option's range.
  Status Validate() const;
};

// Ranges of the spin options, shared by the `uci` listing, setoption and the command line.
inline constexpr int kMaxThreads = 256;
inline constexpr int kMinHashMb = 1;
inline constexpr int kMaxHashMb = 65536;
inline constexpr std::uint64_t kMaxNnCacheEntries = evaluator::kMaxCacheSize;
inline constexpr int kMaxMinibatch = 1024;
inline constexpr int kMaxMoveOverheadMs = 10000;

// What the last finished search did (for tests and diagnostics; read it between searches).
struct SearchReport {
  std::uint64_t playouts = 0;          // playouts below the root in this search
  std::uint32_t inherited_visits = 0;  // the root's visits kept from the previous search
  std::int64_t elapsed_ms = 0;         // from `go` to `bestmove`
  bool searched = false;               // false: answered without a search (one move, game over)
};

class UciEngine {
 public:
  // Receives one protocol line, without its newline.
  using LineSink = std::function<void(std::string_view line)>;

  // Loads the evaluator (`factory`, the real LoadChessEvaluator unless a test injects one).
  // InvalidArgument for options out of range; the factory's errors (a missing or wrong model).
  static Result<std::unique_ptr<UciEngine>> Create(const EngineOptions& options, LineSink sink,
                                                   EvaluatorFactory factory = LoadChessEvaluator);
  UciEngine(const UciEngine&) = delete;
  UciEngine& operator=(const UciEngine&) = delete;
  // Stops a search still running (its bestmove is printed) and joins its thread.
  ~UciEngine();

  // Handles one line of input. Returns false after `quit` (the search, if any, stopped and
  // joined), true otherwise. Blocks only as the header comment says: stop / quit / go /
  // ucinewgame wait for a running search to end (one batch); setoption of WeightsFile, Threads
  // or NNCacheSize loads the evaluator again.
  bool HandleLine(std::string_view line);

  // Handles `in` line by line until `quit` or the end of input (which counts as `quit`).
  void Run(std::istream& in);

  // Whether a search is running now.
  bool searching() const { return search_running_.load(std::memory_order_acquire); }
  // The last finished search's report; meaningful when no search runs.
  SearchReport last_report() const;

 private:
  using Clock = std::chrono::steady_clock;
  using Search = mcts::Search<games::Chess>;

  // One `go`, as the search thread gets it.
  struct SearchJob {
    chess::Game game;
    Clock::time_point start;
    std::optional<std::int64_t> budget_ms;
    bool from_clock = false;
    std::optional<std::uint64_t> nodes;
    std::optional<int> depth;
    bool until_stop = false;
  };

  UciEngine(const EngineOptions& options, LineSink sink, EvaluatorFactory factory,
            LoadedEvaluator evaluator);

  void Emit(std::string_view line);
  void EmitInfoString(std::string_view text);

  void HandleUci();
  void HandleSetOption(std::string_view arguments);
  void HandlePosition(std::string_view arguments);
  void HandleGo(std::string_view arguments);
  // Asks a running search to stop and joins its thread (its bestmove has been printed then).
  void StopSearch();
  // Loads the evaluator for `settings`; on failure keeps the current one and says why.
  bool ReloadEvaluator(const EvaluatorSettings& settings);
  EvaluatorSettings CurrentEvaluatorSettings() const;

  // --- On the search thread. ---
  void SearchMain(SearchJob job);
  // Blocks until stop or quit (go infinite must not answer before).
  void WaitForStop();
  // Makes `game` the tree's root: the subtree below its moves when the game continues the
  // tree's, else a fresh tree (built first when options changed).
  Status PrepareTree(const chess::Game& game);
  // Searches within the job's limits; the move to play (always legal in job.game).
  chess::Move SearchAndChoose(const SearchJob& job, SearchReport& report);
  // The evaluator's most probable move in `game`, without a search (the first legal move when
  // the evaluator fails); the null move when there is none.
  chess::Move MoveWithoutSearch(const chess::Game& game);
  // One `info depth ... pv ...` line for the search so far.
  void EmitInfo(const SearchJob& job, std::uint32_t start_visits);

  EngineOptions options_;
  LineSink sink_;
  std::mutex sink_mutex_;
  EvaluatorFactory factory_;
  LoadedEvaluator evaluator_;
  chess::Game position_;  // the last `position`

  // The tree and the game at its root, kept between searches for reuse. search_ is reset when an
  // option it was built with changes (rebuilt at the next go).
  std::optional<Search> search_;
  std::optional<chess::Game> tree_game_;
  std::vector<std::pair<std::uint32_t, int>> depth_stack_;  // scratch of the depth measure

  std::thread search_thread_;
  std::atomic<bool> search_running_{false};
  std::atomic<bool> stop_requested_{false};
  mutable std::mutex report_mutex_;
  SearchReport report_;
};

}  // namespace az::uci
