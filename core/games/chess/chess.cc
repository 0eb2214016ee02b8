#include "core/games/chess/chess.h"

#include <algorithm>

#include "core/chess/movegen.h"
#include "core/chess/uci.h"
#include "core/games/text.h"
#include "core/sample/sample_builder.h"

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

int Chess::MaterialBalance(const State& state) {
  static constexpr int kValues[] = {1, 3, 3, 5, 9};
  const chess::Position& position = state.position();
  const chess::Color us = position.SideToMove();
  const chess::Color them = us == chess::kWhite ? chess::kBlack : chess::kWhite;
  int balance = 0;
  for (int type = chess::kPawn; type <= chess::kQueen; ++type) {
    const auto piece = static_cast<chess::PieceType>(type);
    balance += kValues[type] * (chess::PopCount(position.Pieces(us, piece)) -
                                chess::PopCount(position.Pieces(them, piece)));
  }
  return balance;
}

GameOutcome Chess::TreeOutcome(const State& state, int num_legal_moves) {
  const GameOutcome outcome = Outcome(state, num_legal_moves);
  if (outcome == GameOutcome::kOngoing && state.RepetitionCount() >= 2) return GameOutcome::kDraw;
  return outcome;
}

Result<sample::ChessSample> Chess::MakeSample(const State& state, const SearchSummary<Move>& search,
                                              Provenance provenance) {
  thread_local std::vector<sample::MoveWeight> moves;
  moves.clear();
  for (const MoveWeight<Move>& entry : search.moves) moves.push_back({entry.move, entry.weight});
  const sample::SearchSummary summary{moves, search.root_wdl, search.soft_value};
  return sample::MakeSample(state, summary,
                            {provenance.game_id, provenance.model_version, provenance.off_policy});
}

void Chess::SetOutcome(std::span<Sample> samples, const State& final_state, int final_value) {
  chess::GameResult result = chess::GameResult::kDraw;
  if (final_value != 0) {
    const bool white_to_move = final_state.position().SideToMove() == chess::kWhite;
    const bool white_won = (final_value > 0) == white_to_move;
    result = white_won ? chess::GameResult::kWhiteWins : chess::GameResult::kBlackWins;
  }
  sample::SetOutcome(samples, result);
}

Status Chess::ValidateSample(const Sample& s) {
  AZ_RETURN_IF_ERROR(sample::ValidateSample(s));
  return sample::CheckPolicyIsLegal(s);
}

void Chess::AppendPolicy(const Sample& s, std::vector<PolicyTarget>& out) {
  for (const sample::PolicyEntry& e : sample::Policy(s)) {
    if (e.probability > 0) out.push_back({e.index, sample::Probability(e)});
  }
}

Result<chess::Game> Chess::ParsePosition(std::string_view text) {
  text = TrimText(text);
  std::string_view moves;
  if (const std::size_t at = text.find(" moves"); at != std::string_view::npos) {
    moves = TrimText(text.substr(at + 6));
    text = TrimText(text.substr(0, at));
  } else if (text.ends_with("moves")) {
    text = TrimText(text.substr(0, text.size() - 5));
  }
  chess::Game game;
  if (text != "startpos") {
    if (text.starts_with("fen ")) text = TrimText(text.substr(4));
    AZ_ASSIGN_OR_RETURN(game, chess::Game::FromFen(text));
  }
  while (!moves.empty()) {
    const std::size_t end = moves.find(' ');
    const std::string_view uci = moves.substr(0, end);
    if (Status played = game.PlayUci(uci); !played.ok()) {
      return played.WithContext("move " + std::string(uci) + " after ply " +
                                std::to_string(game.ply()));
    }
    moves = end == std::string_view::npos ? std::string_view() : TrimText(moves.substr(end));
  }
  return game;
}

Result<chess::Move> Chess::ParseMove(const State& state, std::string_view text) {
  return chess::ParseUciMove(state.position(), TrimText(text));
}

std::string Chess::MoveText(const State&, Move move) { return chess::MoveToUci(move); }

std::string Chess::PositionText(const State& state) { return state.position().ToFen(); }

}  // namespace az::games
