#pragma once

// Small helpers for the games' text forms (positions and moves as users write them).

#include <string_view>

namespace az::games {

// `text` without leading and trailing spaces, tabs and carriage returns.
inline std::string_view TrimText(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace az::games
