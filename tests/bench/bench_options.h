// What the benchmarks share: the device their networks run on, the networks their rows name, and
// a main() that registers rows chosen at run time.
//
// AZ_BENCH_DEVICE=cpu (the default: the figures of docs/PERFORMANCE.md) or cuda (a GPU box: the
// GPU rows, docs/PERFORMANCE.md "GPU"). A benchmark never picks CUDA by itself, so a CPU figure is
// never silently a GPU one.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "core/nn/net_config.h"
#include "core/nn/network.h"

namespace az::bench {

inline bool BenchOnCuda() {
  const char* device = std::getenv("AZ_BENCH_DEVICE");
  return device != nullptr && std::string(device) == "cuda";
}

inline nn::DeviceChoice BenchDevice() {
  return BenchOnCuda() ? nn::DeviceChoice::kCuda : nn::DeviceChoice::kCpu;
}

// The value of the services' --device flag for the same choice.
inline std::string BenchDeviceFlag() { return BenchOnCuda() ? "cuda" : "cpu"; }

// The network of a row's game argument in evaluator_bench and learner_bench: 0 chess's 6x64
// (ChessSmall), 1 Connect Four's preset, 2 chess's full 15x192 (the GPU rows).
inline nn::NetConfig BenchNet(std::int64_t game) {
  switch (game) {
    case 0: return nn::NetConfig::ChessSmall();
    case 1: return nn::NetConfig::ConnectFour();
    default: return nn::NetConfig::ChessFull();
  }
}

// Writes a freshly initialised network of shape `net` to `path` as model `version`, for an
// az-evaluator or az-learner to start from (--model) when the game's preset is not the network
// a row measures.
inline Status WriteFreshNetwork(const nn::NetConfig& net, const std::string& path,
                                std::uint64_t version) {
  nn::NetworkOptions options{.net = net};
  options.runtime.device = nn::DeviceChoice::kCpu;
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<nn::Network> network, nn::Network::Create(options));
  return network->SaveWeights(path, version);
}

// Google Benchmark's main, after `register_rows` has registered the rows for this device.
inline int RunBenchmarks(int argc, char** argv, void (*register_rows)()) {
  register_rows();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace az::bench
