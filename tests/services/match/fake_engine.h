#pragma once

// A deliberately misbehaving UCI engine, as test input for az-match (the engines it plays against
// are real: az-uci, stockfish). A small Python 3 script, written into a test's own directory and
// made executable; its first argument picks how it misbehaves, its optional second names a log
// file where it appends "start <pid>" when it starts and "< LINE" for every line it reads.
//
//   record      an honest engine for one move: the first move of either side (e2e4 from the
//               start position, e7e5 after any first move of White)
//   illegal     answers every go with e2e5, never a legal move
//   exit        answers the first go like `record`, exits on the second (mid-game)
//   silent      never answers go, and ignores stop
//   after_stop  answers go only once it is told to stop
//   slow        answers go like `record`, but only after sleeping SLOW_SECONDS (argument 3,
//               default 1.5), ignoring stop meanwhile
//   nomove      answers go with a bare "bestmove"
//   no_uciok    reads everything, answers nothing (not even uci)

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace az::match::testing {

inline constexpr const char* kFakeEngineScript = R"PY(#!/usr/bin/env python3
import os
import sys
import time

mode = sys.argv[1]
log = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
slow_seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5


def note(text):
    if log:
        with open(log, "a") as f:
            f.write(text + "\n")


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


note("start %d" % os.getpid())
plies = 0
goes = 0


def first_move():
    # Legal for White at the start, and for Black after any first move of White.
    return "e2e4" if plies == 0 else "e7e5"


while True:
    line = sys.stdin.readline()
    if not line:
        break
    note("< " + line.rstrip("\n"))
    words = line.split()
    if not words or mode == "no_uciok":
        continue
    command = words[0]
    if command == "uci":
        say("id name fake-" + mode)
        say("uciok")
    elif command == "isready":
        say("readyok")
    elif command == "position":
        plies = len(words) - words.index("moves") - 1 if "moves" in words else 0
    elif command == "go":
        goes += 1
        if mode == "record":
            say("info depth 1 score cp 12 nodes 1 pv " + first_move())
            say("bestmove " + first_move())
        elif mode == "illegal":
            say("bestmove e2e5")
        elif mode == "exit":
            if goes >= 2:
                sys.exit(0)
            say("bestmove " + first_move())
        elif mode == "slow":
            time.sleep(slow_seconds)
            say("bestmove " + first_move())
        elif mode == "nomove":
            say("bestmove")
    elif command == "stop":
        if mode == "after_stop":
            say("bestmove " + first_move())
    elif command == "quit":
        break
)PY";

// Writes the script as `dir`/fake_uci.py, executable, and returns its path.
inline std::string WriteFakeEngine(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / "fake_uci.py";
  {
    std::ofstream out(path);
    out << kFakeEngineScript;
  }
  ::chmod(path.c_str(), 0755);
  return path.string();
}

// The lines of the fake's log (empty when it wrote none).
inline std::vector<std::string> ReadLog(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace az::match::testing
