#pragma once

// The shared-memory layout of a request channel: one request ring that all workers submit to and
// servers (evaluators) drain, and one response ring per worker id.
//
//   payload offset 0          ChannelHeader (256 bytes)
//   workers_offset            WorkerSlot[max_workers] (64 bytes each)
//   request_ring_offset       ring of Envelope + request_bytes records
//   response_rings_offset     max_workers rings of Envelope + response_bytes records,
//                             response_ring_stride bytes apart
//
// Changing anything here means bumping kChannelLayoutVersion; tests/shm/layout_test.cc pins it.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "shm/segment_layout.h"

namespace az::shm {

inline constexpr std::uint64_t kChannelMagic = 0x314e414843485a41;  // "AZHCHAN1" little-endian
inline constexpr std::uint32_t kChannelLayoutVersion = 2;
inline constexpr std::uint32_t kChannelLayoutKind = FourCc('R', 'Q', 'C', 'H');
inline constexpr std::uint32_t kMaxChannelWorkers = 4096;
// Servers (evaluators) whose identity the header records, so that workers can tell at once when
// one of them is gone; a server beyond these serves but is not watched.
inline constexpr int kMaxWatchedServers = 8;

// Prefixes every request and every response record.
struct Envelope {
  std::uint32_t worker_id;   // which response ring the answer goes to
  std::uint32_t generation;  // the worker's generation when it submitted
  std::uint64_t request_id;  // chosen by the worker; echoed in the response
};
static_assert(std::is_trivially_copyable_v<Envelope>);
static_assert(sizeof(Envelope) == 16);
static_assert(offsetof(Envelope, generation) == 4);
static_assert(offsetof(Envelope, request_id) == 8);

struct ChannelHeader {
  std::uint64_t magic;  // kChannelMagic
  std::uint32_t version;
  std::uint32_t max_workers;
  std::uint32_t request_bytes;   // payload bytes after the Envelope
  std::uint32_t response_bytes;  // payload bytes after the Envelope
  std::uint64_t request_capacity;
  std::uint64_t response_capacity;
  std::uint64_t workers_offset;
  std::uint64_t request_ring_offset;
  std::uint64_t response_rings_offset;
  std::uint64_t response_ring_stride;
  std::uint64_t total_bytes;
  // Bumped (atomically) whenever a watched server leaves or is found dead: requests it had taken
  // may never be answered. Workers compare it with what they saw when they submitted.
  std::uint64_t servers_lost;
  // ProcessIdentity::Packed() of the attached servers; 0: a free entry.
  std::uint64_t servers[kMaxWatchedServers];
  std::uint8_t reserved[256 - 152];
};
static_assert(std::is_trivially_copyable_v<ChannelHeader>);
static_assert(sizeof(ChannelHeader) == 256);
static_assert(offsetof(ChannelHeader, request_capacity) == 24);
static_assert(offsetof(ChannelHeader, total_bytes) == 72);
static_assert(offsetof(ChannelHeader, servers_lost) == 80);
static_assert(offsetof(ChannelHeader, servers) == 88);

struct WorkerSlot {
  std::uint64_t owner;       // packed identity of the attached client; 0 = none
  std::uint32_t generation;  // the worker's current generation (bumped on attach and Reset)
  std::uint32_t reserved0;
  std::uint64_t reserved[6];
};
static_assert(std::is_trivially_copyable_v<WorkerSlot>);
static_assert(sizeof(WorkerSlot) == 64);
static_assert(offsetof(WorkerSlot, generation) == 8);

}  // namespace az::shm
