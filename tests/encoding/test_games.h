#pragma once

// Test helpers shared by the encoding and sample suites: seeded random games over a few start
// positions chosen for their special moves (castling, en passant, promotions), with a bias towards
// taking back one's own last move so that repetitions occur, and the colour mirror of a FEN.

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/chess/game.h"
#include "core/chess/movegen.h"
#include "core/chess/position.h"

namespace az::encoding::testing {

// Start positions: the standard one, "kiwipete" (castling both ways, en passant, pins), a
// promotion-heavy one with Black to move, an en-passant endgame, and a position with promotions
// and castling for Black only.
inline const std::vector<std::string>& StartFens() {
  static const std::vector<std::string> fens = {
      std::string(chess::kStartFen),
      "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
      "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
      "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
      "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
  };
  return fens;
}

struct RandomGamesOptions {
  std::uint64_t seed = 1;
  int games = 60;
  int max_plies = 160;
  // With this probability, a side whose last move can be taken back plays it backwards, so that
  // positions repeat (random play alone almost never repeats).
  double take_back_probability = 0.35;
};

// Plays options.games seeded random games, cycling through StartFens(), and calls visit(game) on
// every position of each (the start included, the terminal position included).
template <typename Visit>
void ForEachRandomGamePosition(const RandomGamesOptions& options, Visit&& visit) {
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::vector<std::string>& fens = StartFens();
  for (int g = 0; g < options.games; ++g) {
    Result<chess::Game> created = chess::Game::FromFen(fens[g % fens.size()]);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    chess::Game game = std::move(created).value();
    for (;;) {
      visit(static_cast<const chess::Game&>(game));
      const chess::MoveList moves = game.LegalMoves();
      if (game.ply() >= options.max_plies || game.Outcome(moves.size()).is_terminal()) break;
      chess::Move move = moves[static_cast<int>(rng() % moves.size())];
      if (game.ply() >= 2 && unit(rng) < options.take_back_probability) {
        const chess::Move own = game.moves()[game.ply() - 2];
        const chess::Move back = chess::Move::Normal(own.to(), own.from());
        if (own.kind() == chess::Move::kNormal && moves.contains(back)) move = back;
      }
      game.Play(move);
    }
  }
}

// The same position with colours swapped and the board flipped rank-wise: White's pieces become
// Black's on the mirrored squares, the side to move, castling rights and en-passant square follow.
inline std::string MirrorFen(const std::string& fen) {
  std::istringstream in(fen);
  std::string placement, side, castling, ep, halfmove, fullmove;
  in >> placement >> side >> castling >> ep >> halfmove >> fullmove;
  std::vector<std::string> ranks;
  std::string rank;
  for (char c : placement + "/") {
    if (c == '/') {
      ranks.push_back(rank);
      rank.clear();
    } else {
      rank += std::isupper(static_cast<unsigned char>(c))
                  ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                  : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  std::string mirrored;
  for (auto it = ranks.rbegin(); it != ranks.rend(); ++it) {
    if (!mirrored.empty()) mirrored += '/';
    mirrored += *it;
  }
  std::string rights;
  for (char c : std::string("kqKQ")) {
    if (castling.find(c) != std::string::npos) {
      rights += std::isupper(static_cast<unsigned char>(c))
                    ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                    : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  if (rights.empty()) rights = "-";
  if (ep != "-") ep[1] = static_cast<char>('1' + '8' - ep[1]);
  return mirrored + (side == "w" ? " b " : " w ") + rights + " " + ep + " " + halfmove + " " +
         fullmove;
}

}  // namespace az::encoding::testing
