#pragma once

// A named shared-memory segment with a checked header (shm/segment_layout.h), mapped through
// Boost.Interprocess. Segments are created owner-only (mode 0600, whatever the umask) and refused
// on open when they are readable or writable by anyone else, or owned by another user.
//
//   auto scope = Scope::Prefix("az-run42");
//   auto seg = Segment::Create(*scope, "eval", spec, [](std::span<std::byte> p) { ... });
//   auto peer = Segment::Open(*scope, "eval", expectation);  // in another process
//
// A segment outlives its handles: it stays until Remove()/RemoveAll() (or remove_on_close), so that
// any process of the pipeline can restart and find it. One left by a run that died is "stale" (its
// creator is dead and no live process is attached) and Create(reclaim_stale) replaces it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "shm/function_ref.h"
#include "shm/process.h"
#include "shm/scope.h"
#include "shm/segment_layout.h"

namespace az::shm {

// What a new segment holds.
struct SegmentSpec {
  std::uint32_t layout_kind = 0;     // FourCc of the payload layout
  std::uint32_t layout_version = 0;  // version of that layout
  std::uint32_t record_bytes = 0;    // recorded in the header and checked on open
  std::uint64_t capacity = 0;        // recorded in the header and checked on open
  std::uint64_t payload_bytes = 0;   // bytes after the fixed preamble
};

// What an opener requires of an existing segment. Zero record_bytes or capacity accepts any.
struct SegmentExpectation {
  std::uint32_t layout_kind = 0;
  std::uint32_t layout_version = 0;
  std::uint32_t record_bytes = 0;
  std::uint64_t capacity = 0;
};

struct CreateOptions {
  // When a segment of this name exists and is stale, remove it and create a new one. A segment
  // that a live process still has attached is never reclaimed.
  bool reclaim_stale = false;
  // Remove the segment's name when this handle is destroyed (tests and benchmarks).
  bool remove_on_close = false;
  // A segment found without a finished header is taken as still being created for this long.
  std::chrono::milliseconds init_wait{1000};
};

struct OpenOptions {
  // How long to wait for a segment whose creator has not finished writing its header.
  std::chrono::milliseconds init_wait{1000};
  bool remove_on_close = false;
};

// What Inspect() finds.
struct SegmentInfo {
  std::string location;
  bool initialised = false;  // the creator finished writing the header
  SegmentHeader header{};    // valid when initialised
  bool creator_alive = false;
  std::vector<ProcessIdentity> attached;  // live processes that have it open
  bool stale = false;  // creator dead and nobody live attached, or never finished being created
  std::string Describe() const;
};

class Segment {
 public:
  using Initializer = FunctionRef<void(std::span<std::byte> payload)>;

  // Creates, sizes (reserving the memory, so a full /dev/shm fails here and not later with
  // SIGBUS), runs `init` on the zeroed payload, then publishes the header. Errors:
  // AlreadyExists (the name exists and is not reclaimable), ResourceExhausted (no space),
  // InvalidArgument (bad name or spec), Unavailable (other system errors).
  static Result<Segment> Create(const Scope& scope, std::string_view name, const SegmentSpec& spec,
                                Initializer init, const CreateOptions& options = {});

  // Opens and checks an existing segment. Blocks up to options.init_wait when its creator has not
  // finished. Errors: NotFound, FailedPrecondition (header, layout, record size, capacity,
  // permissions or owner do not match: the message names which), DataLoss (truncated),
  // DeadlineExceeded (header never finished), ResourceExhausted (attach table full).
  static Result<Segment> Open(const Scope& scope, std::string_view name,
                              const SegmentExpectation& expected, const OpenOptions& options = {});

  // Open() when the segment exists, else Create() (racing creators: one creates, the others open).
  static Result<Segment> OpenOrCreate(const Scope& scope, std::string_view name,
                                      const SegmentSpec& spec, Initializer init,
                                      const CreateOptions& options = {});

  // Reads the header and liveness without attaching. NotFound when absent.
  static Result<SegmentInfo> Inspect(const Scope& scope, std::string_view name,
                                     std::chrono::milliseconds init_wait = std::chrono::seconds(1));

  // Removes the name (processes that have it mapped keep their mapping). NotFound when absent.
  static Status Remove(const Scope& scope, std::string_view name);
  // Removes every segment of the scope; returns how many.
  static Result<int> RemoveAll(const Scope& scope);

  Segment(Segment&&) noexcept;
  Segment& operator=(Segment&&) noexcept;
  ~Segment();

  std::byte* base() const;
  std::span<std::byte> payload() const;
  const SegmentHeader& header() const;
  const std::string& location() const;
  // The processes attached to this segment (for rings: see Ring, which keeps its own table).
  ProcessTable& attached() const;

 private:
  struct Impl;
  explicit Segment(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace az::shm
