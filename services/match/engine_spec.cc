#include "services/match/engine_spec.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace az::match {
namespace {

bool ParseInt(std::string_view text, std::int64_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// Seconds as text ("10", "0.5") to milliseconds.
bool ParseSeconds(std::string_view text, std::int64_t& ms) {
  if (text.empty()) return false;
  std::string copy(text);
  char* end = nullptr;
  const double seconds = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(seconds) || seconds < 0) return false;
  ms = static_cast<std::int64_t>(std::llround(seconds * 1000.0));
  return true;
}

}  // namespace

Result<std::vector<std::string>> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (const char c : text) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return InvalidArgument("unclosed quote in: " + std::string(text));
  if (in_word) words.push_back(std::move(word));
  return words;
}

Status ApplyEngineWords(std::string_view text, EngineSpec& spec) {
  AZ_ASSIGN_OR_RETURN(std::vector<std::string> words, SplitWords(text));
  for (const std::string& word : words) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("'" + word + "' is not key=value");
    }
    const std::string key = word.substr(0, eq);
    const std::string value = word.substr(eq + 1);
    const auto bad = [&] { return InvalidArgument("bad value in '" + word + "'"); };
    std::int64_t number = 0;
    if (key == "name") {
      spec.name = value;
    } else if (key == "cmd") {
      AZ_ASSIGN_OR_RETURN(spec.argv, SplitWords(value));
      if (spec.argv.empty()) return bad();
    } else if (key == "dir") {
      spec.working_dir = value;
    } else if (key.starts_with("option.") && key.size() > 7) {
      const std::string option = key.substr(7);
      std::erase_if(spec.options, [&](const auto& o) { return o.first == option; });
      spec.options.emplace_back(option, value);
    } else if (key == "nodes") {
      if (!ParseInt(value, number) || number < 1) return bad();
      spec.nodes = number;
    } else if (key == "movetime") {
      if (!ParseInt(value, number) || number < 1) return bad();
      spec.movetime_ms = number;
    } else if (key == "depth") {
      if (!ParseInt(value, number) || number < 1 || number > 1000) return bad();
      spec.depth = static_cast<int>(number);
    } else if (key == "tc") {
      const std::size_t plus = value.find('+');
      std::int64_t base = 0;
      std::int64_t increment = 0;
      if (!ParseSeconds(std::string_view(value).substr(0, plus), base) || base <= 0) return bad();
      if (plus != std::string::npos &&
          !ParseSeconds(std::string_view(value).substr(plus + 1), increment)) {
        return bad();
      }
      spec.clock_base_ms = base;
      spec.clock_increment_ms = increment;
    } else {
      return InvalidArgument("unknown key '" + key +
                             "' (name, cmd, dir, option.NAME, nodes, movetime, depth, tc)");
    }
  }
  return Status::Ok();
}

Status CheckEngineSpec(const EngineSpec& spec) {
  const std::string who = spec.name.empty() ? "an engine" : "engine " + spec.name;
  if (spec.argv.empty()) return InvalidArgument(who + " has no cmd=");
  if (spec.nodes == 0 && spec.movetime_ms == 0 && spec.depth == 0 && !spec.has_clock()) {
    return InvalidArgument(who + " has no limit: give nodes=, movetime=, depth= or tc=");
  }
  return Status::Ok();
}

std::string GoCommand(const EngineSpec& spec, std::int64_t white_ms, std::int64_t black_ms,
                      std::int64_t white_inc_ms, std::int64_t black_inc_ms) {
  std::string go = "go";
  if (spec.has_clock()) {
    go += " wtime " + std::to_string(std::max<std::int64_t>(white_ms, 1)) + " btime " +
          std::to_string(std::max<std::int64_t>(black_ms, 1));
    if (white_inc_ms > 0 || black_inc_ms > 0) {
      go += " winc " + std::to_string(white_inc_ms) + " binc " + std::to_string(black_inc_ms);
    }
  }
  if (spec.nodes > 0) go += " nodes " + std::to_string(spec.nodes);
  if (spec.movetime_ms > 0) go += " movetime " + std::to_string(spec.movetime_ms);
  if (spec.depth > 0) go += " depth " + std::to_string(spec.depth);
  return go;
}

std::string DescribeLimits(const EngineSpec& spec) {
  std::vector<std::string> parts;
  if (spec.has_clock()) {
    char text[64];
    std::snprintf(text, sizeof text, "%g+%g", spec.clock_base_ms / 1000.0,
                  spec.clock_increment_ms / 1000.0);
    parts.emplace_back(text);
  }
  if (spec.nodes > 0) parts.push_back("nodes " + std::to_string(spec.nodes));
  if (spec.movetime_ms > 0) parts.push_back("movetime " + std::to_string(spec.movetime_ms) + " ms");
  if (spec.depth > 0) parts.push_back("depth " + std::to_string(spec.depth));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

}  // namespace az::match
