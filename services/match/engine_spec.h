#pragma once

// What az-match needs to know about one UCI engine, parsed from its --engine text: a list of
// key=value words, as cutechess-cli's -engine takes them. Words are separated by spaces; single
// or double quotes keep spaces inside one ("option.Skill Level=0", cmd='az-uci --model m.azw').
//
//   name=TEXT          the engine's name in results and PGN (default: its `id name`)
//   cmd=COMMAND        the program and its arguments (split into words the same way; no shell)
//   dir=PATH           its working directory
//   option.NAME=VALUE  a UCI option set after the handshake (setoption name NAME value VALUE)
//   nodes=N            go nodes N
//   movetime=MS        go movetime MS
//   depth=D            go depth D
//   tc=BASE[+INC]      a clock: BASE seconds for the game, INC seconds added after each move
//                      (go wtime/btime/winc/binc)
//
// An engine needs cmd and at least one limit. `--each` words apply to both engines, before their
// own (an engine's own word wins).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/status.h"

namespace az::match {

struct EngineSpec {
  std::string name;
  std::vector<std::string> argv;
  std::string working_dir;
  std::vector<std::pair<std::string, std::string>> options;
  std::int64_t nodes = 0;
  std::int64_t movetime_ms = 0;
  int depth = 0;
  std::int64_t clock_base_ms = 0;  // 0: no clock
  std::int64_t clock_increment_ms = 0;

  bool has_clock() const { return clock_base_ms > 0; }
};

// Splits on spaces outside quotes, removing the quotes. InvalidArgument for an unclosed quote.
Result<std::vector<std::string>> SplitWords(std::string_view text);

// Applies the words of `text` to `spec` (an --each text first, then the engine's own). Unknown
// keys, bad numbers and a word without '=' are InvalidArgument naming the word.
Status ApplyEngineWords(std::string_view text, EngineSpec& spec);

// InvalidArgument when the spec has no cmd or no limit.
Status CheckEngineSpec(const EngineSpec& spec);

// The spec's limits as a UCI go command, given the clocks when it has one: "go nodes 800",
// "go wtime 9500 btime 10000 winc 100 binc 100".
std::string GoCommand(const EngineSpec& spec, std::int64_t white_ms, std::int64_t black_ms,
                      std::int64_t white_inc_ms, std::int64_t black_inc_ms);

// "10+0.1", "nodes 800", "movetime 100 ms", "depth 8": for the PGN's TimeControl and logs.
std::string DescribeLimits(const EngineSpec& spec);

}  // namespace az::match
