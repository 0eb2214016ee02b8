#include "core/chess/game.h"

#include <algorithm>

#include "core/chess/movegen.h"
#include "core/chess/uci.h"

namespace az::chess {
namespace {
// Most games end well before this; reserving once keeps Play allocation-free in the common case.
constexpr std::size_t kReservedPlies = 256;
}  // namespace

std::string_view ToString(GameResult result) {
  switch (result) {
    case GameResult::kOngoing: return "ongoing";
    case GameResult::kWhiteWins: return "white wins";
    case GameResult::kBlackWins: return "black wins";
    case GameResult::kDraw: return "draw";
  }
  return "unknown";
}

std::string_view ToString(EndReason reason) {
  switch (reason) {
    case EndReason::kNone: return "none";
    case EndReason::kCheckmate: return "checkmate";
    case EndReason::kStalemate: return "stalemate";
    case EndReason::kInsufficientMaterial: return "insufficient material";
    case EndReason::kThreefoldRepetition: return "threefold repetition";
    case EndReason::kFiftyMoveRule: return "fifty-move rule";
    case EndReason::kMaxLength: return "max length";
  }
  return "unknown";
}

bool HasInsufficientMaterial(const Position& position) {
  if (position.Pieces(kPawn) | position.Pieces(kRook) | position.Pieces(kQueen)) return false;
  const Bitboard knights = position.Pieces(kKnight);
  const Bitboard bishops = position.Pieces(kBishop);
  if (PopCount(knights | bishops) <= 1) return true;  // K v K, K+minor v K
  // Only bishops, all on one square colour: none can ever attack the other colour.
  return knights == 0 && ((bishops & kDarkSquares) == 0 || (bishops & kLightSquares) == 0);
}

Game::Game(GameOptions options) : Game(Position(), options) {}

Game::Game(const Position& start, GameOptions options) : options_(options) {
  AZ_CHECK(options.max_plies >= 0, "GameOptions::max_plies must be >= 0");
  positions_.reserve(kReservedPlies);
  repetitions_.reserve(kReservedPlies);
  moves_.reserve(kReservedPlies);
  positions_.push_back(start);
  repetitions_.push_back(1);
}

Result<Game> Game::FromFen(std::string_view fen, GameOptions options) {
  if (options.max_plies < 0) return InvalidArgument("GameOptions::max_plies must be >= 0");
  AZ_ASSIGN_OR_RETURN(Position start, Position::FromFen(fen));
  return Game(start, options);
}

const Position& Game::PositionAt(int plies_ago) const {
  AZ_CHECK(plies_ago >= 0 && plies_ago <= ply(), "PositionAt out of range");
  return positions_[positions_.size() - 1 - static_cast<std::size_t>(plies_ago)];
}

int Game::RepetitionCount(int plies_ago) const {
  AZ_CHECK(plies_ago >= 0 && plies_ago <= ply(), "RepetitionCount out of range");
  return repetitions_[repetitions_.size() - 1 - static_cast<std::size_t>(plies_ago)];
}

void Game::Play(Move m) {
  const Position& current = positions_.back();
  const Piece mover = current.PieceOn(m.from());
  AZ_CHECK(!m.is_null() && mover != kNoPiece && ColorOf(mover) == current.SideToMove(),
           "Game::Play: the move does not start from a piece of the side to move");
  positions_.push_back(current);
  Position& next = positions_.back();
  next.MakeMove(m);
  moves_.push_back(m);

  // A repetition can only be among positions since the last capture or pawn move, with the same
  // side to move: every second earlier position, no further back than the halfmove clock.
  const int index = static_cast<int>(positions_.size()) - 1;
  const int oldest = std::max(0, index - next.HalfmoveClock());
  int count = 1;
  for (int i = index - 2; i >= oldest; i -= 2) {
    if (positions_[i].Hash() == next.Hash()) {
      count = std::min(255, repetitions_[i] + 1);
      break;
    }
  }
  repetitions_.push_back(static_cast<std::uint8_t>(count));
}

Status Game::PlayUci(std::string_view uci) {
  AZ_ASSIGN_OR_RETURN(Move m, ParseUciMove(position(), uci));
  Play(m);
  return Status::Ok();
}

void Game::Undo() {
  AZ_CHECK(ply() > 0, "Game::Undo with no move played");
  positions_.pop_back();
  repetitions_.pop_back();
  moves_.pop_back();
}

MoveList Game::LegalMoves() const { return chess::LegalMoves(position()); }

GameOutcome Game::Outcome() const { return Outcome(CountLegalMoves(position())); }

GameOutcome Game::Outcome(int legal_move_count) const {
  const Position& pos = position();
  if (legal_move_count == 0) {
    if (pos.InCheck()) {
      return {pos.SideToMove() == kWhite ? GameResult::kBlackWins : GameResult::kWhiteWins,
              EndReason::kCheckmate};
    }
    return {GameResult::kDraw, EndReason::kStalemate};
  }
  if (HasInsufficientMaterial(pos)) return {GameResult::kDraw, EndReason::kInsufficientMaterial};
  if (RepetitionCount() >= 3) return {GameResult::kDraw, EndReason::kThreefoldRepetition};
  if (pos.HalfmoveClock() >= 100) return {GameResult::kDraw, EndReason::kFiftyMoveRule};
  if (options_.max_plies > 0 && ply() >= options_.max_plies) {
    return {GameResult::kDraw, EndReason::kMaxLength};
  }
  return {};
}

}  // namespace az::chess
