#include "services/match/chess_game.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <optional>

#include "core/chess/uci.h"

namespace az::match {
namespace {

// "+0.35/12 0.51s", "+M3/20 1.20s", "-M2/9 0.10s": the mover's view, as cutechess writes it.
std::string MoveComment(const MoveAnswer& answer) {
  char text[64];
  const double seconds = answer.elapsed.count() / 1000.0;
  if (!answer.score) {
    std::snprintf(text, sizeof text, "%.2fs", seconds);
  } else if (answer.score->mate) {
    std::snprintf(text, sizeof text, "%sM%d/%d %.2fs", answer.score->mate_moves > 0 ? "+" : "-",
                  std::abs(answer.score->mate_moves), answer.depth, seconds);
  } else {
    std::snprintf(text, sizeof text, "%+.2f/%d %.2fs", answer.score->centipawns / 100.0,
                  answer.depth, seconds);
  }
  return text;
}

// True when each of the last `count` entries satisfies `holds`.
template <typename Predicate>
bool LastAll(const std::deque<std::optional<int>>& scores, int count, Predicate holds) {
  if (count <= 0 || static_cast<int>(scores.size()) < count) return false;
  for (auto it = scores.end() - count; it != scores.end(); ++it) {
    if (!*it || !holds(**it)) return false;
  }
  return true;
}

}  // namespace

std::string ResultText(int white_score) {
  return white_score > 0 ? "1-0" : white_score < 0 ? "0-1" : "1/2-1/2";
}

std::string PositionCommand(const chess::Game& game) {
  const std::string start = game.PositionAt(game.ply()).ToFen();
  std::string command = "position ";
  if (start == chess::kStartFen) {
    command += "startpos";
  } else {
    command += "fen ";
    command += start;
  }
  if (!game.moves().empty()) {
    command += " moves";
    for (const chess::Move move : game.moves()) command += " " + chess::MoveToUci(move);
  }
  return command;
}

ChessGameRecord PlayChessGame(UciEngine& white, UciEngine& black, const chess::Game& opening,
                              const ChessGameOptions& options) {
  using Clock = UciEngine::Clock;
  using std::chrono::milliseconds;
  ChessGameRecord record;
  chess::Game game = opening;
  const std::string start = game.PositionAt(game.ply()).ToFen();
  if (start != chess::kStartFen) record.start_fen = start;
  record.moves = game.moves();
  record.comments.assign(record.moves.size(), "");
  record.opening_plies = game.ply();

  const auto forfeit = [&](bool white_lost, std::string why) {
    record.white_score = white_lost ? -1 : 1;
    record.termination = std::move(why);
    (white_lost ? record.white_failed : record.black_failed) = true;
    return record;
  };
  // Both engines are told a new game is starting; one that cannot answer forfeits.
  if (Status s = white.NewGame(options.ready_timeout); !s.ok()) {
    return forfeit(true, "white not ready: " + s.message());
  }
  if (Status s = black.NewGame(options.ready_timeout); !s.ok()) {
    return forfeit(false, "black not ready: " + s.message());
  }

  const EngineSpec* specs[2] = {&white.spec(), &black.spec()};
  std::int64_t clock_ms[2] = {specs[0]->clock_base_ms, specs[1]->clock_base_ms};
  std::deque<std::optional<int>> scores[2];
  const Adjudication& adjudication = options.adjudication;
  for (int played = 0;; ++played) {
    const chess::GameOutcome outcome = game.Outcome();
    if (outcome.is_terminal()) {
      record.white_score = outcome.result == chess::GameResult::kWhiteWins   ? 1
                           : outcome.result == chess::GameResult::kBlackWins ? -1
                                                                             : 0;
      record.termination = std::string(chess::ToString(outcome.reason));
      return record;
    }
    if (adjudication.max_plies > 0 && played >= adjudication.max_plies) {
      record.white_score = 0;
      record.termination = "adjudication: maximum length";
      return record;
    }
    const int side = game.position().SideToMove() == chess::kWhite ? 0 : 1;
    UciEngine& mover = side == 0 ? white : black;
    const EngineSpec& spec = *specs[side];
    // An opponent without a clock is shown the mover's own time, not none.
    const int other = 1 - side;
    const std::int64_t other_ms = specs[other]->has_clock() ? clock_ms[other] : clock_ms[side];
    const std::int64_t other_inc =
        specs[other]->has_clock() ? specs[other]->clock_increment_ms : spec.clock_increment_ms;
    const std::string go =
        side == 0 ? GoCommand(spec, clock_ms[0], other_ms, spec.clock_increment_ms, other_inc)
                  : GoCommand(spec, other_ms, clock_ms[1], other_inc, spec.clock_increment_ms);
    milliseconds allowed = options.move_timeout;
    if (spec.has_clock()) {
      allowed = milliseconds(std::max<std::int64_t>(clock_ms[side], 0)) + options.time_margin;
    } else if (spec.movetime_ms > 0) {
      allowed = milliseconds(spec.movetime_ms) + options.time_margin;
    }
    Result<MoveAnswer> answer =
        mover.Go(PositionCommand(game), go, Clock::now() + allowed, options.stop_grace);
    if (!answer.ok()) {
      const bool late = answer.status().code() == StatusCode::kDeadlineExceeded;
      return forfeit(side == 0,
                     late ? "time forfeit" : "engine failed: " + answer.status().message());
    }
    Result<chess::Move> move = chess::ParseUciMove(game.position(), answer->bestmove);
    if (!move.ok()) return forfeit(side == 0, "illegal move " + answer->bestmove);
    if (spec.has_clock()) clock_ms[side] += spec.clock_increment_ms - answer->elapsed.count();
    game.Play(*move);
    record.moves.push_back(*move);
    record.comments.push_back(MoveComment(*answer));

    scores[side].push_back(answer->score ? std::optional<int>(answer->score->centipawns)
                                         : std::nullopt);
    const std::size_t keep =
        static_cast<std::size_t>(std::max({adjudication.resign_moves, adjudication.draw_moves, 1}));
    if (scores[side].size() > keep) scores[side].pop_front();
    if (LastAll(scores[side], adjudication.resign_moves,
                [&](int cp) { return cp <= -adjudication.resign_score; })) {
      record.white_score = side == 0 ? -1 : 1;
      record.termination = "adjudication: resignation";
      return record;
    }
    const auto level = [&](int cp) { return std::abs(cp) <= adjudication.draw_score; };
    if (game.position().FullmoveNumber() > adjudication.draw_after_move &&
        LastAll(scores[0], adjudication.draw_moves, level) &&
        LastAll(scores[1], adjudication.draw_moves, level)) {
      record.white_score = 0;
      record.termination = "adjudication: draw";
      return record;
    }
  }
}

}  // namespace az::match
