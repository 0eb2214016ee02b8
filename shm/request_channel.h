#pragma once

// Request/response over shared memory, for self-play workers and the evaluator:
//
//   worker (RequestClient, one per worker id)          evaluator (RequestServer)
//     Submit(request_id, position)  ── request ring ──►  TakeRequests(up to N): a batch
//     Receive(...) ◄── that worker's response ring ──  Respond(envelope, priors + WDL)
//
// Every request carries (worker id, generation, request id) and its response echoes them. A
// worker's generation changes when it attaches and whenever it calls Reset() (a new search, or
// giving up on answers after a timeout), so an answer meant for an earlier generation (after a
// reset, or for a previous incarnation of the worker, or from an evaluator that restarted and
// answered old requests) is recognised and dropped, and counted. Servers also drop requests whose
// worker has moved on before spending work on them.
//
// Crash behaviour follows the rings (shm/ring.h): nothing wedges when any process is killed. A
// request taken by a server that dies before answering is lost with it. Servers record their
// identity (pid and start time) in the channel's header and clear it when they leave, so a worker
// that waits for answers can ask ServersLost() whether a server left or died since it submitted,
// then call Reset() and submit again at once; the Receive timeout stays as the last resort (a
// server that hangs, or one beyond the kMaxWatchedServers watched). Size each response ring to at least the number
// of requests a worker keeps in flight, or servers block in Respond.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "shm/function_ref.h"
#include "shm/request_channel_layout.h"
#include "shm/ring.h"
#include "shm/scope.h"
#include "shm/segment.h"

namespace az::shm {

struct ChannelSpec {
  std::uint32_t request_bytes = 0;      // payload bytes per request (the Envelope comes on top)
  std::uint32_t response_bytes = 0;     // payload bytes per response
  std::uint32_t max_workers = 0;        // worker ids are 0 .. max_workers - 1
  std::uint64_t request_capacity = 0;   // a power of two
  std::uint64_t response_capacity = 0;  // per worker, a power of two
};

// InvalidArgument when out of range.
Status ValidateChannelSpec(const ChannelSpec& spec);

struct ChannelServerStats {
  RingStats requests;
  std::uint64_t requests_taken = 0;            // handed to the caller
  std::uint64_t stale_requests_dropped = 0;    // the worker had moved to a newer generation
  std::uint64_t invalid_requests_dropped = 0;  // worker id out of range
  std::uint64_t responses_sent = 0;
  std::uint64_t stale_responses_dropped = 0;  // not sent: the worker had moved on
  std::uint64_t response_timeouts = 0;        // a worker's response ring stayed full
};

struct ChannelClientStats {
  RingStats requests;
  RingStats responses;
  std::uint32_t generation = 0;
  std::uint64_t requests_submitted = 0;
  std::uint64_t responses_received = 0;
  std::uint64_t stale_responses_dropped = 0;  // answers to an earlier generation
};

class RequestServer {
 public:
  using RequestVisitor =
      FunctionRef<void(const Envelope& envelope, std::span<const std::byte> payload)>;
  using Filler = FunctionRef<void(std::span<std::byte> payload)>;

  // Creates the channel's segment. Errors as Segment::Create, InvalidArgument for a bad spec.
  static Result<RequestServer> Create(const Scope& scope, std::string_view name,
                                      const ChannelSpec& spec, const RingOptions& ring = {},
                                      const CreateOptions& options = {});
  // Opens an existing channel (a restarted evaluator, or a second one). FailedPrecondition when
  // its request or response size differs from what this program expects.
  static Result<RequestServer> Open(const Scope& scope, std::string_view name,
                                    std::uint32_t request_bytes, std::uint32_t response_bytes,
                                    const RingOptions& ring = {}, const OpenOptions& options = {});
  static Result<RequestServer> OpenOrCreate(const Scope& scope, std::string_view name,
                                            const ChannelSpec& spec, const RingOptions& ring = {},
                                            const CreateOptions& options = {});

  RequestServer(RequestServer&&) noexcept;
  RequestServer& operator=(RequestServer&&) noexcept;
  ~RequestServer();

  // Takes up to max_requests current requests, calling `visit` on each in place (stale and invalid
  // ones are dropped and counted, and do not count toward max_requests). Never blocks.
  std::size_t TryTakeRequests(std::size_t max_requests, RequestVisitor visit);
  // Blocks up to `timeout` for the first current request, then takes what else is there.
  // DeadlineExceeded when none came.
  Result<std::size_t> TakeRequests(std::size_t max_requests, std::chrono::nanoseconds timeout,
                                   RequestVisitor visit);

  // Sends a response (payload.size() == response_bytes) to the worker that sent `to`. When that
  // worker has moved to another generation, drops it and returns OK. DeadlineExceeded when the
  // worker's response ring stays full for `timeout`; InvalidArgument for a bad worker id.
  Status Respond(const Envelope& to, std::span<const std::byte> payload,
                 std::chrono::nanoseconds timeout);
  // As Respond, with `fill` writing the payload in place.
  Status RespondWith(const Envelope& to, std::chrono::nanoseconds timeout, Filler fill);

  // Reclaims slots of dead processes in the request ring and every response ring.
  std::size_t ReclaimDead();

  // Where this server's identity is recorded in the header; -1 when all kMaxWatchedServers entries
  // were held by live servers (it serves unwatched).
  int watched_index() const { return watch_.index; }

  const ChannelSpec& spec() const { return spec_; }
  ChannelServerStats Stats() const;

 private:
  struct Counters;
  RequestServer() = default;
  static Result<RequestServer> Attach(Segment segment, const RingOptions& ring);
  bool Current(const Envelope& envelope);
  // Visits a current request; false (and nothing visited) for a stale one.
  bool VisitIfCurrent(const Envelope& envelope, std::span<const std::byte> payload,
                      RequestVisitor visit);

  // This server's entry in header->servers; cleared (and servers_lost bumped) when the last handle
  // goes. Move-only, so a moved-from server releases nothing; it holds the segment so that the
  // header stays mapped until it is released, whatever order the server's members go in.
  struct Watch {
    std::shared_ptr<const Segment> segment;
    ChannelHeader* header = nullptr;
    int index = -1;
    Watch() = default;
    Watch(Watch&& other) noexcept;
    Watch& operator=(Watch&& other) noexcept;
    ~Watch();
    void Release();
  };

  std::shared_ptr<const Segment> segment_;
  ChannelHeader* header_ = nullptr;
  WorkerSlot* workers_ = nullptr;
  ChannelSpec spec_;
  Watch watch_;
  std::optional<Ring> requests_;
  std::vector<Ring> responses_;
  std::unique_ptr<Counters> counters_;
};

struct ClientOptions {
  std::uint32_t worker_id = 0;
  std::uint32_t request_bytes = 0;   // checked against the channel
  std::uint32_t response_bytes = 0;  // checked against the channel
  RingOptions ring;
  OpenOptions open;
};

class RequestClient {
 public:
  using ResponseVisitor =
      FunctionRef<void(std::uint64_t request_id, std::span<const std::byte> payload)>;
  using Filler = FunctionRef<void(std::span<std::byte> payload)>;

  // Attaches as worker `worker_id` and starts a new generation for it. Errors as Segment::Open;
  // FailedPrecondition when sizes differ or a live process already holds this worker id;
  // InvalidArgument for a worker id out of range. A dead holder's id is taken over.
  static Result<RequestClient> Open(const Scope& scope, std::string_view name,
                                    const ClientOptions& options);

  RequestClient(RequestClient&&) noexcept;
  RequestClient& operator=(RequestClient&&) noexcept;
  ~RequestClient();  // releases the worker id

  std::uint32_t worker_id() const { return worker_id_; }
  std::uint32_t generation() const { return generation_; }

  // Starts a new generation: answers to everything submitted before are dropped when they arrive.
  // Returns the new generation.
  std::uint32_t Reset();

  // Submits a request (payload.size() == request_bytes). DeadlineExceeded when the request ring
  // stays full for `timeout`.
  Status Submit(std::uint64_t request_id, std::span<const std::byte> payload,
                std::chrono::nanoseconds timeout);
  Status SubmitWith(std::uint64_t request_id, std::chrono::nanoseconds timeout, Filler fill);

  // Takes up to max_responses answers of the current generation, calling `visit` on each in place
  // (stale ones are dropped and counted). Never blocks.
  std::size_t TryReceive(std::size_t max_responses, ResponseVisitor visit);
  // Blocks up to `timeout` for the first current answer. DeadlineExceeded when none came.
  Result<std::size_t> Receive(std::size_t max_responses, std::chrono::nanoseconds timeout,
                              ResponseVisitor visit);

  ChannelClientStats Stats() const;

  // How many servers left the channel or died since it was made: a change since the worker's last
  // Submit means requests it has in flight may never be answered. Looks at each watched server's
  // liveness (a kill(2) and a read of /proc for each: a few microseconds), records the dead ones
  // as lost, and returns the count.
  std::uint64_t ServersLost();

 private:
  struct Counters;
  RequestClient() = default;
  void ReleaseWorkerId();
  // Visits an answer to this worker's current generation; false (counted as stale) otherwise.
  bool VisitIfCurrent(const Envelope& envelope, std::span<const std::byte> payload,
                      ResponseVisitor visit);

  std::shared_ptr<const Segment> segment_;
  ChannelHeader* header_ = nullptr;
  WorkerSlot* slot_ = nullptr;
  ProcessIdentity owner_;
  std::uint32_t worker_id_ = 0;
  std::uint32_t generation_ = 0;
  std::uint32_t request_bytes_ = 0;
  std::uint32_t response_bytes_ = 0;
  std::optional<Ring> requests_;
  std::optional<Ring> responses_;
  std::unique_ptr<Counters> counters_;
};

}  // namespace az::shm
