#include "services/ringbench/ringbench.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>
#include <thread>
#include <vector>

#include "shm/request_channel.h"
#include "shm/ring.h"

namespace az::ringbench {
namespace {

using shm::ChannelSpec;
using shm::Envelope;
using shm::RequestClient;
using shm::RequestServer;
using shm::Ring;
using shm::RingOptions;
using shm::Scope;

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kMaxProcesses = 64;

// Shared with the forked children (anonymous shared mapping).
struct Control {
  std::atomic<int> ready;
  std::atomic<int> go;
  std::atomic<int> stop;
  std::atomic<int> failed;
  std::atomic<std::uint64_t> counts[kMaxProcesses];
  std::atomic<std::uint64_t> waits[kMaxProcesses];  // blocking calls that had to wait
  // Ping-pong results, written by the client.
  std::atomic<std::uint64_t> round_trips;
  std::atomic<double> p50_us;
  std::atomic<double> p99_us;
  std::atomic<double> mean_us;
};

Control* MapControl() {
  void* memory =
      ::mmap(nullptr, sizeof(Control), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  return new (memory) Control();
}

pid_t Fork(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::fflush(stdout);
    ::_exit(body());
  }
  return pid;
}

Status WaitAll(const std::vector<pid_t>& children) {
  Status status;
  for (pid_t pid : children) {
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
      status = Internal("benchmark process " + std::to_string(pid) + " failed");
    }
  }
  return status;
}

void WaitForGo(const Control& control) {
  while (control.go.load(std::memory_order_acquire) == 0) std::this_thread::yield();
}

Result<Scope> BenchScope() { return Scope::Prefix("az-ringbench-" + std::to_string(::getpid())); }

// Copies record_bytes-sized records from one buffer to another, cycling through a working set the
// size of the ring, for `seconds`. Returns bytes per second.
double MemcpyBytesPerSecond(std::uint32_t record_bytes, std::uint64_t records, double seconds) {
  const std::size_t bytes = static_cast<std::size_t>(record_bytes) * records;
  std::vector<std::byte> source(bytes, std::byte{1});
  std::vector<std::byte> destination(bytes, std::byte{0});
  std::uint64_t copied = 0;
  std::uint64_t slot = 0;
  const Clock::time_point start = Clock::now();
  const Clock::time_point end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  Clock::time_point now = start;
  while (now < end) {
    for (int i = 0; i < 256; ++i) {
      const std::size_t offset = static_cast<std::size_t>(slot) * record_bytes;
      std::memcpy(destination.data() + offset, source.data() + offset, record_bytes);
      // Keep the compiler from dropping the copies.
      asm volatile("" : : "r"(destination.data()) : "memory");
      slot = slot + 1 == records ? 0 : slot + 1;
      ++copied;
    }
    now = Clock::now();
  }
  return static_cast<double>(copied) * record_bytes /
         std::chrono::duration<double>(now - start).count();
}

Status RunThroughput(const Options& options) {
  AZ_ASSIGN_OR_RETURN(Scope scope, BenchScope());
  const RingOptions ring_options{.spin_time = std::chrono::microseconds(options.spin_us)};
  AZ_ASSIGN_OR_RETURN(Ring ring,
                      Ring::Create(scope, "bench", {options.record_bytes, options.capacity},
                                   ring_options, {.reclaim_stale = true, .remove_on_close = true}));
  Control* control = MapControl();
  if (control == nullptr) return ResourceExhausted("cannot map the control block");
  const std::uint32_t bytes = options.record_bytes;

  std::vector<pid_t> children;
  for (int p = 0; p < options.producers; ++p) {
    children.push_back(Fork([&, p] {
      auto handle = Ring::Open(scope, "bench", bytes, ring_options);
      if (!handle.ok()) return 1;
      std::vector<std::byte> record(bytes, std::byte{0x42});
      control->ready.fetch_add(1);
      WaitForGo(*control);
      std::uint64_t pushed = 0;
      while (control->stop.load(std::memory_order_relaxed) == 0) {
        if (bytes >= 8) std::memcpy(record.data(), &pushed, 8);
        if (handle->Push(record, 50ms).ok()) ++pushed;
      }
      control->counts[p].store(pushed);
      control->waits[p].store(handle->Stats().push_waits);
      return 0;
    }));
  }
  for (int c = 0; c < options.consumers; ++c) {
    children.push_back(Fork([&, c] {
      auto handle = Ring::Open(scope, "bench", bytes, ring_options);
      if (!handle.ok()) return 1;
      std::vector<std::byte> out(static_cast<std::size_t>(bytes) * options.batch);
      control->ready.fetch_add(1);
      WaitForGo(*control);
      std::uint64_t popped = 0;
      while (control->stop.load(std::memory_order_relaxed) == 0) {
        Result<std::size_t> taken = handle->Pop(out, 50ms);
        if (taken.ok()) popped += *taken;
      }
      control->counts[options.producers + c].store(popped);
      control->waits[options.producers + c].store(handle->Stats().pop_waits);
      return 0;
    }));
  }
  const int processes = options.producers + options.consumers;
  while (control->ready.load() < processes) std::this_thread::sleep_for(1ms);
  const Clock::time_point start = Clock::now();
  control->go.store(1, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
  control->stop.store(1);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  AZ_RETURN_IF_ERROR(WaitAll(children));

  std::uint64_t consumed = 0, push_waits = 0, pop_waits = 0;
  for (int c = 0; c < options.consumers; ++c) {
    consumed += control->counts[options.producers + c];
    pop_waits += control->waits[options.producers + c];
  }
  for (int p = 0; p < options.producers; ++p) push_waits += control->waits[p];
  const double ring_records = consumed / elapsed;
  const double ring_gbps = ring_records * bytes / 1e9;
  // The same record size through one memcpy in this process, over a working set as large as the
  // ring's slots: what one core can move at best.
  const double memcpy_bytes = MemcpyBytesPerSecond(bytes, options.capacity, options.seconds);
  const double memcpy_gbps = memcpy_bytes / 1e9;

  std::printf(
      "az-ringbench: %d producers -> %d consumers, %u-byte records, capacity %llu, "
      "batch %u, %.1f s, across processes\n",
      options.producers, options.consumers, bytes,
      static_cast<unsigned long long>(options.capacity), options.batch, elapsed);
  std::printf("ring    %14.0f records/s  %8.3f GB/s  (waits: %.0f/s full, %.0f/s empty)\n",
              ring_records, ring_gbps, push_waits / elapsed, pop_waits / elapsed);
  std::printf("memcpy  %14.0f records/s  %8.3f GB/s  (one thread, same records)\n",
              memcpy_bytes / bytes, memcpy_gbps);
  std::printf("ratio %.3f\n", ring_gbps / memcpy_gbps);
  std::fflush(stdout);
  ::munmap(control, sizeof(Control));
  return Status::Ok();
}

Status RunPingPong(const Options& options) {
  AZ_ASSIGN_OR_RETURN(Scope scope, BenchScope());
  const RingOptions ring_options{.spin_time = std::chrono::microseconds(options.spin_us)};
  const ChannelSpec spec{.request_bytes = options.record_bytes,
                         .response_bytes = options.record_bytes,
                         .max_workers = 1,
                         .request_capacity = 16,
                         .response_capacity = 16};
  AZ_ASSIGN_OR_RETURN(RequestServer owner,
                      RequestServer::Create(scope, "pingpong", spec, ring_options,
                                            {.reclaim_stale = true, .remove_on_close = true}));
  Control* control = MapControl();
  if (control == nullptr) return ResourceExhausted("cannot map the control block");
  const std::uint32_t bytes = options.record_bytes;

  std::vector<pid_t> children;
  children.push_back(Fork([&] {  // the server: answers each request with a record of its own
    auto server = RequestServer::Open(scope, "pingpong", bytes, bytes, ring_options);
    if (!server.ok()) return 1;
    std::vector<std::byte> answer(bytes, std::byte{0x24});
    control->ready.fetch_add(1);
    WaitForGo(*control);
    Envelope envelope{};
    while (control->stop.load(std::memory_order_relaxed) == 0) {
      Result<std::size_t> taken = server->TakeRequests(
          1, 50ms, [&](const Envelope& e, std::span<const std::byte>) { envelope = e; });
      if (taken.ok() && !server->Respond(envelope, answer, 1s).ok()) return 2;
    }
    return 0;
  }));
  children.push_back(Fork([&] {  // the client: one request in flight, timing each round trip
    auto client = RequestClient::Open(
        scope, "pingpong",
        {.worker_id = 0, .request_bytes = bytes, .response_bytes = bytes, .ring = ring_options});
    if (!client.ok()) return 1;
    std::vector<std::byte> request(bytes, std::byte{0x11});
    std::vector<double> latencies;
    latencies.reserve(1 << 22);
    control->ready.fetch_add(1);
    WaitForGo(*control);
    for (std::uint64_t id = 0; control->stop.load(std::memory_order_relaxed) == 0; ++id) {
      const Clock::time_point sent = Clock::now();
      if (!client->Submit(id, request, 1s).ok()) return 2;
      bool answered = false;
      while (!answered && control->stop.load(std::memory_order_relaxed) == 0) {
        Result<std::size_t> got =
            client->Receive(1, 50ms, [&](std::uint64_t answer_id, std::span<const std::byte>) {
              answered = answer_id == id;
            });
        (void)got;
      }
      if (!answered) break;
      if (latencies.size() < latencies.capacity()) {
        latencies.push_back(std::chrono::duration<double, std::micro>(Clock::now() - sent).count());
      }
    }
    if (latencies.empty()) return 3;
    double sum = 0;
    for (double l : latencies) sum += l;
    std::sort(latencies.begin(), latencies.end());
    control->round_trips.store(latencies.size());
    control->p50_us.store(latencies[latencies.size() / 2]);
    control->p99_us.store(latencies[latencies.size() * 99 / 100]);
    control->mean_us.store(sum / latencies.size());
    return 0;
  }));
  while (control->ready.load() < 2) std::this_thread::sleep_for(1ms);
  const Clock::time_point start = Clock::now();
  control->go.store(1, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
  control->stop.store(1);
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  AZ_RETURN_IF_ERROR(WaitAll(children));

  std::printf(
      "az-ringbench: ping-pong through a request channel, %u-byte requests and "
      "responses, %.1f s, across processes\n",
      bytes, elapsed);
  std::printf("round trips %llu (%.0f/s), mean %.2f us\n",
              static_cast<unsigned long long>(control->round_trips.load()),
              control->round_trips.load() / elapsed, control->mean_us.load());
  std::printf("p50 %.2f us\n", control->p50_us.load());
  std::printf("p99 %.2f us\n", control->p99_us.load());
  std::fflush(stdout);
  ::munmap(control, sizeof(Control));
  return Status::Ok();
}

}  // namespace

Status Validate(const Options& options) {
  if (options.producers < 1 || options.producers > kMaxProcesses / 2 || options.consumers < 1 ||
      options.consumers > kMaxProcesses / 2) {
    return InvalidArgument("producers and consumers must be 1.." +
                           std::to_string(kMaxProcesses / 2));
  }
  if (options.seconds <= 0) return InvalidArgument("--seconds must be positive");
  if (options.batch < 1) return InvalidArgument("--batch must be at least 1");
  return shm::ValidateRingSpec({options.record_bytes, options.capacity});
}

Status Run(const Options& options) {
  AZ_RETURN_IF_ERROR(Validate(options));
  std::fflush(stdout);
  return options.ping_pong ? RunPingPong(options) : RunThroughput(options);
}

}  // namespace az::ringbench
