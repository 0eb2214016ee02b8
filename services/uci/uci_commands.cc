#include "services/uci/uci_commands.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace az::uci {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsBlank(text[i])) ++i;
    const std::size_t begin = i;
    while (i < text.size() && !IsBlank(text[i])) ++i;
    if (i > begin) words.push_back(text.substr(begin, i - begin));
  }
  return words;
}

std::optional<std::int64_t> ParseInteger(std::string_view word) {
  std::int64_t value = 0;
  if (!word.empty() && word.front() == '+') word.remove_prefix(1);
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

bool IsGoKeyword(std::string_view word) {
  static constexpr std::string_view kKeywords[] = {
      "searchmoves", "ponder", "wtime", "btime", "winc",     "binc",
      "movestogo",   "depth",  "nodes", "mate",  "movetime", "infinite"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), word) != std::end(kKeywords);
}

}  // namespace

std::pair<std::string_view, std::string_view> SplitCommand(std::string_view line) {
  line = Trim(line);
  std::size_t end = 0;
  while (end < line.size() && !IsBlank(line[end])) ++end;
  return {line.substr(0, end), Trim(line.substr(end))};
}

GoLimits ParseGo(std::string_view arguments) {
  GoLimits limits;
  const std::vector<std::string_view> words = Words(arguments);
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view key = words[i];
    if (key == "infinite") {
      limits.infinite = true;
      continue;
    }
    if (key == "ponder") {
      limits.warnings.push_back("go ponder is not supported: searching as if it were our move");
      continue;
    }
    if (key == "searchmoves") {
      while (i + 1 < words.size() && !IsGoKeyword(words[i + 1])) ++i;
      limits.warnings.push_back("go searchmoves is not supported: every move is searched");
      continue;
    }
    if (!IsGoKeyword(key)) {
      limits.warnings.push_back("unknown go parameter '" + std::string(key) + "' ignored");
      continue;
    }
    // Every other keyword takes one integer.
    const std::optional<std::int64_t> value =
        i + 1 < words.size() ? ParseInteger(words[i + 1]) : std::nullopt;
    if (!value) {
      // A word that is not a keyword was meant as the value and goes with it; a keyword is read
      // as one ("go nodes movetime 100").
      const bool bad_value = i + 1 < words.size() && !IsGoKeyword(words[i + 1]);
      limits.warnings.push_back(
          "go " + std::string(key) + " needs an integer" +
          (bad_value ? ", got '" + std::string(words[i + 1]) + "'" : std::string()) + ": ignored");
      if (bad_value) ++i;
      continue;
    }
    ++i;
    const std::int64_t time = std::max<std::int64_t>(*value, 0);
    constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
    if (key == "wtime") {
      limits.white_time_ms = time;
    } else if (key == "btime") {
      limits.black_time_ms = time;
    } else if (key == "winc") {
      limits.white_increment_ms = time;
    } else if (key == "binc") {
      limits.black_increment_ms = time;
    } else if (key == "movestogo") {
      limits.moves_to_go = static_cast<int>(std::clamp<std::int64_t>(*value, 0, kIntMax));
    } else if (key == "movetime") {
      limits.move_time_ms = time;
    } else if (key == "nodes") {
      limits.nodes = static_cast<std::uint64_t>(std::max<std::int64_t>(*value, 1));
    } else if (key == "depth") {
      limits.depth = static_cast<int>(std::clamp<std::int64_t>(*value, 1, kIntMax));
    } else if (key == "mate") {
      limits.warnings.push_back("go mate is not supported: searching with the other limits");
    }
  }
  return limits;
}

Result<OptionSetting> ParseSetOption(std::string_view arguments) {
  arguments = Trim(arguments);
  if (!arguments.starts_with("name") || (arguments.size() > 4 && !IsBlank(arguments[4]))) {
    return InvalidArgument("setoption needs 'name <option>'");
  }
  std::string_view rest = Trim(arguments.substr(4));
  // The name runs up to the word "value" (names may hold spaces: "Move Overhead").
  std::string_view name = rest;
  std::string_view value;
  const std::vector<std::string_view> words = Words(rest);
  for (std::string_view word : words) {
    if (word != "value") continue;
    const std::size_t at = static_cast<std::size_t>(word.data() - rest.data());
    name = Trim(rest.substr(0, at));
    value = Trim(rest.substr(at + 5));
    break;
  }
  if (name.empty()) return InvalidArgument("setoption needs an option name after 'name'");
  return OptionSetting{std::string(name), std::string(value)};
}

PositionCommand ParsePosition(std::string_view arguments) {
  PositionCommand command;
  arguments = Trim(arguments);
  std::string_view moves;
  bool has_moves = false;
  const std::vector<std::string_view> words = Words(arguments);
  for (std::string_view word : words) {
    if (word != "moves") continue;
    const std::size_t at = static_cast<std::size_t>(word.data() - arguments.data());
    moves = Trim(arguments.substr(at + 5));
    arguments = Trim(arguments.substr(0, at));
    has_moves = true;
    break;
  }
  const auto [kind, rest] = SplitCommand(arguments);
  chess::Game game;
  if (kind == "startpos") {
    if (!rest.empty()) {
      command.error = "unexpected '" + std::string(rest) + "' after startpos";
      return command;
    }
  } else if (kind == "fen") {
    Result<chess::Game> from_fen = chess::Game::FromFen(rest);
    if (!from_fen.ok()) {
      command.error = "bad FEN '" + std::string(rest) + "': " + from_fen.status().message();
      return command;
    }
    game = std::move(*from_fen);
  } else {
    command.error = "position needs 'startpos' or 'fen <FEN>'";
    return command;
  }
  if (has_moves) {
    for (std::string_view move : Words(moves)) {
      if (Status played = game.PlayUci(move); !played.ok()) {
        command.error = "move " + std::string(move) + " after ply " + std::to_string(game.ply()) +
                        " is not legal (" + played.message() + "): the moves before it are kept";
        break;
      }
    }
  }
  command.game = std::move(game);
  return command;
}

int QToCentipawns(double q) {
  if (!std::isfinite(q)) q = 0.0;
  q = std::clamp(q, -1.0, 1.0);
  return static_cast<int>(std::lround(90.0 * std::tan(1.5637541897 * q)));
}

WdlPermille ToPermille(double win, double draw, double loss) {
  const auto clean = [](double x) { return std::isfinite(x) ? std::clamp(x, 0.0, 1.0) : 0.0; };
  win = clean(win);
  draw = clean(draw);
  loss = clean(loss);
  const double sum = win + draw + loss;
  if (!(sum > 0.0)) return {};
  WdlPermille permille;
  permille.win = static_cast<int>(std::lround(1000.0 * win / sum));
  permille.loss = std::min(static_cast<int>(std::lround(1000.0 * loss / sum)), 1000 - permille.win);
  permille.draw = 1000 - permille.win - permille.loss;
  return permille;
}

}  // namespace az::uci
