#include "services/score/position_set.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "core/base/check.h"
#include "core/games/registry.h"
#include "core/mcts/random.h"
#include "services/score/solved.h"

#ifndef AZ_SCORE_DATA_DIR
#error "AZ_SCORE_DATA_DIR must name services/score/data (services/score/CMakeLists.txt)"
#endif

namespace az::score {
namespace {

using internal::Careful;
using internal::GameOver;
using internal::SolvedPosition;

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? end : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;  // one spelling only
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

std::string BandText(const PlyBand& band) {
  return std::to_string(band.min_ply) + "-" + std::to_string(band.max_ply);
}

Result<PlyBand> ParseBand(std::string_view text) {
  const std::vector<std::string_view> ends = Split(text, '-');
  PlyBand band;
  if (ends.size() != 2 || !ParseNumber(ends[0], band.min_ply) ||
      !ParseNumber(ends[1], band.max_ply) || band.min_ply > band.max_ply) {
    return InvalidArgument("band '" + std::string(text) + "' is not A-B with 0 <= A <= B");
  }
  return band;
}

// Every playable action has the same value.
bool Trivial(const std::vector<int>& values) {
  int first = kUnplayable;
  for (int value : values) {
    if (value == kUnplayable) continue;
    if (first == kUnplayable) first = value;
    if (value != first) return false;
  }
  return true;
}

// The lines after the header, checked against game G. `origin` and the line numbers go into errors.
template <games::GameDefinition G>
Status ParseLines(const std::vector<std::string_view>& lines, std::string_view origin,
                  PositionSet& set) {
  std::set<std::string> seen;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty() || line[0] == '#') continue;
    const auto error = [&](const std::string& what) {
      return InvalidArgument(std::string(origin) + ":" + std::to_string(i + 1) + ": " + what);
    };
    const std::vector<std::string_view> fields = Split(line, ' ');
    if (fields.size() != 4 || fields[1].substr(0, 5) != "band=" ||
        fields[2].substr(0, 7) != "source=" || fields[3].substr(0, 7) != "values=") {
      return error("expected '<moves> band=A-B source=S values=V,...', got '" + std::string(line) +
                   "'");
    }
    StoredPosition position;
    position.moves = std::string(fields[0]);
    Result<typename G::State> state = G::ParsePosition(fields[0]);
    if (!state.ok()) return error("position '" + position.moves + "': " + state.status().message());
    if (GameOver<G>(*state)) return error("position '" + position.moves + "': the game is over");
    position.ply = G::Ply(*state);
    const typename G::Record record = G::ToRecord(*state);
    if (!seen.insert(std::string(reinterpret_cast<const char*>(&record), sizeof record)).second) {
      return error("position '" + position.moves + "' is in the set twice");
    }

    Result<PlyBand> band = ParseBand(fields[1].substr(5));
    if (!band.ok()) return error(band.status().message());
    const auto found = std::find(set.bands.begin(), set.bands.end(), *band);
    if (found == set.bands.end()) return error("band " + BandText(*band) + " is not in the header");
    if (position.ply < band->min_ply || position.ply > band->max_ply) {
      return error("position '" + position.moves + "' has " + std::to_string(position.ply) +
                   " plies, outside its band " + BandText(*band));
    }
    position.band = static_cast<int>(found - set.bands.begin());

    const std::string_view source = fields[2].substr(7);
    position.source = -1;
    for (int s = 0; s < kSources; ++s) {
      if (source == kSourceNames[s]) position.source = s;
    }
    if (position.source < 0) {
      return error("source '" + std::string(source) + "' is not random, strong or mixed");
    }

    const std::vector<std::string_view> values = Split(fields[3].substr(7), ',');
    if (static_cast<int>(values.size()) != G::kPolicySize) {
      return error(std::to_string(values.size()) + " values, " + std::string(G::kName) + " has " +
                   std::to_string(G::kPolicySize) + " actions");
    }
    std::vector<bool> playable(G::kPolicySize, false);
    typename G::Move moves[G::kMaxMoves];
    const int count = G::LegalMoves(*state, moves);
    for (int m = 0; m < count; ++m) playable[G::PolicyIndex(*state, moves[m])] = true;
    for (int a = 0; a < G::kPolicySize; ++a) {
      const std::string_view value = values[a];
      const std::string where =
          "value " + std::to_string(a + 1) + " ('" + std::string(value) + "')";
      if (value == "x") {
        if (playable[a]) return error(where + ": the action is playable");
        position.values.push_back(kUnplayable);
      } else if (value == "1" || value == "0" || value == "-1") {
        if (!playable[a]) return error(where + ": the action is not playable (write x)");
        position.values.push_back(value == "1" ? 1 : value == "0" ? 0 : -1);
      } else {
        return error(where + ": values are 1, 0, -1 or x");
      }
    }
    if (!set.trivial_included && Trivial(position.values)) {
      return error("position '" + position.moves +
                   "' is trivial (every move keeps the value) in a set that excludes them");
    }
    set.positions.push_back(std::move(position));
  }
  return Status::Ok();
}

// Deterministic play for the generator: one PRNG stream per (band, source).
template <games::Solvable G>
class Generator {
 public:
  explicit Generator(const GenerateOptions& options) : options_(options) {}

  // Each group (one band's positions from one source) draws from its own PRNG stream and refuses
  // the positions it reached before, so the groups are made on up to `threads` threads, each with
  // its own solver. The merge then keeps a band's positions in source order and drops any that an
  // earlier source of the band reached too, drawing a replacement from the dropping group's stream:
  // no position appears twice, and the set is the same for any thread count.
  Status Run(PositionSet& set, const GenerateProgress& progress) {
    const int groups = static_cast<int>(options_.bands.size()) * kSources;
    std::vector<Group> made(static_cast<std::size_t>(groups));
    std::atomic<int> next{0};
    std::mutex mutex;
    int done = 0;
    const auto added = [&] {
      const std::lock_guard lock(mutex);
      ++done;
      if (progress) progress(std::min(done, options_.positions), options_.positions);
    };
    const auto work = [&] {
      for (int group; (group = next++) < groups;) {
        Group& g = made[static_cast<std::size_t>(group)];
        g.rng = GroupRng(group);
        g.status = Fill(group, Quota(group), g, {}, added);
      }
    };
    std::vector<std::thread> threads;
    for (int t = 1; t < std::min(options_.threads, groups); ++t) threads.emplace_back(work);
    work();
    for (std::thread& thread : threads) thread.join();
    for (int band = 0; band < static_cast<int>(options_.bands.size()); ++band) {
      std::set<std::string> taken;  // the records of the band's positions kept so far
      for (int source = 0; source < kSources; ++source) {
        const int group = band * kSources + source;
        Group& g = made[static_cast<std::size_t>(group)];
        AZ_RETURN_IF_ERROR(g.status);
        std::size_t kept = 0;  // keeps g's positions no earlier source has, in order
        for (std::size_t i = 0; i < g.positions.size(); ++i) {
          if (!taken.insert(g.keys[i]).second) continue;
          if (kept != i) {  // no self-move
            g.positions[kept] = std::move(g.positions[i]);
            g.keys[kept] = std::move(g.keys[i]);
          }
          ++kept;
        }
        g.positions.resize(kept);
        g.keys.resize(kept);
        AZ_RETURN_IF_ERROR(Fill(group, Quota(group) - static_cast<int>(kept), g, taken, added));
        for (std::size_t i = kept; i < g.keys.size(); ++i) taken.insert(g.keys[i]);
        for (StoredPosition& position : g.positions) set.positions.push_back(std::move(position));
      }
    }
    return Status::Ok();
  }

 private:
  using State = typename G::State;
  using Move = typename G::Move;

  struct Group {
    mcts::Rng rng{0};
    std::set<std::string> seen;  // records reached before (stored, or trivial and refused)
    std::vector<StoredPosition> positions;
    std::vector<std::string> keys;  // each position's record
    Status status;
  };

  int Quota(int group) const {
    const int groups = static_cast<int>(options_.bands.size()) * kSources;
    return options_.positions / groups + (group < options_.positions % groups);
  }

  mcts::Rng GroupRng(int group) const {
    std::uint64_t stream = options_.seed;
    for (int k = 0; k <= group; ++k) mcts::SplitMix64(stream);
    return mcts::Rng(mcts::SplitMix64(stream));
  }

  // Adds `count` new positions to the group, none of whose records is in `taken`.
  Status Fill(int group, int count, Group& g, const std::set<std::string>& taken,
              const std::function<void()>& added) {
    const int band = group / kSources;
    const int source = group % kSources;
    int tries = 0;
    for (int made = 0; made < count;) {
      if (++tries > 1000 * Quota(group)) {
        return FailedPrecondition("band " + BandText(options_.bands[band]) + ", source " +
                                  std::string(kSourceNames[source]) + ": only " +
                                  std::to_string(g.positions.size()) + " new positions in " +
                                  std::to_string(tries - 1) + " tries");
      }
      std::string key;
      std::optional<StoredPosition> position =
          Play(options_.bands[band], source, g.rng, g.seen, key);
      if (!position || taken.contains(key)) continue;
      position->band = band;
      position->source = source;
      g.positions.push_back(std::move(*position));
      g.keys.push_back(std::move(key));
      ++made;
      added();
    }
    return Status::Ok();
  }

  static std::size_t Below(mcts::Rng& rng, std::size_t n) {
    return static_cast<std::size_t>(rng.Next() % n);
  }

  // One line of play to a ply drawn in the band; nothing when the game ends before it or the
  // position was already made.
  std::optional<StoredPosition> Play(const PlyBand& band, int source, mcts::Rng& rng,
                                     std::set<std::string>& seen, std::string& key) {
    const int target =
        band.min_ply +
        static_cast<int>(Below(rng, static_cast<std::size_t>(band.max_ply - band.min_ply + 1)));
    int random_until = target;  // source 0, random
    bool careful_opening = false;
    if (source == 1) {  // strong
      random_until = std::min(options_.strong_from, target);
      careful_opening = true;
    } else if (source == 2) {  // mixed
      const int lo = options_.strong_from + 1;
      const int hi = target - 1;
      random_until = lo <= hi
                         ? lo + static_cast<int>(Below(rng, static_cast<std::size_t>(hi - lo + 1)))
                         : std::min(options_.strong_from, target);
    }
    State state = G::NewGame(0);
    std::string text;
    while (G::Ply(state) < target) {
      Move moves[G::kMaxMoves];
      const int count = G::LegalMoves(state, moves);
      if (games::IsTerminal(G::Outcome(state, count))) return std::nullopt;
      std::vector<Move> choices;
      if (G::Ply(state) < random_until) {
        choices.assign(moves, moves + count);
        if (careful_opening) Prefer(state, choices);
      } else {
        const SolvedPosition<G> solved = internal::Solve<G>(state);
        for (std::size_t m = 0; m < solved.moves.size(); ++m) {
          if (solved.values[m] == solved.best) choices.push_back(solved.moves[m]);
        }
        Prefer(state, choices);
      }
      const Move move = choices[Below(rng, choices.size())];
      text += G::MoveText(state, move);
      G::Apply(state, move);
    }
    if (GameOver<G>(state)) return std::nullopt;
    // Seen before (stored, or trivial and refused): drawn again without solving it again.
    const typename G::Record record = G::ToRecord(state);
    key.assign(reinterpret_cast<const char*>(&record), sizeof record);
    if (!seen.insert(key).second) return std::nullopt;
    const SolvedPosition<G> solved = internal::Solve<G>(state);
    if (!options_.include_trivial && solved.trivial()) return std::nullopt;
    // The set stores the move text: it must read back as this position (true of the small games,
    // whose position text is their moves' digits).
    Result<State> parsed = G::ParsePosition(text.empty() ? "start" : text);
    AZ_CHECK(parsed.ok() && G::ToRecord(*parsed) == record,
             "az-score: the game's position text is not its moves' text");

    StoredPosition position;
    position.moves = text.empty() ? "start" : text;
    position.ply = G::Ply(state);
    position.values.assign(G::kPolicySize, kUnplayable);
    for (std::size_t m = 0; m < solved.moves.size(); ++m) {
      position.values[G::PolicyIndex(state, solved.moves[m])] = solved.values[m];
    }
    return position;
  }

  // Keeps the careful moves among `choices` when there are any.
  static void Prefer(const State& state, std::vector<Move>& choices) {
    std::vector<Move> careful;
    for (const Move& move : choices) {
      if (Careful<G>(state, move)) careful.push_back(move);
    }
    if (!careful.empty()) choices = std::move(careful);
  }

  const GenerateOptions& options_;
};

}  // namespace

Result<std::vector<PlyBand>> ParseBands(std::string_view text) {
  std::vector<PlyBand> bands;
  for (std::string_view part : Split(text, ',')) {
    AZ_ASSIGN_OR_RETURN(PlyBand band, ParseBand(part));
    if (!bands.empty() && band.min_ply <= bands.back().max_ply) {
      return InvalidArgument("bands '" + std::string(text) + "' are not ascending and disjoint");
    }
    bands.push_back(band);
  }
  return bands;
}

std::string BandsText(const std::vector<PlyBand>& bands) {
  std::string text;
  for (const PlyBand& band : bands) {
    if (!text.empty()) text += ',';
    text += BandText(band);
  }
  return text;
}

Result<PositionSet> ParsePositionSet(std::string_view text, std::string_view origin) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const std::vector<std::string_view> lines = Split(text, '\n');
  const auto error = [&](const std::string& what) {
    return InvalidArgument(std::string(origin) + ":1: " + what);
  };
  const std::vector<std::string_view> header = Split(lines[0], ' ');
  if (header[0] != kPositionSetMagic) {
    return error("not an az-score position set (the first line starts with '" +
                 std::string(kPositionSetMagic) + " " + std::to_string(kPositionSetVersion) + "')");
  }
  int version = 0;
  if (header.size() < 2 || !ParseNumber(header[1], version)) return error("no version");
  if (version != kPositionSetVersion) {
    return error("version " + std::to_string(version) + "; this az-score reads version " +
                 std::to_string(kPositionSetVersion));
  }
  PositionSet set;
  int positions = -1;
  std::set<std::string_view> keys;
  for (std::size_t i = 2; i < header.size(); ++i) {
    const std::size_t equals = header[i].find('=');
    const std::string_view key = header[i].substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : header[i].substr(equals + 1);
    if (!keys.insert(key).second) return error("header field '" + std::string(key) + "' twice");
    bool good = equals != std::string_view::npos;
    if (key == "game") {
      set.game = std::string(value);
    } else if (key == "positions") {
      good = good && ParseNumber(value, positions);
    } else if (key == "seed") {
      good = good && ParseNumber(value, set.seed);
    } else if (key == "strong-from") {
      good = good && ParseNumber(value, set.strong_from);
    } else if (key == "trivial") {
      good = good && (value == "excluded" || value == "included");
      set.trivial_included = value == "included";
    } else if (key == "bands") {
      Result<std::vector<PlyBand>> bands = ParseBands(value);
      if (!bands.ok()) return error(bands.status().message());
      set.bands = *bands;
    } else {
      return error("unknown header field '" + std::string(header[i]) + "'");
    }
    if (!good) return error("header field '" + std::string(header[i]) + "' is malformed");
  }
  for (std::string_view key : {"game", "positions", "seed", "strong-from", "trivial", "bands"}) {
    if (!keys.contains(key)) return error("the header has no '" + std::string(key) + "='");
  }
  Result<const games::GameInfo*> game = games::FindGame(set.game);
  if (!game.ok()) return error(game.status().message());
  if (!(*game)->has_solver) return error("game " + set.game + " has no solver");
  AZ_RETURN_IF_ERROR(games::VisitGame((*game)->id, [&]<games::GameDefinition G>() -> Status {
    if constexpr (games::Solvable<G>) {
      return ParseLines<G>(lines, origin, set);
    } else {
      return error("game " + set.game + " has no solver");
    }
  }));
  if (static_cast<int>(set.positions.size()) != positions) {
    return error("the header says " + std::to_string(positions) + " positions, the file has " +
                 std::to_string(set.positions.size()));
  }
  return set;
}

Result<PositionSet> ReadPositionSet(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open position set " + path);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return NotFound("cannot read position set " + path);
  return ParsePositionSet(text.str(), path);
}

std::string FormatPositionSet(const PositionSet& set) {
  std::string text = std::string(kPositionSetMagic) + " " + std::to_string(kPositionSetVersion) +
                     " game=" + set.game + " positions=" + std::to_string(set.positions.size()) +
                     " seed=" + std::to_string(set.seed) +
                     " strong-from=" + std::to_string(set.strong_from) +
                     " trivial=" + (set.trivial_included ? "included" : "excluded") +
                     " bands=" + BandsText(set.bands) + "\n";
  for (const std::string& comment : set.comments) text += "# " + comment + "\n";
  for (const StoredPosition& p : set.positions) {
    text += p.moves + " band=" + BandText(set.bands[static_cast<std::size_t>(p.band)]) +
            " source=" + std::string(kSourceNames[p.source]) + " values=";
    for (std::size_t a = 0; a < p.values.size(); ++a) {
      if (a > 0) text += ',';
      text += p.values[a] == kUnplayable ? std::string("x") : std::to_string(p.values[a]);
    }
    text += '\n';
  }
  return text;
}

Status WritePositionSet(const PositionSet& set, const std::string& path) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << FormatPositionSet(set);
    out.flush();
    if (!out) return Internal("cannot write " + temporary);
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) return Internal("cannot rename " + temporary + " to " + path + ": " + error.message());
  return Status::Ok();
}

std::string ShippedSetPath(std::string_view game, std::string_view name) {
  return std::string(AZ_SCORE_DATA_DIR) + "/" + std::string(game) + "-" + std::string(name) +
         ".txt";
}

Result<PositionSet> GeneratePositionSet(const GenerateOptions& options,
                                        const GenerateProgress& progress) {
  AZ_ASSIGN_OR_RETURN(const games::GameInfo* game, games::FindGame(options.game));
  if (!game->has_solver) {
    return InvalidArgument("game " + std::string(game->name) + " has no solver to reference");
  }
  if (options.positions < 1 || options.bands.empty() || options.strong_from < 0 ||
      options.threads < 1) {
    return InvalidArgument("generate options out of range");
  }
  for (std::size_t b = 0; b < options.bands.size(); ++b) {
    const PlyBand& band = options.bands[b];
    if (band.min_ply < 0 || band.min_ply > band.max_ply ||
        (b > 0 && band.min_ply <= options.bands[b - 1].max_ply)) {
      return InvalidArgument("bands " + BandsText(options.bands) +
                             " are not ascending and disjoint");
    }
  }
  PositionSet set;
  set.game = std::string(game->name);
  set.seed = options.seed;
  set.strong_from = options.strong_from;
  set.trivial_included = options.include_trivial;
  set.bands = options.bands;
  AZ_RETURN_IF_ERROR(games::VisitGame(game->id, [&]<games::GameDefinition G>() -> Status {
    if constexpr (games::Solvable<G>) {
      return Generator<G>(options).Run(set, progress);
    } else {
      return InvalidArgument("no solver");
    }
  }));
  return set;
}

}  // namespace az::score
