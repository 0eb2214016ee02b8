// Control-plane costs, for choosing between binary frames and shared memory:
//   round trips per second of a small JSON request (ipc:// and tcp:// loopback), against a bare
//   ZeroMQ DEALER/ROUTER exchange and a REQ socket-free baseline;
//   MB/s of binary frames in replies (sample batches) and requests (inserts), against memcpy.
// Server on its own thread in this process, client on the benchmark thread.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/base/log.h"
#include "ipc/client.h"
#include "ipc/server.h"
#include "ipc/zmq_context.h"

namespace az::ipc {
namespace {

class RunDir {
 public:
  RunDir() {
    char pattern[] = "/tmp/az-bench-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~RunDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A payload shared by every reply: handed to ZeroMQ without a copy.
const std::vector<char>& Payload() {
  static const std::vector<char> payload(64 << 20, 'x');
  return payload;
}

std::unique_ptr<Server> StartServer(const std::string& run_dir, bool tcp) {
  SetLogLevel(LogLevel::kWarning);
  // tcp:// speaks CURVE with the run directory's keys (ipc/curve.h): its rows include that cost.
  ServerOptions options{.service = "bench", .run_dir = run_dir};
  if (tcp) options.endpoint = "tcp://127.0.0.1:*";
  options.max_request_bytes = size_t{256} << 20;
  Result<std::unique_ptr<Server>> server = Server::Create(std::move(options));
  AZ_CHECK(server.ok(), server.status().ToString());
  (*server)->Register("noop", [](Request&) -> Result<Reply> { return Reply{}; });
  (*server)->Register("get", [](Request& request) -> Result<Reply> {
    const size_t bytes = request.args.at("bytes").get<size_t>();
    Reply reply;
    reply.frames.emplace_back(const_cast<char*>(Payload().data()), bytes, nullptr, nullptr);
    return reply;
  });
  (*server)->Register("put", [](Request& request) -> Result<Reply> {
    return Reply{{{"bytes", FramesBytes(request.frames)}}, {}};
  });
  AZ_CHECK((*server)->Start().ok());
  return std::move(server).value();
}

Client MakeClient(const Server& server, const std::string& run_dir) {
  // One attempt: no copy of request frames kept for a retry, as a hot-path caller would choose.
  Result<Client> client = Client::Create({.endpoint = server.endpoint(),
                                          .run_dir = run_dir,
                                          .max_attempts = 1,
                                          .max_request_bytes = size_t{256} << 20});
  AZ_CHECK(client.ok());
  return std::move(client).value();
}

void BM_RoundTripSmallJson(benchmark::State& state) {
  RunDir dir;
  auto server = StartServer(dir.path(), state.range(0) == 1);
  Client client = MakeClient(*server, dir.path());
  for (auto _ : state) {
    Result<Reply> reply = client.Call("noop", {{"batch", 256}});
    if (!reply.ok()) state.SkipWithError(reply.status().ToString().c_str());
  }
  state.SetLabel(state.range(0) == 1 ? "tcp" : "ipc");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RoundTripSmallJson)->Arg(0)->Arg(1)->UseRealTime();

// The same exchange without the protocol layer: DEALER/ROUTER echo of two small frames.
void BM_RoundTripBareZmq(benchmark::State& state) {
  RunDir dir;
  auto context = SharedContext();
  const std::string endpoint = "ipc://" + dir.path() + "/bare";
  zmq::socket_t router(*context, zmq::socket_type::router);
  router.bind(endpoint);
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    zmq::pollitem_t items[] = {{router.handle(), 0, ZMQ_POLLIN, 0}};
    while (!stop) {
      if (zmq::poll(items, 1, std::chrono::milliseconds(50)) == 0) continue;
      std::vector<zmq::message_t> parts;
      while (true) {
        zmq::message_t part;
        (void)router.recv(part);
        const bool more = part.more();
        parts.push_back(std::move(part));
        if (!more) break;
      }
      for (size_t i = 0; i < parts.size(); ++i) {
        router.send(parts[i],
                    i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
      }
    }
  });
  zmq::socket_t dealer(*context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  const std::string body = R"({"cmd":"noop","batch":256,"id":1})";
  for (auto _ : state) {
    dealer.send(zmq::message_t(), zmq::send_flags::sndmore);
    dealer.send(zmq::buffer(body), zmq::send_flags::none);
    zmq::message_t delimiter, reply;
    (void)dealer.recv(delimiter);
    (void)dealer.recv(reply);
    benchmark::DoNotOptimize(reply.data());
  }
  stop = true;
  echo.join();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RoundTripBareZmq)->UseRealTime();

// Reply frames of state.range(0) bytes: a sample batch (1024 records x 2 KB = 2 MiB).
void BM_ReplyFrame(benchmark::State& state) {
  RunDir dir;
  auto server = StartServer(dir.path(), state.range(1) == 1);
  Client client = MakeClient(*server, dir.path());
  const auto bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    Result<Reply> reply = client.Call("get", {{"bytes", bytes}});
    if (!reply.ok() || reply->frames.size() != 1) state.SkipWithError("bad reply");
    benchmark::DoNotOptimize(reply->frames[0].data());
  }
  state.SetLabel(state.range(1) == 1 ? "tcp" : "ipc");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_ReplyFrame)
    ->ArgsProduct({{4 << 10, 64 << 10, 512 << 10, 2 << 20, 8 << 20}, {0}})
    ->Args({2 << 20, 1})
    ->UseRealTime();

// Request frames of state.range(0) bytes: an insert from a producer.
void BM_RequestFrame(benchmark::State& state) {
  RunDir dir;
  auto server = StartServer(dir.path(), false);
  Client client = MakeClient(*server, dir.path());
  const auto bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    std::vector<zmq::message_t> frames;
    frames.emplace_back(const_cast<char*>(Payload().data()), bytes, nullptr, nullptr);
    Result<Reply> reply = client.Call("put", {}, std::move(frames));
    if (!reply.ok()) state.SkipWithError(reply.status().ToString().c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_RequestFrame)->Arg(64 << 10)->Arg(2 << 20)->UseRealTime();

// What a shared-memory hand-over costs at best: one copy of the batch.
void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  std::vector<char> destination(bytes);
  for (auto _ : state) {
    std::memcpy(destination.data(), Payload().data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_Memcpy)->Arg(64 << 10)->Arg(2 << 20)->Arg(8 << 20);

}  // namespace
}  // namespace az::ipc
