#include "core/nn/model_files.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "core/base/log.h"

namespace az::nn {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "model-";
constexpr std::string_view kSuffix = ".azw";

}  // namespace

std::string ModelFileName(std::uint64_t version) {
  return std::string(kPrefix) + std::to_string(version) + std::string(kSuffix);
}

std::optional<std::uint64_t> NumberInFileName(std::string_view name, std::string_view prefix,
                                              std::string_view suffix) {
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
  if (name.size() < prefix.size() + suffix.size()) return std::nullopt;  // they overlap
  const std::string_view digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty()) return std::nullopt;
  std::uint64_t number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return number;
}

std::optional<std::uint64_t> ModelVersionOfFileName(std::string_view name) {
  return NumberInFileName(name, kPrefix, kSuffix);
}

std::vector<std::pair<std::uint64_t, std::string>> ListNumberedFiles(const std::string& dir,
                                                                     std::string_view prefix,
                                                                     std::string_view suffix) {
  std::vector<std::pair<std::uint64_t, std::string>> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (!entry.is_regular_file(error)) continue;
    if (std::optional<std::uint64_t> number =
            NumberInFileName(entry.path().filename().string(), prefix, suffix)) {
      files.emplace_back(*number, entry.path().string());
    }
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  return files;
}

void PruneNumberedFiles(const std::string& dir, std::string_view prefix, std::string_view suffix,
                        std::size_t keep, std::optional<std::uint64_t> exempt) {
  std::size_t kept = 0;
  for (const auto& [number, path] : ListNumberedFiles(dir, prefix, suffix)) {
    if (number == exempt) continue;
    if (kept++ < keep) continue;
    std::error_code error;
    fs::remove(path, error);
    if (error) {
      AZ_LOG(kWarning) << "removing the old file " << path << ": " << error.message();
    }
  }
}

std::vector<std::pair<std::uint64_t, std::string>> ListModelFiles(const std::string& dir) {
  return ListNumberedFiles(dir, kPrefix, kSuffix);
}

void PruneModelFiles(const std::string& dir, int keep, bool keep_initial) {
  if (keep <= 0) return;
  PruneNumberedFiles(dir, kPrefix, kSuffix, static_cast<std::size_t>(keep),
                     keep_initial ? std::optional<std::uint64_t>(0) : std::nullopt);
}

}  // namespace az::nn
