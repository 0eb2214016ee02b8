#pragma once

// A run's model directory: one weights file per published version, named model-<version>.azw
// (docs/learner.md). The learner writes and prunes its own; az-relay keeps a self-play host's copy
// the same way. Torch-free: the relay links it without LibTorch.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace az::nn {

// The number of a numbered file's name, `prefix` digits `suffix` ("checkpoint-0000001234.azck"),
// or nullopt for any other name (no digits, other characters, a number past 64 bits).
std::optional<std::uint64_t> NumberInFileName(std::string_view name, std::string_view prefix,
                                              std::string_view suffix);

// The files of `dir` named `prefix` digits `suffix` (regular files only), highest number first, as
// (number, path); empty when the directory is missing. Model files and the learner's checkpoints.
std::vector<std::pair<std::uint64_t, std::string>> ListNumberedFiles(const std::string& dir,
                                                                     std::string_view prefix,
                                                                     std::string_view suffix);

// Removes all but the `keep` highest-numbered of those files; the one numbered `exempt` (when
// given) stays and does not count. A file that cannot be removed is logged and left.
void PruneNumberedFiles(const std::string& dir, std::string_view prefix, std::string_view suffix,
                        std::size_t keep, std::optional<std::uint64_t> exempt = std::nullopt);

// "model-<version>.azw".
std::string ModelFileName(std::uint64_t version);
// The version a file name holds, or nullopt when it is not a model file's name (no digits, extra
// characters, a number past 64 bits).
std::optional<std::uint64_t> ModelVersionOfFileName(std::string_view name);

// Every model file in `dir` (regular files with a model file's name), highest version first; empty
// when the directory is missing.
std::vector<std::pair<std::uint64_t, std::string>> ListModelFiles(const std::string& dir);

// Removes all but the `keep` newest model files of `dir` (keep <= 0: removes none). With
// `keep_initial`, version 0 (the initial weights, every comparison's baseline) stays and does not
// count. A file that cannot be removed is logged and left.
void PruneModelFiles(const std::string& dir, int keep, bool keep_initial);

}  // namespace az::nn
