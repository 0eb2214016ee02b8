#include "shm/request_channel.h"

#include <atomic>
#include <cstring>
#include <utility>

namespace az::shm {
namespace {

template <typename T>
std::atomic_ref<T> Atomic(T& value) {
  return std::atomic_ref<T>(value);
}

std::uint64_t RoundUp(std::uint64_t value, std::uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

RingSpec RequestRingSpec(const ChannelSpec& spec) {
  return {static_cast<std::uint32_t>(sizeof(Envelope) + spec.request_bytes), spec.request_capacity};
}
RingSpec ResponseRingSpec(const ChannelSpec& spec) {
  return {static_cast<std::uint32_t>(sizeof(Envelope) + spec.response_bytes),
          spec.response_capacity};
}

// Offsets of everything in the payload, from the spec alone.
// Reads the envelope at the front of a ring record and hands it and the payload behind it to
// `visit_if_current`, which says whether the record was current (stale ones are consumed but not
// counted); counts the current ones in `current`.
template <typename VisitIfCurrent>
auto EnvelopeVisitor(VisitIfCurrent& visit_if_current, std::size_t& current) {
  return [&](std::span<const std::byte> record, std::uint64_t) {
    Envelope envelope;
    std::memcpy(&envelope, record.data(), sizeof envelope);
    if (visit_if_current(envelope, record.subspan(sizeof(Envelope)))) ++current;
  };
}

// Takes up to `max` current records without waiting. Stale records do not count toward `max`:
// keeps taking until enough or the ring is empty.
template <typename VisitIfCurrent>
std::size_t TryTakeCurrent(Ring& ring, std::size_t max, VisitIfCurrent visit_if_current) {
  std::size_t taken = 0;
  while (taken < max) {
    std::size_t current = 0;
    const std::size_t consumed =
        ring.TryConsume(max - taken, EnvelopeVisitor(visit_if_current, current));
    taken += current;
    if (consumed == 0) break;
  }
  return taken;
}

// Waits up to `timeout` for a current record (the ring's error when none comes), then takes up to
// max - 1 more without waiting.
template <typename VisitIfCurrent>
Result<std::size_t> TakeCurrent(Ring& ring, std::size_t max, std::chrono::nanoseconds timeout,
                                VisitIfCurrent visit_if_current) {
  AZ_CHECK(max >= 1);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::size_t current = 0;
    const auto remaining = std::max<std::chrono::nanoseconds>(
        std::chrono::nanoseconds(0), deadline - std::chrono::steady_clock::now());
    Result<std::size_t> consumed =
        ring.Consume(1, remaining, EnvelopeVisitor(visit_if_current, current));
    if (!consumed.ok()) return consumed.status();
    if (current > 0) return 1 + (max > 1 ? TryTakeCurrent(ring, max - 1, visit_if_current) : 0);
  }
}

ChannelHeader Plan(const ChannelSpec& spec) {
  ChannelHeader h{};
  h.magic = kChannelMagic;
  h.version = kChannelLayoutVersion;
  h.max_workers = spec.max_workers;
  h.request_bytes = spec.request_bytes;
  h.response_bytes = spec.response_bytes;
  h.request_capacity = spec.request_capacity;
  h.response_capacity = spec.response_capacity;
  h.workers_offset = RoundUp(sizeof(ChannelHeader), kHotStride);
  h.request_ring_offset =
      RoundUp(h.workers_offset + spec.max_workers * sizeof(WorkerSlot), kHotStride);
  h.response_rings_offset =
      RoundUp(h.request_ring_offset + Ring::BytesFor(RequestRingSpec(spec)), kHotStride);
  h.response_ring_stride = RoundUp(Ring::BytesFor(ResponseRingSpec(spec)), kHotStride);
  h.total_bytes = h.response_rings_offset + spec.max_workers * h.response_ring_stride;
  return h;
}

void Format(std::span<std::byte> payload, const ChannelSpec& spec) {
  const ChannelHeader plan = Plan(spec);
  AZ_CHECK(payload.size() >= plan.total_bytes);
  Ring::Format(payload.subspan(plan.request_ring_offset), RequestRingSpec(spec));
  for (std::uint32_t w = 0; w < spec.max_workers; ++w) {
    Ring::Format(payload.subspan(plan.response_rings_offset + w * plan.response_ring_stride),
                 ResponseRingSpec(spec));
  }
  ChannelHeader* header = reinterpret_cast<ChannelHeader*>(payload.data());
  *header = plan;
  header->magic = 0;
  Atomic(header->magic).store(kChannelMagic, std::memory_order_release);
}

SegmentSpec ChannelSegmentSpec(const ChannelSpec& spec) {
  return {kChannelLayoutKind, kChannelLayoutVersion, spec.request_bytes, spec.request_capacity,
          Plan(spec).total_bytes};
}

Status CheckChannelHeader(const Segment& segment, const ChannelHeader& h) {
  const std::string where = "channel " + segment.location();
  if (Atomic(const_cast<std::uint64_t&>(h.magic)).load(std::memory_order_acquire) !=
      kChannelMagic) {
    return FailedPrecondition(where + ": no channel magic");
  }
  if (h.version != kChannelLayoutVersion) {
    return FailedPrecondition(where + ": channel layout version is " + std::to_string(h.version) +
                              " but this program expects " + std::to_string(kChannelLayoutVersion));
  }
  const ChannelSpec spec{h.request_bytes, h.response_bytes, h.max_workers, h.request_capacity,
                         h.response_capacity};
  if (!ValidateChannelSpec(spec).ok()) return DataLoss(where + ": header is out of range");
  const ChannelHeader plan = Plan(spec);
  // The planned fields only: servers_lost and servers change while the channel runs.
  if (std::memcmp(&plan, &h, offsetof(ChannelHeader, servers_lost)) != 0 ||
      plan.total_bytes > segment.payload().size()) {
    return DataLoss(where + ": header offsets are inconsistent");
  }
  return Status::Ok();
}

Status SizeMismatch(const Segment& segment, const char* what, std::uint32_t found,
                    std::uint32_t expected) {
  return FailedPrecondition("channel " + segment.location() + ": " + what + " is " +
                            std::to_string(found) + " bytes but this program expects " +
                            std::to_string(expected) + " bytes");
}

struct Counter {
  std::atomic<std::uint64_t> value{0};
  void Add(std::uint64_t n) {
    value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t Get() const { return value.load(std::memory_order_relaxed); }
};

}  // namespace

Status ValidateChannelSpec(const ChannelSpec& spec) {
  if (spec.max_workers == 0 || spec.max_workers > kMaxChannelWorkers) {
    return InvalidArgument("channel max_workers " + std::to_string(spec.max_workers) +
                           " is outside 1.." + std::to_string(kMaxChannelWorkers));
  }
  if (spec.request_bytes > kMaxRecordBytes - sizeof(Envelope) ||
      spec.response_bytes > kMaxRecordBytes - sizeof(Envelope)) {
    return InvalidArgument("channel request or response size is too large");
  }
  AZ_RETURN_IF_ERROR(ValidateRingSpec(RequestRingSpec(spec)).WithContext("request ring"));
  AZ_RETURN_IF_ERROR(ValidateRingSpec(ResponseRingSpec(spec)).WithContext("response ring"));
  return Status::Ok();
}

// --- Server ------------------------------------------------------------------------------------

struct RequestServer::Counters {
  Counter taken, stale_requests, invalid_requests, responses, stale_responses, response_timeouts;
};

RequestServer::RequestServer(RequestServer&&) noexcept = default;
RequestServer& RequestServer::operator=(RequestServer&&) noexcept = default;
RequestServer::~RequestServer() = default;

Result<RequestServer> RequestServer::Create(const Scope& scope, std::string_view name,
                                            const ChannelSpec& spec, const RingOptions& ring,
                                            const CreateOptions& options) {
  AZ_RETURN_IF_ERROR(ValidateChannelSpec(spec));
  AZ_ASSIGN_OR_RETURN(Segment segment,
                      Segment::Create(
                          scope, name, ChannelSegmentSpec(spec),
                          [&](std::span<std::byte> p) { Format(p, spec); }, options));
  return Attach(std::move(segment), ring);
}

Result<RequestServer> RequestServer::Open(const Scope& scope, std::string_view name,
                                          std::uint32_t request_bytes, std::uint32_t response_bytes,
                                          const RingOptions& ring, const OpenOptions& options) {
  const SegmentExpectation expected{kChannelLayoutKind, kChannelLayoutVersion, request_bytes, 0};
  AZ_ASSIGN_OR_RETURN(Segment segment, Segment::Open(scope, name, expected, options));
  const auto* header = reinterpret_cast<const ChannelHeader*>(segment.payload().data());
  if (header->response_bytes != response_bytes) {
    return SizeMismatch(segment, "response size", header->response_bytes, response_bytes);
  }
  return Attach(std::move(segment), ring);
}

Result<RequestServer> RequestServer::OpenOrCreate(const Scope& scope, std::string_view name,
                                                  const ChannelSpec& spec, const RingOptions& ring,
                                                  const CreateOptions& options) {
  AZ_RETURN_IF_ERROR(ValidateChannelSpec(spec));
  AZ_ASSIGN_OR_RETURN(Segment segment,
                      Segment::OpenOrCreate(
                          scope, name, ChannelSegmentSpec(spec),
                          [&](std::span<std::byte> p) { Format(p, spec); }, options));
  const auto* header = reinterpret_cast<const ChannelHeader*>(segment.payload().data());
  if (header->response_bytes != spec.response_bytes) {
    return SizeMismatch(segment, "response size", header->response_bytes, spec.response_bytes);
  }
  if (header->max_workers != spec.max_workers) {
    return FailedPrecondition(
        "channel " + segment.location() + " has " + std::to_string(header->max_workers) +
        " worker slots but this program expects " + std::to_string(spec.max_workers));
  }
  return Attach(std::move(segment), ring);
}

Result<RequestServer> RequestServer::Attach(Segment segment, const RingOptions& ring) {
  auto* header = reinterpret_cast<ChannelHeader*>(segment.payload().data());
  AZ_RETURN_IF_ERROR(CheckChannelHeader(segment, *header));
  RequestServer server;
  server.segment_ = std::make_shared<const Segment>(std::move(segment));
  server.header_ = header;
  server.workers_ =
      reinterpret_cast<WorkerSlot*>(server.segment_->payload().data() + header->workers_offset);
  server.spec_ = {header->request_bytes, header->response_bytes, header->max_workers,
                  header->request_capacity, header->response_capacity};
  AZ_ASSIGN_OR_RETURN(server.requests_,
                      Ring::Attach(server.segment_, header->request_ring_offset, ring));
  server.responses_.reserve(header->max_workers);
  for (std::uint32_t w = 0; w < header->max_workers; ++w) {
    AZ_ASSIGN_OR_RETURN(
        Ring response,
        Ring::Attach(server.segment_,
                     header->response_rings_offset + w * header->response_ring_stride, ring));
    server.responses_.push_back(std::move(response));
  }
  server.counters_ = std::make_unique<Counters>();
  // Watched: the first free entry, or one a dead server left (which counts as lost).
  const std::uint64_t self = Self().Packed();
  for (int i = 0; i < kMaxWatchedServers && server.watch_.index < 0; ++i) {
    std::uint64_t held = Atomic(header->servers[i]).load(std::memory_order_acquire);
    const bool dead = held != 0 && !IsAlive(ProcessIdentity::Unpack(held));
    if (held != 0 && !dead) continue;
    if (Atomic(header->servers[i]).compare_exchange_strong(held, self)) {
      if (dead) Atomic(header->servers_lost).fetch_add(1, std::memory_order_acq_rel);
      server.watch_.segment = server.segment_;
      server.watch_.header = header;
      server.watch_.index = i;
    }
  }
  return server;
}

RequestServer::Watch::Watch(Watch&& other) noexcept
    : segment(std::move(other.segment)),
      header(std::exchange(other.header, nullptr)),
      index(std::exchange(other.index, -1)) {}

RequestServer::Watch& RequestServer::Watch::operator=(Watch&& other) noexcept {
  if (this != &other) {
    Release();
    segment = std::move(other.segment);
    header = std::exchange(other.header, nullptr);
    index = std::exchange(other.index, -1);
  }
  return *this;
}

RequestServer::Watch::~Watch() { Release(); }

void RequestServer::Watch::Release() {
  if (header == nullptr || index < 0) return;
  // Only our own entry (a fork's child holds a copy of the handle but not the entry).
  std::uint64_t expected = Self().Packed();
  if (Atomic(header->servers[index]).compare_exchange_strong(expected, 0)) {
    Atomic(header->servers_lost).fetch_add(1, std::memory_order_acq_rel);
  }
  header = nullptr;
  index = -1;
  segment.reset();
}

bool RequestServer::Current(const Envelope& envelope) {
  if (envelope.worker_id >= spec_.max_workers) {
    counters_->invalid_requests.Add(1);
    return false;
  }
  const std::uint32_t current =
      Atomic(workers_[envelope.worker_id].generation).load(std::memory_order_acquire);
  if (envelope.generation != current) {
    counters_->stale_requests.Add(1);
    return false;
  }
  return true;
}

bool RequestServer::VisitIfCurrent(const Envelope& envelope, std::span<const std::byte> payload,
                                   RequestVisitor visit) {
  if (!Current(envelope)) return false;
  visit(envelope, payload);
  return true;
}

std::size_t RequestServer::TryTakeRequests(std::size_t max_requests, RequestVisitor visit) {
  const std::size_t taken = TryTakeCurrent(
      *requests_, max_requests, [&](const Envelope& envelope, std::span<const std::byte> payload) {
        return VisitIfCurrent(envelope, payload, visit);
      });
  counters_->taken.Add(taken);
  return taken;
}

Result<std::size_t> RequestServer::TakeRequests(std::size_t max_requests,
                                                std::chrono::nanoseconds timeout,
                                                RequestVisitor visit) {
  AZ_ASSIGN_OR_RETURN(
      const std::size_t taken,
      TakeCurrent(*requests_, max_requests, timeout,
                  [&](const Envelope& envelope, std::span<const std::byte> payload) {
                    return VisitIfCurrent(envelope, payload, visit);
                  }));
  counters_->taken.Add(taken);
  return taken;
}

Status RequestServer::Respond(const Envelope& to, std::span<const std::byte> payload,
                              std::chrono::nanoseconds timeout) {
  AZ_CHECK(payload.size() == spec_.response_bytes, "response of " + std::to_string(payload.size()) +
                                                       " bytes, channel takes " +
                                                       std::to_string(spec_.response_bytes));
  return RespondWith(to, timeout, [&](std::span<std::byte> out) {
    std::memcpy(out.data(), payload.data(), payload.size());
  });
}

Status RequestServer::RespondWith(const Envelope& to, std::chrono::nanoseconds timeout,
                                  Filler fill) {
  if (to.worker_id >= spec_.max_workers) {
    return InvalidArgument("response to worker " + std::to_string(to.worker_id) +
                           " of a channel with " + std::to_string(spec_.max_workers) + " workers");
  }
  if (Atomic(workers_[to.worker_id].generation).load(std::memory_order_acquire) != to.generation) {
    counters_->stale_responses.Add(1);
    return Status::Ok();
  }
  Status status = responses_[to.worker_id].PushWith(timeout, [&](std::span<std::byte> record) {
    std::memcpy(record.data(), &to, sizeof to);
    fill(record.subspan(sizeof(Envelope)));
  });
  if (status.ok()) {
    counters_->responses.Add(1);
  } else if (status.code() == StatusCode::kDeadlineExceeded) {
    counters_->response_timeouts.Add(1);
    return status.WithContext("response ring of worker " + std::to_string(to.worker_id));
  }
  return status;
}

std::size_t RequestServer::ReclaimDead() {
  std::size_t reclaimed = requests_->ReclaimDead();
  for (Ring& ring : responses_) reclaimed += ring.ReclaimDead();
  return reclaimed;
}

ChannelServerStats RequestServer::Stats() const {
  ChannelServerStats stats;
  stats.requests = requests_->Stats();
  stats.requests_taken = counters_->taken.Get();
  stats.stale_requests_dropped = counters_->stale_requests.Get();
  stats.invalid_requests_dropped = counters_->invalid_requests.Get();
  stats.responses_sent = counters_->responses.Get();
  stats.stale_responses_dropped = counters_->stale_responses.Get();
  stats.response_timeouts = counters_->response_timeouts.Get();
  return stats;
}

// --- Client ------------------------------------------------------------------------------------

struct RequestClient::Counters {
  Counter submitted, received, stale;
};

RequestClient::RequestClient(RequestClient&& other) noexcept { *this = std::move(other); }

RequestClient& RequestClient::operator=(RequestClient&& other) noexcept {
  if (this == &other) return *this;
  ReleaseWorkerId();
  // Members in declaration order; the moved-from client no longer holds the worker id.
  segment_ = std::move(other.segment_);
  header_ = other.header_;
  slot_ = std::exchange(other.slot_, nullptr);
  owner_ = other.owner_;
  worker_id_ = other.worker_id_;
  generation_ = other.generation_;
  request_bytes_ = other.request_bytes_;
  response_bytes_ = other.response_bytes_;
  requests_ = std::move(other.requests_);
  responses_ = std::move(other.responses_);
  counters_ = std::move(other.counters_);
  return *this;
}

RequestClient::~RequestClient() { ReleaseWorkerId(); }

void RequestClient::ReleaseWorkerId() {
  if (slot_ == nullptr || !(Self() == owner_)) return;
  std::uint64_t expected = owner_.Packed();
  Atomic(slot_->owner).compare_exchange_strong(expected, 0);
  slot_ = nullptr;
}

Result<RequestClient> RequestClient::Open(const Scope& scope, std::string_view name,
                                          const ClientOptions& options) {
  const SegmentExpectation expected{kChannelLayoutKind, kChannelLayoutVersion,
                                    options.request_bytes, 0};
  AZ_ASSIGN_OR_RETURN(Segment segment, Segment::Open(scope, name, expected, options.open));
  auto* header = reinterpret_cast<ChannelHeader*>(segment.payload().data());
  AZ_RETURN_IF_ERROR(CheckChannelHeader(segment, *header));
  if (header->response_bytes != options.response_bytes) {
    return SizeMismatch(segment, "response size", header->response_bytes, options.response_bytes);
  }
  if (options.worker_id >= header->max_workers) {
    return InvalidArgument("worker id " + std::to_string(options.worker_id) + " is outside 0.." +
                           std::to_string(header->max_workers - 1) + " of channel " +
                           segment.location());
  }

  RequestClient client;
  client.segment_ = std::make_shared<const Segment>(std::move(segment));
  auto* workers =
      reinterpret_cast<WorkerSlot*>(client.segment_->payload().data() + header->workers_offset);
  WorkerSlot* slot = &workers[options.worker_id];
  const ProcessIdentity self = Self();
  std::uint64_t owner = Atomic(slot->owner).load(std::memory_order_acquire);
  for (;;) {
    if (owner != 0 && IsAlive(ProcessIdentity::Unpack(owner))) {
      return FailedPrecondition("worker id " + std::to_string(options.worker_id) + " of channel " +
                                client.segment_->location() + " is in use by pid " +
                                std::to_string(ProcessIdentity::Unpack(owner).pid));
    }
    if (Atomic(slot->owner).compare_exchange_strong(owner, self.Packed())) break;
  }
  client.header_ = header;
  client.slot_ = slot;
  client.owner_ = self;
  client.worker_id_ = options.worker_id;
  // A new generation: whatever a previous holder of this id left in flight is now stale.
  client.generation_ = Atomic(slot->generation).fetch_add(1, std::memory_order_acq_rel) + 1;
  client.request_bytes_ = header->request_bytes;
  client.response_bytes_ = header->response_bytes;
  AZ_ASSIGN_OR_RETURN(client.requests_,
                      Ring::Attach(client.segment_, header->request_ring_offset, options.ring));
  AZ_ASSIGN_OR_RETURN(
      client.responses_,
      Ring::Attach(client.segment_,
                   header->response_rings_offset + options.worker_id * header->response_ring_stride,
                   options.ring));
  client.counters_ = std::make_unique<Counters>();
  return client;
}

std::uint64_t RequestClient::ServersLost() {
  for (int i = 0; i < kMaxWatchedServers; ++i) {
    std::uint64_t held = Atomic(header_->servers[i]).load(std::memory_order_acquire);
    if (held == 0 || IsAlive(ProcessIdentity::Unpack(held))) continue;
    // Whoever clears the dead entry counts it, once.
    if (Atomic(header_->servers[i]).compare_exchange_strong(held, 0)) {
      Atomic(header_->servers_lost).fetch_add(1, std::memory_order_acq_rel);
    }
  }
  return Atomic(header_->servers_lost).load(std::memory_order_acquire);
}

std::uint32_t RequestClient::Reset() {
  generation_ = Atomic(slot_->generation).fetch_add(1, std::memory_order_acq_rel) + 1;
  return generation_;
}

Status RequestClient::Submit(std::uint64_t request_id, std::span<const std::byte> payload,
                             std::chrono::nanoseconds timeout) {
  AZ_CHECK(payload.size() == request_bytes_, "request of " + std::to_string(payload.size()) +
                                                 " bytes, channel takes " +
                                                 std::to_string(request_bytes_));
  return SubmitWith(request_id, timeout, [&](std::span<std::byte> out) {
    std::memcpy(out.data(), payload.data(), payload.size());
  });
}

Status RequestClient::SubmitWith(std::uint64_t request_id, std::chrono::nanoseconds timeout,
                                 Filler fill) {
  const Envelope envelope{worker_id_, generation_, request_id};
  Status status = requests_->PushWith(timeout, [&](std::span<std::byte> record) {
    std::memcpy(record.data(), &envelope, sizeof envelope);
    fill(record.subspan(sizeof(Envelope)));
  });
  if (status.ok()) counters_->submitted.Add(1);
  return status;
}

bool RequestClient::VisitIfCurrent(const Envelope& envelope, std::span<const std::byte> payload,
                                   ResponseVisitor visit) {
  if (envelope.generation != generation_ || envelope.worker_id != worker_id_) {
    counters_->stale.Add(1);
    return false;
  }
  visit(envelope.request_id, payload);
  return true;
}

std::size_t RequestClient::TryReceive(std::size_t max_responses, ResponseVisitor visit) {
  const std::size_t received =
      TryTakeCurrent(*responses_, max_responses,
                     [&](const Envelope& envelope, std::span<const std::byte> payload) {
                       return VisitIfCurrent(envelope, payload, visit);
                     });
  counters_->received.Add(received);
  return received;
}

Result<std::size_t> RequestClient::Receive(std::size_t max_responses,
                                           std::chrono::nanoseconds timeout,
                                           ResponseVisitor visit) {
  AZ_ASSIGN_OR_RETURN(
      const std::size_t received,
      TakeCurrent(*responses_, max_responses, timeout,
                  [&](const Envelope& envelope, std::span<const std::byte> payload) {
                    return VisitIfCurrent(envelope, payload, visit);
                  }));
  counters_->received.Add(received);
  return received;
}

ChannelClientStats RequestClient::Stats() const {
  ChannelClientStats stats;
  stats.requests = requests_->Stats();
  stats.responses = responses_->Stats();
  stats.generation = generation_;
  stats.requests_submitted = counters_->submitted.Get();
  stats.responses_received = counters_->received.Get();
  stats.stale_responses_dropped = counters_->stale.Get();
  return stats;
}

}  // namespace az::shm
