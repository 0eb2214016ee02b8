// The served path of az-replay against the in-process library, in one run (docs/PERFORMANCE.md,
// "replayd"): a learner client in this process asks the real az-replay binary (a child process,
// over ipc://) for prioritized batches of 2 KB records, beside ReplayStore::Sample on a store of
// the same shape in this process. Plus the time to reopen a store of a million records after
// SIGKILL.
//
//   replayd_bench [--benchmark_filter=...] [--benchmark_min_time=...]
//   AZ_REPLAYD_BENCH_RECORDS=262144 (records in each store; default 2^18 = 512 MiB of 2 KB records)

#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "core/replay/replay_store.h"
#include "services/replay/replay_client.h"
#include "shm/scope.h"
#include "shm/segment.h"
#include "tests/ipc/test_util.h"

namespace az::replayd {
namespace {

using ipc::testing::ChildProcess;
using ipc::testing::TempDir;
using ipc::testing::WaitFor;

constexpr std::size_t kRecordBytes = 2048;
constexpr double kAlpha = 0.6;

std::uint64_t RecordsPerStore() {
  const char* text = std::getenv("AZ_REPLAYD_BENCH_RECORDS");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : std::uint64_t{1} << 18;
}

// Random priorities over four decades, as a learner's losses would give.
std::vector<replay::PriorityUpdate> RandomUpdates(std::uint64_t records, std::mt19937_64& random) {
  std::vector<replay::PriorityUpdate> updates(records);
  std::uniform_real_distribution<double> exponent(-3, 1);
  for (std::uint64_t i = 0; i < records; ++i) updates[i] = {i, i, std::pow(10.0, exponent(random))};
  return updates;
}

// The daemon (a child process) and a store of the same shape in this process, both full.
class Environment {
 public:
  static Environment& Get() {
    static Environment* environment = new Environment();  // torn down by atexit below
    return *environment;
  }

  ReplayClient& client() { return *client_; }
  replay::ReplayStore& local() { return *local_; }
  std::uint64_t records() const { return records_; }
  const std::string& dir() const { return dir_.path(); }

  ~Environment() {
    client_.reset();
    if (daemon_) {
      daemon_->Signal(SIGTERM);
      daemon_->Wait();
    }
    local_.reset();
    if (Result<shm::Scope> scope = shm::Scope::Parse(scope_); scope.ok()) {
      (void)shm::Segment::RemoveAll(*scope);
    }
  }

 private:
  Environment() : records_(RecordsPerStore()) {
    std::atexit([] { delete &Get(); });
    scope_ = "shm:azrb-" + std::to_string(::getpid());
    std::mt19937_64 random(1);
    std::vector<std::byte> chunk(4096 * kRecordBytes);
    for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<std::byte>(random());
    const std::vector<replay::PriorityUpdate> updates = RandomUpdates(records_, random);

    // In process.
    replay::ReplayStoreOptions options;
    options.path = dir_.path() + "/local.store";
    options.capacity = records_;
    options.record_size = kRecordBytes;
    options.alpha = kAlpha;
    Result<std::unique_ptr<replay::ReplayStore>> store = replay::ReplayStore::Open(options);
    AZ_CHECK(store.ok(), store.status().ToString());
    local_ = std::move(store).value();
    for (std::uint64_t done = 0; done < records_; done += 4096) {
      const std::uint64_t n = std::min<std::uint64_t>(4096, records_ - done);
      AZ_CHECK(local_->Insert(std::span(chunk).first(n * kRecordBytes)).ok());
    }
    local_->UpdatePriorities(updates);

    // Served: the real binary.
    daemon_ = std::make_unique<ChildProcess>(std::vector<std::string>{AZ_REPLAY_BINARY,
                                                                      "--run-dir",
                                                                      dir_.path(),
                                                                      "--record-layout",
                                                                      "bytes",
                                                                      "--record-bytes",
                                                                      std::to_string(kRecordBytes),
                                                                      "--capacity",
                                                                      std::to_string(records_),
                                                                      "--alpha",
                                                                      std::to_string(kAlpha),
                                                                      "--metrics-port",
                                                                      "-1",
                                                                      "--shm-scope",
                                                                      scope_,
                                                                      "--model-events-from",
                                                                      "",
                                                                      "--snapshot-interval",
                                                                      "0",
                                                                      "--log-level",
                                                                      "warning"},
                                             "", dir_.path() + "/replay.log");
    Result<ReplayClient> client = ReplayClient::Create(
        {.run_dir = dir_.path(), .attempt_timeout = std::chrono::seconds(30), .max_attempts = 1});
    AZ_CHECK(client.ok());
    client_ = std::make_unique<ReplayClient>(std::move(client).value());
    AZ_CHECK(WaitFor([&] { return client_->Status().ok(); }, std::chrono::seconds(60)),
             "az-replay did not come up");
    for (std::uint64_t done = 0; done < records_; done += 4096) {
      const std::uint64_t n = std::min<std::uint64_t>(4096, records_ - done);
      Result<InsertResult> inserted = client_->Insert(std::span(chunk).first(n * kRecordBytes));
      AZ_CHECK(inserted.ok(), inserted.status().ToString());
    }
    for (std::uint64_t done = 0; done < records_; done += 65536) {
      const std::uint64_t n = std::min<std::uint64_t>(65536, records_ - done);
      AZ_CHECK(client_->UpdatePriorities(std::span(updates).subspan(done, n)).ok());
    }
  }

  TempDir dir_;
  std::string scope_;
  std::uint64_t records_;
  std::unique_ptr<replay::ReplayStore> local_;
  std::unique_ptr<ChildProcess> daemon_;
  std::unique_ptr<ReplayClient> client_;
};

// ReplayStore::Sample: the library's own rate, in this process. records:1 copies the drawn
// records out (what a learner needs); records:0 draws the metadata only.
void BM_InProcessSample(benchmark::State& state) {
  Environment& env = Environment::Get();
  const auto batch = static_cast<std::size_t>(state.range(0));
  const bool with_records = state.range(1) != 0;
  std::vector<replay::SampledSlot> draws(batch);
  std::vector<std::byte> records(with_records ? batch * kRecordBytes : 0);
  replay::Rng rng(7);
  for (auto _ : state) {
    AZ_CHECK(env.local().Sample(0.5, rng, draws, records).ok());
    benchmark::DoNotOptimize(records.data());
    benchmark::DoNotOptimize(draws.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_InProcessSample)
    ->ArgNames({"batch", "records"})
    ->Args({256, 1})
    ->Args({1024, 1})
    ->Args({256, 0})
    ->Args({1024, 0})
    ->UseRealTime();

// The same batches from the daemon: request over ipc://, draw (or take the batch drawn ahead),
// reply frames, records in this process. One learner client, back to back.
void BM_ServedSample(benchmark::State& state) {
  Environment& env = Environment::Get();
  const auto batch = static_cast<std::uint32_t>(state.range(0));
  const bool with_records = state.range(1) != 0;
  const bool prefetch = state.range(2) != 0;
  AZ_CHECK(env.client().Set("prefetch", prefetch).ok());
  std::uint64_t prefetched = 0;
  for (auto _ : state) {
    Result<SampledBatch> drawn =
        env.client().Sample({.batch = batch, .beta = 0.5, .with_records = with_records});
    AZ_CHECK(drawn.ok(), drawn.status().ToString());
    prefetched += drawn->body().value("prefetched", false) ? 1 : 0;
    benchmark::DoNotOptimize(drawn->records().data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.counters["prefetched"] =
      benchmark::Counter(static_cast<double>(prefetched) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_ServedSample)
    ->ArgNames({"batch", "records", "prefetch"})
    ->Args({256, 1, 0})
    ->Args({256, 1, 1})
    ->Args({1024, 1, 0})
    ->Args({1024, 1, 1})
    ->Args({256, 0, 0})
    ->Args({1024, 0, 0})
    ->UseRealTime();

// What the learner waits for when it trains between requests: the time of the sample call alone,
// with a training step of `step_us` (the client sleeps) between calls. With prefetch the daemon
// draws the next batch during the step, so the call returns without waiting for the draw.
void BM_ServedSampleLatency(benchmark::State& state) {
  Environment& env = Environment::Get();
  const auto batch = static_cast<std::uint32_t>(state.range(0));
  const bool prefetch = state.range(1) != 0;
  const auto step = std::chrono::microseconds(state.range(2));
  AZ_CHECK(env.client().Set("prefetch", prefetch).ok());
  for (auto _ : state) {
    std::this_thread::sleep_for(step);
    const auto start = std::chrono::steady_clock::now();
    Result<SampledBatch> drawn = env.client().Sample({.batch = batch, .beta = 0.5});
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    AZ_CHECK(drawn.ok(), drawn.status().ToString());
    benchmark::DoNotOptimize(drawn->records().data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_ServedSampleLatency)
    ->ArgNames({"batch", "prefetch", "step_us"})
    ->Args({1024, 0, 5000})
    ->Args({1024, 1, 5000})
    ->Args({256, 0, 5000})
    ->Args({256, 1, 5000})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// The learner's loop: sample a batch, send its losses back as priorities.
void BM_ServedSampleAndUpdate(benchmark::State& state) {
  Environment& env = Environment::Get();
  const auto batch = static_cast<std::uint32_t>(state.range(0));
  AZ_CHECK(env.client().Set("prefetch", true).ok());
  std::vector<replay::PriorityUpdate> updates(batch);
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> loss(0.001, 10);
  for (auto _ : state) {
    Result<SampledBatch> drawn = env.client().Sample({.batch = batch, .beta = 0.5});
    AZ_CHECK(drawn.ok(), drawn.status().ToString());
    for (std::uint32_t i = 0; i < batch; ++i) {
      updates[i] = {drawn->draws()[i].slot, drawn->draws()[i].generation, loss(random)};
    }
    AZ_CHECK(env.client().UpdatePriorities(updates).ok());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}
BENCHMARK(BM_ServedSampleAndUpdate)->ArgName("batch")->Arg(256)->Arg(1024)->UseRealTime();

// A store of a million chess-sized records filled by a child that is then SIGKILLed (its pages stay
// in the page cache, as after a daemon crash), then: ReplayStore::Open in this process, and the
// az-replay binary from exec to answering `status`. One iteration each: it is a cold start.
void BM_ReopenAfterKill(benchmark::State& state) {
  const std::uint64_t records = static_cast<std::uint64_t>(state.range(0));
  constexpr std::size_t kChessBytes = 1160;
  TempDir dir;
  const std::string path = dir.path() + "/big.store";
  replay::ReplayStoreOptions options;
  options.path = path;
  options.capacity = records;
  options.record_size = kChessBytes;
  options.alpha = kAlpha;
  const pid_t child = ::fork();
  if (child == 0) {
    Result<std::unique_ptr<replay::ReplayStore>> store = replay::ReplayStore::Open(options);
    if (!store.ok()) ::_exit(1);
    std::vector<std::byte> chunk(8192 * kChessBytes, std::byte{0x5a});
    for (std::uint64_t done = 0; done < records; done += 8192) {
      const std::uint64_t n = std::min<std::uint64_t>(8192, records - done);
      if (!(*store)->Insert(std::span(chunk).first(n * kChessBytes)).ok()) ::_exit(1);
    }
    ::raise(SIGKILL);  // dies holding the store, mid-life, as a crash would
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  AZ_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the filler did not die as planned");

  double open_seconds = 0;
  double daemon_seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    Result<std::unique_ptr<replay::ReplayStore>> store = replay::ReplayStore::Open(options);
    open_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    AZ_CHECK(store.ok(), store.status().ToString());
    AZ_CHECK((*store)->Stats().size == records);
    store->reset();

    const std::string scope = "shm:azrb-open-" + std::to_string(::getpid());
    const auto exec_start = std::chrono::steady_clock::now();
    ChildProcess daemon({AZ_REPLAY_BINARY, "--run-dir", dir.path(), "--store", path, "--capacity",
                         std::to_string(records), "--alpha", std::to_string(kAlpha),
                         "--metrics-port", "-1", "--shm-scope", scope, "--model-events-from", "",
                         "--snapshot-interval", "0", "--log-level", "warning"},
                        "", dir.path() + "/replay.log");
    Result<ReplayClient> client =
        ReplayClient::Create({.run_dir = dir.path(),
                              .attempt_timeout = std::chrono::milliseconds(50),
                              .max_attempts = 1});
    AZ_CHECK(client.ok());
    AZ_CHECK(WaitFor([&] { return client->Status().ok(); }, std::chrono::seconds(120)));
    daemon_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - exec_start).count();
    Result<nlohmann::json> reply = client->Status();
    AZ_CHECK(reply.ok() && (*reply)["size"] == records);
    daemon.Signal(SIGTERM);
    daemon.Wait();
    if (Result<shm::Scope> s = shm::Scope::Parse(scope); s.ok()) (void)shm::Segment::RemoveAll(*s);
  }
  state.counters["store_open_ms"] = open_seconds * 1000;
  state.counters["daemon_ready_ms"] = daemon_seconds * 1000;
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}
BENCHMARK(BM_ReopenAfterKill)
    ->ArgName("records")
    ->Arg(1'000'000)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace az::replayd
