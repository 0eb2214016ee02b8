#include "core/nn/distributed.h"

// ProcessGroupGloo.hpp declares its class only under USE_C10D_GLOO (Debian's LibTorch is built with
// Gloo; libgloo-dev brings the headers it includes).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif
#include <unistd.h>

#include <cstdlib>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "core/base/log.h"
#include "core/nn/torch_distributed.h"

namespace az::nn {

struct ProcessGroupImpl {
  ProcessGroupOptions options;
  std::string generation;
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::PrefixStore> group_store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
  bool healthy = true;
};

namespace {

using std::chrono::milliseconds;

// c10d's messages carry a C++ backtrace after the first line.
std::string FirstLine(const std::exception& e) {
  std::string message = e.what();
  if (const auto nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
  return message;
}

bool LooksLikeTimeout(const std::string& message) {
  return message.find("imeout") != std::string::npos ||
         message.find("timed out") != std::string::npos;
}

std::string Seconds(milliseconds ms) {
  const double s = static_cast<double>(ms.count()) / 1000.0;
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + " s";
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::shared_ptr<::gloo::transport::Device> MakeDevice(const ProcessGroupOptions& o) {
  if (!o.bind_address.empty()) {
    return c10d::ProcessGroupGloo::createDeviceForHostname(o.bind_address);
  }
  if (IsLoopback(o.host)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  if (const char* interface = std::getenv("GLOO_SOCKET_IFNAME"); interface && *interface) {
    return c10d::ProcessGroupGloo::createDeviceForInterface(interface);
  }
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

std::string ToString(const std::vector<std::uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

std::vector<std::uint8_t> ToBytes(const std::string& text) {
  return std::vector<std::uint8_t>(text.begin(), text.end());
}

// A failed collective: the group is unusable from now on (Gloo's pairs may be half-way through an
// exchange), and the caller is expected to leave and rejoin.
Status CollectiveFailed(ProcessGroupImpl& g, std::string_view what, const std::exception& e) {
  g.healthy = false;
  const std::string message = FirstLine(e);
  return Unavailable("learner group (rank " + std::to_string(g.options.rank) + " of " +
                     std::to_string(g.options.world_size) + "): " + std::string(what) +
                     " failed: another rank died, hung or timed out (timeout " +
                     Seconds(g.options.timeout) + "): " + message);
}

Status CheckUsable(const ProcessGroupImpl& g, std::string_view what) {
  if (g.healthy) return Status::Ok();
  return Unavailable("learner group: " + std::string(what) +
                     " refused: an earlier collective failed; leave the group and rejoin");
}

// Blocks on `work`; the Gloo context's timeout (options.timeout) bounds it.
void Wait(const c10::intrusive_ptr<c10d::Work>& work) {
  if (!work->wait()) throw std::runtime_error("collective did not complete");
}

}  // namespace

Status ProcessGroupOptions::Validate() const {
  if (world_size < 2 || world_size > 4096) {
    return InvalidArgument("learner group: world size " + std::to_string(world_size) +
                           " must lie in [2, 4096] (a single learner needs no group)");
  }
  if (rank < 0 || rank >= world_size) {
    return InvalidArgument("learner group: rank " + std::to_string(rank) + " must lie in [0, " +
                           std::to_string(world_size - 1) + "] for world size " +
                           std::to_string(world_size));
  }
  if (host.empty()) return InvalidArgument("learner group: the rendezvous host is empty");
  if (port < 1 || port > 65535) {
    return InvalidArgument("learner group: port " + std::to_string(port) +
                           " must lie in [1, 65535]");
  }
  if (timeout.count() < 1 || rendezvous_timeout.count() < 1) {
    return InvalidArgument("learner group: timeouts must be positive");
  }
  return Status::Ok();
}

Result<RendezvousAddress> ParseRendezvous(std::string_view text) {
  const std::string shown(text);
  constexpr std::string_view kScheme = "tcp://";
  if (text.substr(0, kScheme.size()) != kScheme) {
    return InvalidArgument("rendezvous '" + shown + "' must be tcp://HOST:PORT");
  }
  std::string_view rest = text.substr(kScheme.size());
  RendezvousAddress address;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      return InvalidArgument("rendezvous '" + shown + "': an IPv6 host is [ADDRESS]:PORT");
    }
    address.host = std::string(rest.substr(1, close - 1));
    port = rest.substr(close + 2);
  } else {
    const std::size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) {
      return InvalidArgument("rendezvous '" + shown + "' has no port: tcp://HOST:PORT");
    }
    address.host = std::string(rest.substr(0, colon));
    port = rest.substr(colon + 1);
    if (address.host.find(':') != std::string::npos) {
      return InvalidArgument("rendezvous '" + shown + "': write an IPv6 host in brackets");
    }
  }
  if (address.host.empty()) return InvalidArgument("rendezvous '" + shown + "' has no host");
  if (address.host.find_first_of("/ \t") != std::string::npos) {
    return InvalidArgument("rendezvous '" + shown + "': bad host '" + address.host + "'");
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string_view::npos) {
    return InvalidArgument("rendezvous '" + shown + "': the port must be a number in [1, 65535]");
  }
  address.port = std::stoi(std::string(port));
  if (address.port < 1 || address.port > 65535) {
    return InvalidArgument("rendezvous '" + shown + "': the port must be a number in [1, 65535]");
  }
  return address;
}

ProcessGroup::ProcessGroup(std::unique_ptr<ProcessGroupImpl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::Create(const ProcessGroupOptions& options) {
  AZ_RETURN_IF_ERROR(options.Validate());
  auto g = std::make_unique<ProcessGroupImpl>();
  g->options = options;
  const ProcessGroupOptions& o = g->options;
  const std::string where = "tcp://" + o.host + ":" + std::to_string(o.port);
  std::string stage;
  try {
    stage = o.rank == 0 ? "starting the store at " + where : "reaching rank 0's store at " + where;
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<std::uint16_t>(o.port);
    store_options.isServer = o.rank == 0;
    store_options.waitWorkers = false;  // the join below waits, under our own keys
    store_options.timeout = o.rendezvous_timeout;
    g->store = c10::make_intrusive<c10d::TCPStore>(o.host, store_options);

    // A fresh generation per rendezvous: rank 0 starts a new store each time it (re)starts and
    // names the generation in it; every key of this group lives under it.
    stage = "reading the group's generation from rank 0's store at " + where;
    if (o.rank == 0) {
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      g->generation =
          std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(now).count()) + "-" +
          std::to_string(::getpid());
      g->store->set("az/generation", ToBytes(g->generation));
    } else {
      g->generation = ToString(g->store->get("az/generation"));
    }
    g->group_store = c10::make_intrusive<c10d::PrefixStore>("az/" + g->generation, g->store);

    stage = "joining generation " + g->generation;
    if (g->group_store->add("rank/" + std::to_string(o.rank), 1) > 1) {
      return AlreadyExists("learner group: another process already joined generation " +
                           g->generation + " at " + where + " as rank " + std::to_string(o.rank) +
                           ": each rank must be given once");
    }
    if (o.rank == 0) {
      g->group_store->set("world_size", ToBytes(std::to_string(o.world_size)));
    } else {
      const std::string theirs = ToString(g->group_store->get("world_size"));
      if (theirs != std::to_string(o.world_size)) {
        return InvalidArgument("learner group: this rank was started with world size " +
                               std::to_string(o.world_size) + ", rank 0 with " + theirs);
      }
    }
    g->group_store->set("joined/" + std::to_string(o.rank), ToBytes("1"));
    stage = "waiting for all " + std::to_string(o.world_size) + " ranks to join at " + where;
    std::vector<std::string> joined;
    for (int r = 0; r < o.world_size; ++r) joined.push_back("joined/" + std::to_string(r));
    g->group_store->wait(joined, o.rendezvous_timeout);

    stage = "connecting Gloo between the ranks";
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(o.timeout);
    gloo_options->devices.push_back(MakeDevice(o));
    gloo_options->threads = 1;  // one collective at a time
    g->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(g->group_store, o.rank, o.world_size,
                                                          gloo_options);
    g->store->setTimeout(o.timeout);
  } catch (const std::exception& e) {
    const std::string message = "learner group (rank " + std::to_string(o.rank) + " of " +
                                std::to_string(o.world_size) + "): " + stage + ": " + FirstLine(e);
    if (LooksLikeTimeout(message)) {
      return DeadlineExceeded(message + " (waited up to " + Seconds(o.rendezvous_timeout) + ")");
    }
    return Unavailable(message);
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(std::move(g)));
}

int ProcessGroup::rank() const { return impl_->options.rank; }
int ProcessGroup::world_size() const { return impl_->options.world_size; }
std::string_view ProcessGroup::generation() const { return impl_->generation; }
const ProcessGroupOptions& ProcessGroup::options() const { return impl_->options; }
bool ProcessGroup::healthy() const { return impl_->healthy; }

Status ProcessGroup::AllReduceSum(std::span<double> values) {
  torch::Tensor t =
      torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, torch::kDouble)
          .clone();
  AZ_RETURN_IF_ERROR(az::nn::AllReduceSum(*this, t));
  std::copy_n(t.data_ptr<double>(), values.size(), values.data());
  return Status::Ok();
}

Result<std::string> ProcessGroup::BroadcastFromRoot(const std::string& bytes) {
  torch::Tensor size = torch::full({1}, static_cast<std::int64_t>(bytes.size()), torch::kLong);
  AZ_RETURN_IF_ERROR(az::nn::BroadcastFromRoot(*this, size));
  const std::int64_t n = size.item<std::int64_t>();
  torch::Tensor data = torch::empty({n}, torch::kUInt8);
  if (rank() == 0) std::copy_n(bytes.data(), n, reinterpret_cast<char*>(data.data_ptr()));
  if (n > 0) AZ_RETURN_IF_ERROR(az::nn::BroadcastFromRoot(*this, data));
  return std::string(reinterpret_cast<const char*>(data.data_ptr()), static_cast<std::size_t>(n));
}

Status AllReduceSum(ProcessGroup& group, torch::Tensor& tensor) {
  ProcessGroupImpl& g = group.impl();
  AZ_RETURN_IF_ERROR(CheckUsable(g, "all-reduce"));
  try {
    const bool on_host = tensor.device().is_cpu();
    std::vector<at::Tensor> tensors{on_host ? tensor : tensor.to(torch::kCPU)};
    Wait(g.gloo->allreduce(tensors));
    if (!on_host) tensor.copy_(tensors[0]);
  } catch (const std::exception& e) {
    return CollectiveFailed(g, "all-reduce", e);
  }
  return Status::Ok();
}

Status BroadcastFromRoot(ProcessGroup& group, torch::Tensor& tensor) {
  ProcessGroupImpl& g = group.impl();
  AZ_RETURN_IF_ERROR(CheckUsable(g, "broadcast"));
  try {
    const bool on_host = tensor.device().is_cpu();
    std::vector<at::Tensor> tensors{on_host ? tensor : tensor.to(torch::kCPU)};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    Wait(g.gloo->broadcast(tensors, options));
    if (!on_host) tensor.copy_(tensors[0]);
  } catch (const std::exception& e) {
    return CollectiveFailed(g, "broadcast", e);
  }
  return Status::Ok();
}

}  // namespace az::nn
