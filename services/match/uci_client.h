#pragma once

// az-match's side of the UCI protocol: one engine process (child_process.h) driven through a
// match. Start does the handshake (uci ... uciok, the spec's options, isready ... readyok); Go
// sends a position and a go command and waits for bestmove, keeping what the last info lines
// said (score, depth, nodes).
//
// Contracts: every wait has a deadline; a Go that passes its deadline sends `stop` and allows
// `stop_grace` for the bestmove, then returns DeadlineExceeded (the caller forfeits the game and
// restarts the engine). An engine that exits returns Unavailable. Lines that are not the answer
// being waited for (info string, unknown words) are skipped, as the protocol asks.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "services/match/child_process.h"
#include "services/match/engine_spec.h"

namespace az::match {

// The engine's last reported evaluation, from the side to move's view.
struct EngineScore {
  int centipawns = 0;  // for a mate: +-(100000 - plies to mate)
  bool mate = false;
  int mate_moves = 0;  // "score mate N": N (negative when it is being mated)
};

struct MoveAnswer {
  std::string bestmove;  // as sent, not yet checked for legality
  std::optional<EngineScore> score;
  int depth = 0;
  std::int64_t nodes = 0;
  std::chrono::milliseconds elapsed{0};  // from sending go to reading bestmove
};

// Parses one "info ..." line into `answer` (score, depth, nodes); other lines are ignored.
void ReadInfoLine(std::string_view line, MoveAnswer& answer);

class UciEngine {
 public:
  using Clock = ChildProcess::Clock;

  explicit UciEngine(EngineSpec spec) : spec_(std::move(spec)) {}

  // Starts the process and does the handshake within `timeout`. The name is the spec's, else the
  // engine's `id name`, else the program's file name.
  Status Start(std::chrono::milliseconds timeout);
  // ucinewgame and isready ... readyok.
  Status NewGame(std::chrono::milliseconds timeout);
  // `position_command` then `go_command`; waits until `deadline` for the bestmove.
  Result<MoveAnswer> Go(const std::string& position_command, const std::string& go_command,
                        Clock::time_point deadline, std::chrono::milliseconds stop_grace);
  // quit, then the process is ended (killed when it does not exit).
  void Quit();

  bool running() const { return process_.running(); }
  const std::string& name() const { return name_; }
  const EngineSpec& spec() const { return spec_; }

 private:
  Status WaitFor(std::string_view token, Clock::time_point deadline);

  EngineSpec spec_;
  std::string name_;
  ChildProcess process_;
};

}  // namespace az::match
