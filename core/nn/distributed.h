#pragma once

// A data-parallel process group for the learner, on LibTorch's own distributed backend (c10d):
// rank 0 runs a TCPStore server at the rendezvous address, every rank joins a ProcessGroupGloo over
// TCP (docs/scaling.md, "A data-parallel learner"). NCCL is not used yet: with CUDA, the trainer
// moves its one flattened tensor per step through host memory. Torch-free: the c10d objects live
// in distributed.cc; core/nn/torch_distributed.h has the tensor-level calls the trainer uses.
//
// Failure model: every collective has a deadline (ProcessGroupOptions::timeout). A rank that dies
// is noticed at once (its sockets close) or, if it hangs, when the deadline runs out; the call
// returns UNAVAILABLE and the group is unusable from then on: every later call returns UNAVAILABLE
// at once. The way back is to leave and rejoin: the learner exits non-zero, its supervisor
// restarts it, and the restarted ranks meet again at the rendezvous. Each rendezvous runs under a
// fresh generation (rank 0 sets a new one in its store), so keys of an earlier group are never
// read by a later one. Not thread-safe: one thread drives a group.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/base/status.h"

namespace az::nn {

struct ProcessGroupOptions {
  int world_size = 1;  // >= 2 for a group (a single learner creates none)
  int rank = 0;        // [0, world_size)
  // Rank 0's store: rank 0 listens on `port` (every interface) and connects to host:port like the
  // others, so `host` must name rank 0's machine for every rank.
  std::string host = "127.0.0.1";
  int port = 29500;  // [1, 65535]
  // The deadline of every collective and store call once the group stands.
  std::chrono::milliseconds timeout{10000};
  // How long Create waits for rank 0's store and for every rank to join.
  std::chrono::milliseconds rendezvous_timeout{60000};
  // The address this rank's Gloo transport binds to and announces to the others. Empty: 127.0.0.1
  // when `host` is a loopback address, else the interface $GLOO_SOCKET_IFNAME names when set, else
  // the address this machine's hostname resolves to.
  std::string bind_address;

  // INVALID_ARGUMENT naming the first bad field.
  Status Validate() const;
};

// "tcp://HOST:PORT" -> host and port (IPv6 hosts in brackets: tcp://[::1]:29500). INVALID_ARGUMENT
// saying what is wrong otherwise.
struct RendezvousAddress {
  std::string host;
  int port = 0;
};
Result<RendezvousAddress> ParseRendezvous(std::string_view text);

struct ProcessGroupImpl;  // distributed.cc

class ProcessGroup {
 public:
  // Joins the group: connects to (rank 0: starts) the store, reads (rank 0: writes) the
  // generation, checks that every rank agrees on the world size and that no rank joins twice,
  // waits for all ranks and connects Gloo. Blocks up to rendezvous_timeout (plus `timeout` for the
  // connections). INVALID_ARGUMENT for bad options or a world size other ranks disagree with;
  // ALREADY_EXISTS when another process joined with this rank; DEADLINE_EXCEEDED when the store or
  // some rank is not there in time; UNAVAILABLE for other network errors (the port taken, ...).
  static Result<std::unique_ptr<ProcessGroup>> Create(const ProcessGroupOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int world_size() const;
  std::string_view generation() const;  // this rendezvous's generation key
  const ProcessGroupOptions& options() const;
  // False once a collective failed: the group is then of no further use.
  bool healthy() const;

  // Sums `values` element-wise over the ranks, in place (every rank passes the same length).
  // Blocks up to `timeout`; UNAVAILABLE when a rank died, timed out, or the group failed earlier.
  Status AllReduceSum(std::span<double> values);
  // Rank 0's `bytes` on every rank (the others' argument is ignored). Errors as AllReduceSum.
  Result<std::string> BroadcastFromRoot(const std::string& bytes);

  ProcessGroupImpl& impl() { return *impl_; }  // for core/nn/torch_distributed.h

 private:
  explicit ProcessGroup(std::unique_ptr<ProcessGroupImpl> impl);
  std::unique_ptr<ProcessGroupImpl> impl_;
};

}  // namespace az::nn
