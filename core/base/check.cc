#include "core/base/check.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace az::internal {

void CheckFailed(const char* file, int line, const char* condition, std::string_view message) {
  std::string text = std::string("FATAL ") + file + ":" + std::to_string(line) + ": check failed: " +
                     condition;
  if (!message.empty()) {
    text += ": ";
    text += message;
  }
  text += "\n";
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace az::internal
