// What one replay daemon takes from self-play hosts (docs/scaling.md, docs/PERFORMANCE.md "relay"):
// `push` over tcp://127.0.0.1 with CURVE to the real az-replay (a child process), every record
// checked by the game's validation, stored and journalled per host, against the local `insert`
// over ipc:// to the same daemon in the same run (also validated). Connect Four (80-byte) and chess
// (1160-byte) samples; one pushing client, back to back.
//
//   relay_bench [--benchmark_filter=...] [--benchmark_min_time=...]

#include <benchmark/benchmark.h>
#include <signal.h>

#include <memory>
#include <string>

#include "core/games/connect4/connect_four_sample.h"
#include "core/sample/chess_sample.h"
#include "ipc/client.h"
#include "services/replay/random_samples.h"
#include "services/replay/replay_protocol.h"
#include "shm/scope.h"
#include "shm/segment.h"
#include "tests/ipc/test_util.h"
#include "tests/services/learner/connect_four_samples.h"

namespace az::replayd {
namespace {

using ipc::testing::ChildProcess;
using ipc::testing::TempDir;
using ipc::testing::WaitFor;

constexpr std::uint64_t kCapacity = 1 << 18;
constexpr std::size_t kPool = 4096;  // distinct samples, pushed over and over

// A daemon for one game, with a remote endpoint, and a client on each of its endpoints.
class Daemon {
 public:
  Daemon(const std::string& game, std::size_t record_bytes) : record_bytes_(record_bytes) {
    const int port = ipc::testing::FreeTcpPort();
    scope_ = "shm:azrlb-" + std::to_string(::getpid()) + "-" + game;
    const std::string remote = "tcp://127.0.0.1:" + std::to_string(port);
    process_ = std::make_unique<ChildProcess>(std::vector<std::string>{AZ_REPLAY_BINARY,
                                                                       "--run-dir",
                                                                       dir_.path(),
                                                                       "--record-layout",
                                                                       game,
                                                                       "--record-bytes",
                                                                       std::to_string(record_bytes),
                                                                       "--capacity",
                                                                       std::to_string(kCapacity),
                                                                       "--metrics-port",
                                                                       "-1",
                                                                       "--shm-scope",
                                                                       scope_,
                                                                       "--model-events-from",
                                                                       "",
                                                                       "--snapshot-interval",
                                                                       "0",
                                                                       "--remote-endpoint",
                                                                       remote,
                                                                       "--log-level",
                                                                       "warning"},
                                              "", dir_.path() + "/replay.log");
    Result<ipc::Client> local =
        ipc::Client::Create({.endpoint = "ipc://" + dir_.path() + "/replay.ctl",
                             .attempt_timeout = std::chrono::seconds(30),
                             .max_attempts = 1});
    AZ_CHECK(local.ok());
    local_ = std::make_unique<ipc::Client>(std::move(local).value());
    AZ_CHECK(WaitFor([&] { return local_->Call("status").ok(); }, std::chrono::seconds(60)),
             "az-replay did not come up");
    Result<ipc::Client> pusher = ipc::Client::Create({.endpoint = remote,
                                                      .run_dir = dir_.path(),
                                                      .attempt_timeout = std::chrono::seconds(30),
                                                      .max_attempts = 1});
    AZ_CHECK(pusher.ok(), pusher.status().ToString());
    remote_ = std::make_unique<ipc::Client>(std::move(pusher).value());
  }
  ~Daemon() {
    local_.reset();
    remote_.reset();
    process_->Signal(SIGTERM);
    process_->Wait();
    if (Result<shm::Scope> scope = shm::Scope::Parse(scope_); scope.ok()) {
      (void)shm::Segment::RemoveAll(*scope);
    }
  }
  ipc::Client& local() { return *local_; }
  ipc::Client& remote() { return *remote_; }
  std::size_t record_bytes() const { return record_bytes_; }
  std::uint64_t next_seq = 1;

 private:
  TempDir dir_;
  std::string scope_;
  std::size_t record_bytes_;
  std::unique_ptr<ChildProcess> process_;
  std::unique_ptr<ipc::Client> local_, remote_;
};

const std::vector<std::byte>& Pool(const std::string& game) {
  static const std::vector<std::byte> connect4 = [] {
    const auto samples = learner::testing::RandomConnectFourSamples(kPool, 5, 1);
    const auto bytes = std::as_bytes(std::span(samples));
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  }();
  static const std::vector<std::byte> chess = [] {
    const auto samples = RandomChessSamples(kPool, {.seed = 5});
    const auto bytes = std::as_bytes(std::span(samples));
    return std::vector<std::byte>(bytes.begin(), bytes.end());
  }();
  return game == "chess" ? chess : connect4;
}

Daemon& DaemonFor(const std::string& game) {
  static Daemon* connect4 = nullptr;
  static Daemon* chess = nullptr;
  Daemon*& daemon = game == "chess" ? chess : connect4;
  if (daemon == nullptr) {
    daemon = new Daemon(
        game, game == "chess" ? sizeof(sample::ChessSample) : sizeof(sample::ConnectFourSample));
    std::atexit([] {
      delete connect4;
      delete chess;
    });
  }
  return *daemon;
}

// range(0): 0 Connect Four, 1 chess; range(1): records per request; range(2): 1 push (tcp, CURVE),
// 0 insert (ipc).
void BM_Store(benchmark::State& state) {
  const std::string game = state.range(0) == 0 ? "connect4" : "chess";
  const auto batch = static_cast<std::size_t>(state.range(1));
  const bool push = state.range(2) != 0;
  Daemon& daemon = DaemonFor(game);
  const std::vector<std::byte>& pool = Pool(game);
  const std::size_t bytes = daemon.record_bytes();
  std::size_t at = 0;
  for (auto _ : state) {
    if (at + batch > kPool) at = 0;
    std::vector<zmq::message_t> frames;
    frames.emplace_back(pool.data() + at * bytes, batch * bytes);
    at += batch;
    Result<ipc::Reply> reply =
        push ? daemon.remote().Call(
                   kPushCommand,
                   {{"host", "bench"}, {"first_seq", daemon.next_seq}, {"count", batch}},
                   std::move(frames))
             : daemon.local().Call(kInsertCommand, {{"count", batch}}, std::move(frames));
    AZ_CHECK(reply.ok(), reply.status().ToString());
    if (push) {
      AZ_CHECK(reply->body["stored"] == batch, reply->body.dump());
      daemon.next_seq += batch;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * batch * bytes));
}
BENCHMARK(BM_Store)
    ->ArgNames({"chess", "batch", "push"})
    ->ArgsProduct({{0, 1}, {64, 256, 1024}, {0, 1}})
    ->UseRealTime();

}  // namespace
}  // namespace az::replayd
