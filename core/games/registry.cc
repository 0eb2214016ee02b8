#include "core/games/registry.h"

#include <cstring>
#include <vector>

namespace az::games {
namespace {

template <GameDefinition G>
Status ValidateSampleBytes(std::span<const std::byte> bytes) {
  using Sample = typename G::Sample;
  if (bytes.size() != sizeof(Sample)) {
    return InvalidArgument(std::string(G::kName) + " sample: " + std::to_string(bytes.size()) +
                           " bytes, a sample is " + std::to_string(sizeof(Sample)));
  }
  Sample sample;
  std::memcpy(&sample, bytes.data(), sizeof sample);  // the bytes may be misaligned
  return G::ValidateSample(sample);
}

template <GameDefinition G>
std::uint32_t SampleModelVersion(std::span<const std::byte> bytes) {
  using Sample = typename G::Sample;
  AZ_CHECK(bytes.size() == sizeof(Sample), "SampleModelVersion: wrong sample size");
  Sample sample;
  std::memcpy(&sample, bytes.data(), sizeof sample);
  return G::SampleModelVersion(sample);
}

template <GameDefinition G>
GameInfo InfoOf() {
  GameInfo info;
  info.name = G::kName;
  info.id = G::kId;
  info.sample_bytes = sizeof(typename G::Sample);
  info.record_bytes = sizeof(typename G::Record);
  info.policy_size = G::kPolicySize;
  info.max_moves = G::kMaxMoves;
  info.input = G::kInput;
  info.net = G::kNet;
  info.play = G::kPlay;
  info.symmetries = G::kSymmetries;
  info.has_solver = Solvable<G>;
  info.validate_sample = &ValidateSampleBytes<G>;
  info.sample_model_version = &SampleModelVersion<G>;
  return info;
}

const std::vector<GameInfo>& Table() {
  static const std::vector<GameInfo> table = [] {
    std::vector<GameInfo> games;
    ForEachGame([&]<GameDefinition G>() { games.push_back(InfoOf<G>()); });
    return games;
  }();
  return table;
}

}  // namespace

std::span<const GameInfo> AllGames() { return Table(); }

Result<const GameInfo*> FindGame(std::string_view name) {
  for (const GameInfo& info : Table()) {
    if (info.name == name) return &info;
  }
  return InvalidArgument("unknown game '" + std::string(name) + "' (known: " + GameNames(", ") +
                         ")");
}

const GameInfo* FindGameById(GameId id) {
  for (const GameInfo& info : Table()) {
    if (info.id == id) return &info;
  }
  return nullptr;
}

std::string GameNames(std::string_view separator) {
  std::string names;
  for (const GameInfo& info : Table()) {
    if (!names.empty()) names += separator;
    names += info.name;
  }
  return names;
}

}  // namespace az::games
