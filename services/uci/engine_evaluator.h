#pragma once

// The evaluator behind az-uci's search: the uniform evaluator (every legal move alike, value 0:
// the search alone plays), or a chess network from a weights file (core/nn's NetworkEvaluator, the
// adapter az-search, az-analyse and az-arena use) behind the NN cache, the evaluator service's
// EvalCache (services/evaluator/eval_cache.h). Torch-free: LibTorch stays inside core/nn.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/games/chess/chess.h"
#include "core/mcts/evaluator.h"
#include "services/evaluator/eval_cache.h"

namespace az::uci {

using ChessEvaluator = mcts::Evaluator<games::Chess>;

struct EvaluatorSettings {
  std::string model = "uniform";  // a chess weights file, or "uniform"
  int threads = 1;                // LibTorch intra-op threads (process-wide)
  // NN cache entries (656 bytes each, committed as they fill): rounded down to a power of two,
  // 0 turns it off. Not used with the uniform evaluator, which is cheaper than a lookup.
  std::uint64_t cache_entries = std::uint64_t{1} << 16;

  friend bool operator==(const EvaluatorSettings&, const EvaluatorSettings&) = default;
};

struct LoadedEvaluator {
  std::unique_ptr<ChessEvaluator> evaluator;
  bool is_network = false;  // decides the search's first-play urgency (1.0 with a network, else 0)
  std::string description;  // for `info string`: "uniform", or the network, device and cache
};

// Builds an evaluator for the settings. The engine calls it at start and when WeightsFile, Threads
// or NNCacheSize change; tests inject their own (a counting or failing evaluator).
using EvaluatorFactory = std::function<Result<LoadedEvaluator>(const EvaluatorSettings&)>;

// The real factory. NOT_FOUND / DATA_LOSS / FAILED_PRECONDITION for a weights file that is
// missing, damaged or not a chess network (the message says which); INVALID_ARGUMENT for a bad
// thread count; RESOURCE_EXHAUSTED when the cache's memory cannot be mapped.
Result<LoadedEvaluator> LoadChessEvaluator(const EvaluatorSettings& settings);

// The largest size EvalCache accepts that is <= `requested`: 0, or a power of two in
// [2, evaluator::kMaxCacheSize].
std::uint64_t CacheEntriesFor(std::uint64_t requested);

// Answers the leaves it has seen before (same record, same legal-move list: EvalCache's key) from
// the cache and hands only the rest, as one smaller batch, to `inner`; stores what `inner`
// answers. An error of `inner` is returned as is, with nothing stored. Not thread-safe (one
// search thread owns it).
class CachedEvaluator final : public ChessEvaluator {
 public:
  // `entries` as CacheEntriesFor; INVALID_ARGUMENT / RESOURCE_EXHAUSTED as EvalCache::Create.
  static Result<std::unique_ptr<CachedEvaluator>> Create(std::unique_ptr<ChessEvaluator> inner,
                                                         std::uint64_t entries);

  Status Evaluate(std::span<const mcts::Leaf<games::Chess>> leaves,
                  std::span<mcts::LeafEval> evals) override;

  const evaluator::EvalCacheStats& stats() const { return cache_.stats(); }

 private:
  CachedEvaluator(std::unique_ptr<ChessEvaluator> inner, evaluator::EvalCache<games::Chess> cache)
      : inner_(std::move(inner)), cache_(std::move(cache)) {}

  std::unique_ptr<ChessEvaluator> inner_;
  evaluator::EvalCache<games::Chess> cache_;
  std::vector<mcts::Leaf<games::Chess>> miss_leaves_;  // scratch, kept between batches
  std::vector<mcts::LeafEval> miss_evals_;
};

}  // namespace az::uci
