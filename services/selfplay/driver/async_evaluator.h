#pragma once

// What the self-play driver needs from an evaluator: submit leaves, collect their answers as they
// come, and start over when answers stop coming. The service implements it over the shared-memory
// eval channel (services/selfplay/eval_channel_evaluator.h); tests use an in-process fake.
//
//   evaluator.Submit(requests, timeout)       -> how many went in (the queue may be full)
//   evaluator.Receive(max, timeout, visit)    -> visit(answer) for each answer that came
//   evaluator.Reset()                         -> answers to everything submitted before are dropped
//
// Request ids are the caller's: unique per request, never reused (a resubmission gets a new id).
// An answer carries its request's id. One thread uses an evaluator.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "core/base/status.h"

namespace az::selfplay {

// One leaf to evaluate. The spans point into the caller's search and stay valid until the answer
// arrives or the caller Reset()s.
struct LeafRequest {
  std::uint64_t request_id = 0;
  std::uint64_t game_id = 0;                      // the caller's game, for tracing
  std::span<const std::byte> record;              // the leaf's position record (the game's Record)
  std::span<const std::uint16_t> policy_indices;  // one per legal move, in the search's move order
};

enum class EvalAnswerStatus : std::uint8_t {
  kOk,                // priors and WDL are valid
  kInvalidRequest,    // the evaluator refused the request (it logs why)
  kEvaluationFailed,  // the network failed on the batch (e.g. out of memory)
  kMalformed,         // the transport could not read the answer (`error` says why)
};

// One answer, valid only during the visit that receives it.
struct EvalAnswer {
  std::uint64_t request_id = 0;
  EvalAnswerStatus status = EvalAnswerStatus::kOk;
  std::uint64_t model_version = 0;  // the weights that evaluated it
  std::array<float, 3> wdl = {};    // win, draw, loss for the leaf's side to move
  std::span<const float> priors;    // kOk: one per requested move, in the request's order
  Status error;                     // kMalformed: what was wrong
};

class AsyncEvaluator {
 public:
  using AnswerVisitor = std::function<void(const EvalAnswer& answer)>;

  virtual ~AsyncEvaluator() = default;

  // Submits `requests` in order and returns how many went in: all of them unless the request queue
  // stayed full for `timeout` while waiting for room for the next one (a prefix then went in).
  // DEADLINE_EXCEEDED when not even the first went in within `timeout`; other errors of the
  // transport (nothing after the returned prefix was submitted).
  virtual Result<std::size_t> Submit(std::span<const LeafRequest> requests,
                                     std::chrono::milliseconds timeout) = 0;

  // Calls `visit` on up to `max_answers` answers to requests submitted since the last Reset(),
  // blocking up to `timeout` for the first. Answers to earlier requests are dropped, not visited.
  // Returns how many were visited; DEADLINE_EXCEEDED when none came in `timeout`; other errors of
  // the transport.
  virtual Result<std::size_t> Receive(std::size_t max_answers, std::chrono::milliseconds timeout,
                                      const AnswerVisitor& visit) = 0;

  // Gives up on every request in flight: answers to them are dropped when they arrive. Returns the
  // new generation (for logs). Never blocks.
  virtual std::uint32_t Reset() = 0;

  // How many evaluators stopped serving (died, or left) since the transport was made; a change
  // since requests were submitted means some may never be answered, so the engine submits them
  // again at once instead of waiting for its eval timeout. 0 when the transport cannot tell.
  // Called about every 100 ms while the engine waits without answers.
  virtual std::uint64_t EvaluatorsLost() { return 0; }

  // The most requests that may be in flight at once before answers would be lost or the evaluator
  // blocked (the caller keeps at most this many unanswered); 0: no limit.
  virtual std::uint64_t max_in_flight() const = 0;

  // For logs: who answers ("az-evaluator").
  virtual std::string_view name() const = 0;
};

}  // namespace az::selfplay
