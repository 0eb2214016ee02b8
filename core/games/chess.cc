#include "core/games/chess.h"

#include <algorithm>

#include "core/chess/movegen.h"

namespace az::games {

int Chess::LegalMoves(const State& state, Move* out) {
  chess::MoveList moves;
  chess::GenerateLegalMoves(state.position(), moves);
  std::copy(moves.begin(), moves.end(), out);
  return moves.size();
}

GameOutcome Chess::Outcome(const State& state, int num_legal_moves) {
  const chess::GameOutcome outcome = state.Outcome(num_legal_moves);
  switch (outcome.result) {
    case chess::GameResult::kOngoing: return GameOutcome::kOngoing;
    case chess::GameResult::kDraw: return GameOutcome::kDraw;
    case chess::GameResult::kWhiteWins:
      return state.position().SideToMove() == chess::kWhite ? GameOutcome::kWin
                                                            : GameOutcome::kLoss;
    case chess::GameResult::kBlackWins:
      return state.position().SideToMove() == chess::kBlack ? GameOutcome::kWin
                                                            : GameOutcome::kLoss;
  }
  return GameOutcome::kOngoing;
}

}  // namespace az::games
