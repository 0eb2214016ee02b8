#pragma once

// The eval wire protocol between self-play workers and the evaluator: the payloads of the request
// channel (shm/request_channel.h), which adds its own Envelope (worker id, generation, request id)
// in front of each.
//
//   request  = header (game, game id, move count) + the leaf's record + the policy index of each
//              legal move (u16, in the leaf's move order)
//   response = header (status, model version, WDL, move count) + one prior per requested index,
//              in the same order (a softmax over the legal moves: they sum to 1)
//
// The records are sized per game, and each game has its own channel ("eval-chess",
// "eval-connect4"): a chess request is 704 bytes (240-byte record + 218 indices), a Connect Four
// one 56 (16-byte record + 7 indices). Sharing the chess-sized channel would move 12x the bytes per
// Connect Four leaf for nothing (docs/evaluator.md has the measurement); separate names also stop
// a chess worker and a Connect Four evaluator from meeting (the segment's record size would refuse
// it anyway, with a message naming both sizes).
//
// Layouts are little-endian, trivially copyable, pinned by tests/services/evaluator/
// eval_protocol_test.cc; bump kEvalProtocolVersion on any change. Records that arrive from another
// process go through ReadEvalRequest / ReadEvalResponse, which copy them out of the ring and check
// them before anything uses them.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "core/base/check.h"
#include "core/base/status.h"
#include "core/encoding/position_record.h"
#include "core/games/chess/chess.h"
#include "core/games/connect4/connect_four.h"
#include "core/mcts/evaluator.h"
#include "services/common/game_kind.h"
#include "shm/request_channel.h"

namespace az::service {

inline constexpr std::uint32_t kEvalRequestMagic = 0x51455A41;   // "AZEQ" little-endian
inline constexpr std::uint32_t kEvalResponseMagic = 0x41455A41;  // "AZEA" little-endian
inline constexpr std::uint16_t kEvalProtocolVersion = 1;

// The most legal moves a request lists: chess 218 (the most of any reachable position; the chess
// sample has the same bound, and self-play only reaches positions from the start position), Connect
// Four 7.
template <typename G>
inline constexpr int kEvalMaxMoves = G::kMaxMoves;
template <>
inline constexpr int kEvalMaxMoves<games::Chess> = 218;

struct EvalRequestHeader {
  std::uint32_t magic = kEvalRequestMagic;       // [0]
  std::uint16_t version = kEvalProtocolVersion;  // [4]
  std::uint8_t game = 0;                         // [6] GameKind
  std::uint8_t reserved0 = 0;                    // [7]
  std::uint64_t game_id = 0;                     // [8] the worker's game, for tracing
  std::uint16_t num_moves = 0;                   // [16] legal moves listed, 1..kEvalMaxMoves
  std::uint16_t reserved1 = 0;                   // [18]
  std::uint32_t reserved2 = 0;                   // [20]
};
static_assert(sizeof(EvalRequestHeader) == 24 && alignof(EvalRequestHeader) == 8);
static_assert(std::is_trivially_copyable_v<EvalRequestHeader>);

template <games::Game G>
struct EvalRequest {
  EvalRequestHeader header;                                    // [0]
  typename G::Record record;                                   // [24]
  std::array<std::uint16_t, kEvalMaxMoves<G>> policy_indices;  // entries past num_moves are 0
};
static_assert(sizeof(EvalRequest<games::Chess>) == 704);
static_assert(offsetof(EvalRequest<games::Chess>, policy_indices) == 264);
static_assert(sizeof(EvalRequest<games::ConnectFour>) == 56);
static_assert(offsetof(EvalRequest<games::ConnectFour>, policy_indices) == 40);
static_assert(std::is_trivially_copyable_v<EvalRequest<games::Chess>> &&
              std::is_trivially_copyable_v<EvalRequest<games::ConnectFour>>);

enum class EvalStatus : std::uint8_t {
  kOk = 0,
  kInvalidRequest = 1,    // the request failed validation: the evaluator says why in its log
  kEvaluationFailed = 2,  // the network failed on the batch (e.g. out of memory)
};

struct EvalResponseHeader {
  std::uint32_t magic = kEvalResponseMagic;      // [0]
  std::uint16_t version = kEvalProtocolVersion;  // [4]
  std::uint8_t status = 0;                       // [6] EvalStatus
  std::uint8_t game = 0;                         // [7] GameKind
  std::uint64_t model_version = 0;               // [8] the weights that evaluated it
  std::array<float, 3> wdl = {};                 // [16] win, draw, loss for the side to move
  std::uint16_t num_moves = 0;                   // [28] priors listed (the request's count)
  std::uint16_t reserved = 0;                    // [30]
};
static_assert(sizeof(EvalResponseHeader) == 32 && alignof(EvalResponseHeader) == 8);
static_assert(std::is_trivially_copyable_v<EvalResponseHeader>);

template <games::Game G>
struct EvalResponse {
  EvalResponseHeader header;                   // [0]
  std::array<float, kEvalMaxMoves<G>> priors;  // [32] entries past num_moves are 0
};
static_assert(sizeof(EvalResponse<games::Chess>) == 904);
static_assert(sizeof(EvalResponse<games::ConnectFour>) == 64);
static_assert(std::is_trivially_copyable_v<EvalResponse<games::Chess>> &&
              std::is_trivially_copyable_v<EvalResponse<games::ConnectFour>>);

// --- The channel. ---

// "eval-chess" or "eval-connect4": the segment name in the run's shared-memory scope.
std::string EvalChannelName(GameKind game);

struct EvalChannelOptions {
  std::uint32_t max_workers = 16;          // worker ids 0 .. max_workers - 1
  std::uint64_t request_capacity = 4096;   // the shared request ring, a power of two
  std::uint64_t response_capacity = 1024;  // each worker's response ring, a power of two
};

template <games::Game G>
shm::ChannelSpec EvalChannelSpec(const EvalChannelOptions& options) {
  return {.request_bytes = sizeof(EvalRequest<G>),
          .response_bytes = sizeof(EvalResponse<G>),
          .max_workers = options.max_workers,
          .request_capacity = options.request_capacity,
          .response_capacity = options.response_capacity};
}

// --- Records of each game, checked on arrival. ---


// --- Writing and reading requests. ---

// Writes the request for `leaf` into `out` (exactly sizeof(EvalRequest<G>) bytes, checked), in
// place in the ring slot. The leaf must have 1..kEvalMaxMoves moves (checked: the search never
// hands out a leaf without moves, and no reachable chess position has more than 218).
template <games::Game G>
void WriteEvalRequest(const mcts::Leaf<G>& leaf, std::uint64_t game_id, std::span<std::byte> out) {
  AZ_CHECK(out.size() == sizeof(EvalRequest<G>), "eval request slot of the wrong size");
  const std::size_t n = leaf.policy_indices.size();
  AZ_CHECK(n >= 1 && n <= static_cast<std::size_t>(kEvalMaxMoves<G>),
           "leaf with no moves or more than the eval protocol lists");
  EvalRequestHeader header;
  header.game = static_cast<std::uint8_t>(GameKindOf<G>::kValue);
  header.game_id = game_id;
  header.num_moves = static_cast<std::uint16_t>(n);
  std::byte* p = out.data();
  std::memcpy(p, &header, sizeof header);
  std::memcpy(p + offsetof(EvalRequest<G>, record), leaf.record, sizeof(typename G::Record));
  std::byte* indices = p + offsetof(EvalRequest<G>, policy_indices);
  // memcpy from an empty span's null pointer is undefined even for 0 bytes (UBSan says so).
  if (n > 0) std::memcpy(indices, leaf.policy_indices.data(), n * sizeof(std::uint16_t));
  std::memset(indices + n * sizeof(std::uint16_t), 0,
              (kEvalMaxMoves<G> - n) * sizeof(std::uint16_t));
}

// Checks a request: magic (DataLoss), version, game, num_moves in 1..kEvalMaxMoves, every index
// below kPolicySize, and the record (G::ValidateRecord). InvalidArgument naming the field
// otherwise.
template <games::Game G>
Status ValidateEvalRequest(const EvalRequest<G>& request) {
  const EvalRequestHeader& h = request.header;
  if (h.magic != kEvalRequestMagic) {
    return DataLoss("eval request: bad magic " + std::to_string(h.magic));
  }
  if (h.version != kEvalProtocolVersion) {
    return InvalidArgument("eval request: protocol version " + std::to_string(h.version) +
                           ", this build speaks version " + std::to_string(kEvalProtocolVersion));
  }
  if (h.game != static_cast<std::uint8_t>(GameKindOf<G>::kValue)) {
    return InvalidArgument("eval request: game " + std::to_string(h.game) + ", this channel is " +
                           std::string(GameKindName(GameKindOf<G>::kValue)));
  }
  if (h.num_moves < 1 || h.num_moves > kEvalMaxMoves<G>) {
    return InvalidArgument("eval request: num_moves " + std::to_string(h.num_moves) +
                           " is not in 1.." + std::to_string(kEvalMaxMoves<G>));
  }
  for (int i = 0; i < h.num_moves; ++i) {
    if (request.policy_indices[i] >= G::kPolicySize) {
      return InvalidArgument("eval request: policy index " +
                             std::to_string(request.policy_indices[i]) + " is not below " +
                             std::to_string(G::kPolicySize));
    }
  }
  return G::ValidateRecord(request.record).WithContext("eval request");
}

// Copies a request out of the ring (the payload must have the request's size, checked) and
// validates it.
template <games::Game G>
Status ReadEvalRequest(std::span<const std::byte> payload, EvalRequest<G>& out) {
  AZ_CHECK(payload.size() == sizeof(EvalRequest<G>), "eval request payload of the wrong size");
  std::memcpy(&out, payload.data(), sizeof out);
  return ValidateEvalRequest(out);
}

// --- Writing and reading responses. ---

// Writes a response into `out` (sizeof(EvalResponse<G>) bytes, checked): `priors` (at most
// kEvalMaxMoves, checked) in the request's order, the WDL and the model version. For a status other
// than kOk, pass empty priors.
template <games::Game G>
void WriteEvalResponse(EvalStatus status, std::uint64_t model_version, std::span<const float> wdl,
                       std::span<const float> priors, std::span<std::byte> out) {
  AZ_CHECK(out.size() == sizeof(EvalResponse<G>), "eval response slot of the wrong size");
  AZ_CHECK(priors.size() <= static_cast<std::size_t>(kEvalMaxMoves<G>), "too many priors");
  AZ_CHECK(wdl.size() == 3 || wdl.empty(), "WDL has three entries");
  EvalResponseHeader header;
  header.status = static_cast<std::uint8_t>(status);
  header.game = static_cast<std::uint8_t>(GameKindOf<G>::kValue);
  header.model_version = model_version;
  if (!wdl.empty()) header.wdl = {wdl[0], wdl[1], wdl[2]};
  header.num_moves = static_cast<std::uint16_t>(priors.size());
  std::byte* p = out.data();
  std::memcpy(p, &header, sizeof header);
  std::byte* dst = p + offsetof(EvalResponse<G>, priors);
  if (!priors.empty()) std::memcpy(dst, priors.data(), priors.size() * sizeof(float));
  std::memset(dst + priors.size() * sizeof(float), 0,
              (kEvalMaxMoves<G> - priors.size()) * sizeof(float));
}

// Reads a response's header (the payload must have the response's size, checked) and checks it:
// magic (DataLoss), version, game, and for kOk that it lists `expected_moves` priors.
// InvalidArgument otherwise. The priors stay in the payload: CopyPriors takes them.
template <games::Game G>
Status ReadEvalResponseHeader(std::span<const std::byte> payload, int expected_moves,
                              EvalResponseHeader& out) {
  AZ_CHECK(payload.size() == sizeof(EvalResponse<G>), "eval response payload of the wrong size");
  std::memcpy(&out, payload.data(), sizeof out);
  if (out.magic != kEvalResponseMagic) {
    return DataLoss("eval response: bad magic " + std::to_string(out.magic));
  }
  if (out.version != kEvalProtocolVersion) {
    return InvalidArgument("eval response: protocol version " + std::to_string(out.version) +
                           ", this build speaks version " + std::to_string(kEvalProtocolVersion));
  }
  if (out.game != static_cast<std::uint8_t>(GameKindOf<G>::kValue)) {
    return InvalidArgument("eval response: game " + std::to_string(out.game));
  }
  // Whatever the caller expects: more priors than a response holds is never a valid answer
  // (found by tests/fuzz/eval_wire_fuzz.cc).
  if (out.num_moves > kEvalMaxMoves<G> || expected_moves > kEvalMaxMoves<G>) {
    return InvalidArgument("eval response: " + std::to_string(out.num_moves) + " priors, at most " +
                           std::to_string(kEvalMaxMoves<G>) + " fit");
  }
  if (out.status == static_cast<std::uint8_t>(EvalStatus::kOk) && out.num_moves != expected_moves) {
    return InvalidArgument("eval response: " + std::to_string(out.num_moves) + " priors for " +
                           std::to_string(expected_moves) + " moves");
  }
  return Status::Ok();
}

// Copies the response's priors into `priors` (its size is the count checked by
// ReadEvalResponseHeader).
template <games::Game G>
void CopyPriors(std::span<const std::byte> payload, std::span<float> priors) {
  AZ_CHECK(payload.size() == sizeof(EvalResponse<G>) &&
               priors.size() <= static_cast<std::size_t>(kEvalMaxMoves<G>),
           "eval response payload of the wrong size");
  if (priors.empty()) return;
  std::memcpy(priors.data(), payload.data() + offsetof(EvalResponse<G>, priors),
              priors.size() * sizeof(float));
}

}  // namespace az::service
