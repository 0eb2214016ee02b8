#pragma once

// The evaluator's batching step: drains the request channel into one batch across all games and
// all worker processes, runs the network on it and answers every request.
//
//   wait up to first_wait for the first request (so the caller's loop can notice shutdown and new
//   models); then keep taking while requests keep arriving: each wait for more lasts at most the
//   stall, and the batch fires when one passes with nothing new, when it holds max_batch, or
//   when it has been collecting for max_collect. The stall is `stall`, or stall_fraction of the
//   network's recent time per batch when that is shorter: waiting is worth it only while it is
//   small next to the work it batches (a 1x8 network answers a batch in 0.6 ms, where a 300 us
//   stall cost a quarter of the throughput; docs/evaluator.md);
//   validate each request (a bad one is answered kInvalidRequest, never evaluated);
//   look each valid one up in the cache (eval_cache.h; off with cache_size 0): a hit is answered
//   from it as soon as the take that brought it returns, and counts as an arrival for the stall
//   but not towards max_batch; the misses make the batch;
//   encode each record straight into the batch tensor (nn::Network's encoder callback; under a
//   random board symmetry with random_symmetry), one Forward with the legal-move lists (priors =
//   softmax over each position's legal moves, in the request's order either way);
//   answer each request with its priors, WDL and the model version, then store the answers in
//   the cache.
//
// Torch-free: the network is the nn::Network facade. Not thread-safe; the caller runs Step on one
// thread and swaps the network's weights between steps. The cache is the batcher's own, used only
// on that thread (no locking). It is cleared whenever the weights change: by InvalidateCache,
// which the caller must call after loading weights into the network, and by Step itself when it
// is handed another network object or another model version than the step before.

#include <chrono>
#include <cstdint>
#include <memory>

#include "core/base/status.h"
#include "core/nn/network.h"
#include "services/common/game_kind.h"
#include "services/evaluator/eval_cache.h"
#include "shm/request_channel.h"

namespace az::evaluator {

struct BatchOptions {
  int max_batch = 256;
  std::chrono::microseconds stall{300};
  // The stall is at most this fraction of the network's time per batch (an exponential average);
  // 0: always `stall`.
  double stall_fraction = 0.05;
  std::chrono::microseconds max_collect{20000};
  std::chrono::milliseconds first_wait{100};
  // How long one answer may wait for room in a worker's response ring (a worker that stopped
  // reading); after a timeout the batch's other answers to that worker are dropped, not waited for.
  std::chrono::milliseconds respond_timeout{50};
  // Entries of the cache of answers: 0 (off) or a power of two from 2 to kMaxCacheSize.
  std::uint64_t cache_size = std::uint64_t{1} << 18;
  // Ask the network about each position under one of the game's board symmetries drawn at random
  // (Connect Four: itself or its mirror; tic-tac-toe: the square's 8 maps; chess has none) and
  // map its priors back: AlphaGo Zero's way to keep one orientation's quirks of the network out of
  // a search. The cache still keys the answer by the request's own record. A game with
  // kSymmetries > 1 provides G::TransformRecord and G::TransformAction for it (Connect Four and
  // tic-tac-toe do).
  bool random_symmetry = false;
  std::uint64_t symmetry_seed = 1;  // of the draws
};

struct BatchReport {
  int taken = 0;          // requests taken from the channel (0: none came within first_wait)
  int cache_lookups = 0;  // valid requests looked up in the cache (0 while it is off)
  int cache_hits = 0;     // ... answered from it; the rest of `taken` made the network's batch
  int evaluated = 0;      // positions through the network
  int invalid = 0;        // requests refused by validation
  int answered = 0;       // responses written (stale ones dropped by the channel count as answered)
  int response_timeouts = 0;  // answers dropped because a worker's response ring stayed full
  Status forward_status;  // the network's error, when Forward failed (answered kEvaluationFailed)
  std::uint64_t model_version = 0;
  double collect_seconds = 0;  // from the first request to firing
  double forward_seconds = 0;  // encoding + Forward
  double respond_seconds = 0;
  double stall_seconds = 0;  // the stall this batch collected with
};

class EvalBatcher {
 public:
  virtual ~EvalBatcher() = default;
  // One batch (see the top of this file). Blocks up to first_wait + max_collect + the network's
  // time + the answers' time.
  virtual BatchReport Step(nn::Network& network) = 0;
  virtual shm::ChannelServerStats ChannelStats() const = 0;
  virtual std::size_t ReclaimDead() = 0;
  // Forgets every cached answer, in O(1). Call it after loading weights into the network: Step
  // cannot tell new weights of the same model version in the same object from the old ones.
  virtual void InvalidateCache() = 0;
  virtual EvalCacheStats CacheStats() const = 0;
};

// A batcher for `game` over `server` (a channel of that game's record sizes, checked).
// InvalidArgument for options out of range or a channel of other sizes; ResourceExhausted when the
// cache's memory cannot be mapped.
Result<std::unique_ptr<EvalBatcher>> CreateEvalBatcher(service::GameKind game,
                                                       shm::RequestServer server,
                                                       const BatchOptions& options);

// Whether `net` takes `game`'s input and produces its policy (FailedPrecondition naming both
// otherwise).
Status CheckNetworkFitsGame(service::GameKind game, const nn::NetConfig& net);
// The default network of `game` for a fresh start: ChessSmall or ConnectFour.
nn::NetConfig DefaultNetConfig(service::GameKind game);
// The input layout of `game`'s encoder.
nn::InputLayout GameInputLayout(service::GameKind game);

}  // namespace az::evaluator
