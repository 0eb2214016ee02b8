// az-match: a match between two players, with the score, Elo and its error bars, and optionally
// an SPRT (docs/match.md).
//
// Chess between UCI engines (child processes: az-uci, Debian's stockfish, any other):
//   az-match --engine "name=az cmd='az-uci --model m.azw'"
//            --engine "name=sf cmd=stockfish 'option.Skill Level=0'" --each "nodes=800"
//            --openings deploy/openings/chess.txt --games 40 --pgn games.pgn
// Any registered game between weights files and baselines, in process (az-arena's players):
//   az-match --game connect4 --a RUN/models/model-40.azw --b onestep --games 100
//
// Every move is checked by the project's own rules; an engine that sends an illegal move, crashes
// or runs out of time loses the game and is restarted. Progress (one line a game) goes to stderr;
// the result (text, or --json) to stdout. Exit 0 when the match was played, 2 for bad input (flags,
// a book, a model or an engine that does not start), 1 when a game could not be played (a network
// failing).
//
// Installed also as az-arena (the tool this one replaced): called by that name, the game defaults
// to connect4 and the per-game lines are off, as az-arena's were; its flags all work here.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "core/base/log.h"
#include "core/games/chess/chess.h"
#include "core/games/registry.h"
#include "core/mcts/random.h"
#include "services/arena/match.h"
#include "services/arena/players.h"
#include "services/common/game_kind.h"
#include "services/match/chess_game.h"
#include "services/match/match_loop.h"
#include "services/match/pgn.h"
#include "services/selfplay/driver/openings.h"

namespace {

using az::match::MatchReport;

constexpr int kExitBadInput = 2;
constexpr int kExitFailed = 1;

struct Args {
  std::string game = "chess";
  std::vector<std::string> engines;
  std::string each;
  std::string a_spec;
  std::string b_spec = "onestep";
  az::arena::PlayerOptions player;
  std::string openings;
  int opening_plies = -1;  // -1: 2 in process (as az-arena), 0 between UCI engines
  int games = 100;
  std::uint64_t seed = 1;
  std::string sprt;
  std::string pgn;
  az::match::ChessGameOptions chess;
  int time_margin_ms = 100;
  int move_timeout_s = 120;
  bool json = false;
  bool quiet = false;
};

// The --openings book as G's states (empty without one).
template <az::games::GameDefinition G>
az::Result<std::vector<typename G::State>> LoadBook(const std::string& path) {
  if (path.empty()) return std::vector<typename G::State>();
  AZ_ASSIGN_OR_RETURN(az::selfplay::OpeningBook book, az::selfplay::ReadOpeningBook(path));
  AZ_ASSIGN_OR_RETURN(std::vector<typename G::State> states,
                      az::selfplay::OpeningPositions<G>(book));
  if (states.empty()) return az::InvalidArgument(path + ": no positions");
  return states;
}

void PrintReport(const MatchReport& report, bool json) {
  if (json) {
    std::cout << az::match::MatchReportToJson(report).dump() << "\n";
  } else {
    std::cout << az::match::MatchReportToText(report) << "\n";
  }
}

void LogGame(const MatchReport& report, const az::match::GameSummary& summary, int plies) {
  const az::match::Tally& t = report.tally;
  AZ_LOG(kInfo) << "game " << t.games() << "/" << report.games_planned << ": "
                << (summary.a_score == 0   ? std::string("draw")
                    : report.a == report.b ? (summary.a_score > 0 ? "A won" : "B won")
                                           : (summary.a_score > 0 ? report.a : report.b) + " won")
                << (summary.termination.empty() ? "" : " (" + summary.termination + ")")
                << (plies > 0 ? ", " + std::to_string(plies) + " plies" : "") << "; " << report.a
                << " +" << t.wins << " =" << t.draws << " -" << t.losses << ", "
                << az::match::FormatEstimate(report.estimate)
                << (report.sprt ? "; " + az::match::FormatSprt(*report.sprt, *report.sprt_config)
                                : "");
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y.%m.%d", &tm);
  return text;
}

int RunUciMatch(const Args& args, const std::optional<az::match::SprtConfig>& sprt) {
  using az::games::Chess;
  if (args.engines.size() != 2) {
    std::cerr << "az-match: give --engine twice (or --a and --b for players in process)\n";
    return kExitBadInput;
  }
  std::vector<std::unique_ptr<az::match::UciEngine>> engines;
  for (const std::string& text : args.engines) {
    az::match::EngineSpec spec;
    az::Status status = az::match::ApplyEngineWords(args.each, spec);
    if (status.ok()) status = az::match::ApplyEngineWords(text, spec);
    if (status.ok()) status = az::match::CheckEngineSpec(spec);
    if (!status.ok()) {
      std::cerr << "az-match: --engine " << text << ": " << status.message() << "\n";
      return kExitBadInput;
    }
    engines.push_back(std::make_unique<az::match::UciEngine>(spec));
    status = engines.back()->Start(args.chess.ready_timeout);
    if (!status.ok()) {
      std::cerr << "az-match: " << status.ToString() << "\n";
      return kExitBadInput;
    }
    AZ_LOG(kInfo) << "engine " << engines.size() << ": " << engines.back()->name() << " ("
                  << az::match::DescribeLimits(spec) << ")";
  }
  if (engines[0]->name() == engines[1]->name()) {
    std::cerr << "az-match: both engines are called " << engines[0]->name()
              << ": tell them apart with name=\n";
    return kExitBadInput;
  }
  az::Result<std::vector<Chess::State>> book = LoadBook<Chess>(args.openings);
  if (!book.ok()) {
    std::cerr << "az-match: --openings: " << book.status().ToString() << "\n";
    return kExitBadInput;
  }
  std::ofstream pgn;
  if (!args.pgn.empty()) {
    pgn.open(args.pgn, std::ios::app);
    if (!pgn) {
      std::cerr << "az-match: cannot write --pgn " << args.pgn << "\n";
      return kExitBadInput;
    }
  }
  az::match::MatchSettings settings{
      .a = engines[0]->name(), .b = engines[1]->name(), .games = args.games, .sprt = sprt};
  const std::string date = Today();
  int last_plies = 0;
  const az::arena::PairOpenings<Chess> openings(*book, std::max(args.opening_plies, 0), args.seed,
                                                0);
  const auto play = [&](int game, bool a_first) -> az::Result<az::match::GameSummary> {
    az::match::UciEngine& white = *engines[a_first ? 0 : 1];
    az::match::UciEngine& black = *engines[a_first ? 1 : 0];
    const az::chess::Game opening = openings.ForPair(game / 2);
    az::match::ChessGameRecord record = az::match::PlayChessGame(white, black, opening, args.chess);
    last_plies = static_cast<int>(record.moves.size()) - record.opening_plies;
    if (pgn.is_open()) {
      az::match::PgnGame out;
      out.event = "az-match";
      out.site = "az-match";
      out.date = date;
      out.round = std::to_string(game + 1);
      out.white = white.name();
      out.black = black.name();
      out.result = az::match::ResultText(record.white_score);
      out.start_fen = record.start_fen;
      out.termination = record.termination;
      out.moves = record.moves;
      out.comments = record.comments;
      pgn << az::match::FormatPgn(out) << std::flush;
    }
    // An engine that failed is started afresh for the next game.
    for (const auto& [engine, failed] :
         {std::pair{&white, record.white_failed}, std::pair{&black, record.black_failed}}) {
      if (!failed) continue;
      AZ_LOG(kWarning) << engine->name() << " lost by " << record.termination << "; restarting it";
      engine->Quit();
      AZ_RETURN_IF_ERROR(engine->Start(args.chess.ready_timeout));
    }
    return az::match::GameSummary{.a_score = a_first ? record.white_score : -record.white_score,
                                  .termination = record.termination};
  };
  az::Result<MatchReport> report =
      az::match::RunMatch(settings, play, [&](const MatchReport& r, const auto& summary) {
        if (!args.quiet) LogGame(r, summary, last_plies);
      });
  for (auto& engine : engines) engine->Quit();
  if (!report.ok()) {
    std::cerr << "az-match: " << report.status().ToString() << "\n";
    return kExitFailed;
  }
  PrintReport(*report, args.json);
  return 0;
}

template <az::games::GameDefinition G>
int RunInProcessMatch(const Args& args, const std::optional<az::match::SprtConfig>& sprt) {
  az::Result<std::vector<typename G::State>> book = LoadBook<G>(args.openings);
  if (!book.ok()) {
    std::cerr << "az-match: --openings: " << book.status().ToString() << "\n";
    return kExitBadInput;
  }
  auto a = az::arena::MakePlayer<G>(args.a_spec, args.player);
  if (!a.ok()) {
    std::cerr << "az-match: player A: " << a.status().ToString() << "\n";
    return kExitBadInput;
  }
  auto b = az::arena::MakePlayer<G>(args.b_spec, args.player);
  if (!b.ok()) {
    std::cerr << "az-match: player B: " << b.status().ToString() << "\n";
    return kExitBadInput;
  }
  const az::arena::MatchOptions options{
      .games = args.games,
      .opening_plies = args.opening_plies < 0 ? 2 : args.opening_plies,
      .seed = args.seed,
      .max_plies = args.chess.adjudication.max_plies,
      .sprt = sprt};
  az::Result<MatchReport> report = az::arena::PlayMatch<G>(
      **a, **b, options, *book, [&](const MatchReport& r, const az::match::GameSummary& summary) {
        if (!args.quiet) LogGame(r, summary, 0);
      });
  if (!report.ok()) {
    std::cerr << "az-match: " << report.status().ToString() << "\n";
    return kExitFailed;
  }
  PrintReport(*report, args.json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool as_arena = std::filesystem::path(argv[0]).filename() == "az-arena";
  az::SetLogComponent(as_arena ? "az-arena" : "az-match");
  CLI::App app{
      "az-match: a match between two chess UCI engines, or two players of any game, "
      "with Elo and its error bars"};
  Args args;
  if (as_arena) {
    args.game = "connect4";
    args.quiet = true;
  }
  app.add_option("--engine", args.engines,
                 "a UCI engine, given twice: key=value words: name=, cmd=, dir=, option.NAME=, "
                 "nodes=, movetime= (ms), depth=, tc=BASE[+INC] (seconds)");
  app.add_option("--each", args.each, "words that apply to both engines (before their own)");
  app.add_option("--game", args.game, "the game: " + az::service::GameKindChoices())
      ->check(CLI::IsMember(az::service::GameKindNames()))
      ->capture_default_str();
  app.add_option("--a", args.a_spec, "player A in process: a weights file, random or onestep");
  app.add_option("--b", args.b_spec, "player B in process: a weights file, random or onestep")
      ->capture_default_str();
  app.add_option("--simulations", args.player.simulations,
                 "in process: MCTS playouts per move of a network player; 0: its raw policy")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--threads", args.player.threads, "in process: LibTorch intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--games", args.games, "games (an even number: each opening twice)")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  app.add_option("--openings,--opening-book", args.openings,
                 "start positions, one a line in the game's position text (chess: FEN or "
                 "startpos moves ...), one per pair of games in a seeded order");
  app.add_option("--opening-plies", args.opening_plies,
                 "random moves (never ending the game) after the book position; -1: 2 for "
                 "players in process, 0 between UCI engines")
      ->check(CLI::Range(-1, 64))
      ->capture_default_str();
  app.add_option("--seed", args.seed,
                 "the openings' order and random plies, the baselines' choices")
      ->capture_default_str();
  app.add_option("--sprt", args.sprt,
                 "stop once an SPRT decides: elo0=0,elo1=5,alpha=0.05,beta=0.05 (any of them)");
  app.add_option("--pgn", args.pgn, "chess with --engine: append every game to this PGN file");
  app.add_option("--max-plies", args.chess.adjudication.max_plies,
                 "a game longer than this (after its opening) is a draw; 0: no limit (in "
                 "process: the game's default, chess 512)")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("--resign-moves", args.chess.adjudication.resign_moves,
                 "--engine: adjudicate a loss when an engine's score was at or below "
                 "-resign-score on this many of its moves in a row; 0: off")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--resign-score", args.chess.adjudication.resign_score, "centipawns")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--draw-moves", args.chess.adjudication.draw_moves,
                 "--engine: adjudicate a draw when both engines' scores were within "
                 "+-draw-score on this many of their moves in a row; 0: off")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--draw-score", args.chess.adjudication.draw_score, "centipawns")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--draw-after-move", args.chess.adjudication.draw_after_move,
                 "no draw adjudication before this full move")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--time-margin", args.time_margin_ms,
                 "milliseconds an engine may overrun its clock or movetime before it forfeits")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  app.add_option("--move-timeout", args.move_timeout_s,
                 "seconds a move with only nodes= or depth= may take before the engine forfeits")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_flag("--json", args.json, "print the result as one JSON object");
  app.add_flag("--quiet,!--progress", args.quiet, "no line on stderr after each game");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "az-match: " << e.what() << "\n";
    return kExitBadInput;
  }
  args.chess.time_margin = std::chrono::milliseconds(args.time_margin_ms);
  args.chess.move_timeout = std::chrono::seconds(args.move_timeout_s);
  std::optional<az::match::SprtConfig> sprt;
  if (!args.sprt.empty()) {
    az::Result<az::match::SprtConfig> parsed = az::match::ParseSprt(args.sprt);
    if (!parsed.ok()) {
      std::cerr << "az-match: --sprt: " << parsed.status().message() << "\n";
      return kExitBadInput;
    }
    sprt = *parsed;
  }
  if (!args.engines.empty()) {
    if (args.game != "chess" || !args.a_spec.empty()) {
      std::cerr << "az-match: --engine is for chess UCI engines; use --a and --b for players in "
                   "process\n";
      return kExitBadInput;
    }
    return RunUciMatch(args, sprt);
  }
  if (args.a_spec.empty()) {
    std::cerr << "az-match: give two --engine, or --a (and --b)\n";
    return kExitBadInput;
  }
  az::Result<const az::games::GameInfo*> info = az::games::FindGame(args.game);
  if (!info.ok()) {
    std::cerr << "az-match: " << info.status().ToString() << "\n";
    return kExitBadInput;
  }
  return az::games::VisitGame(
      (*info)->id, [&]<az::games::GameDefinition G>() { return RunInProcessMatch<G>(args, sprt); });
}
