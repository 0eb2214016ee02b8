#include "services/selfplay/driver/openings.h"

#include <fstream>
#include <sstream>

#include "core/games/text.h"

namespace az::selfplay {

Result<OpeningBook> ParseOpeningBook(std::string_view text, std::string source) {
  OpeningBook book;
  book.source = std::move(source);
  int number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    line = games::TrimText(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    book.lines.push_back({number, std::string(line)});
  }
  if (book.lines.empty()) {
    return InvalidArgument(book.source + ": the opening book holds no position");
  }
  return book;
}

Result<OpeningBook> ReadOpeningBook(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFound("cannot open the opening book " + path);
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return NotFound("cannot read the opening book " + path);
  return ParseOpeningBook(text.str(), path);
}

}  // namespace az::selfplay
