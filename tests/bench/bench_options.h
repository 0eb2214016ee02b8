// What the benchmarks share: the device their networks run on, and a main() that registers rows
// chosen at run time.
//
// AZ_BENCH_DEVICE=cpu (the default: the figures of docs/PERFORMANCE.md) or cuda (a GPU box: the
// GPU rows, docs/PERFORMANCE.md "GPU"). A benchmark never picks CUDA by itself, so a CPU figure is
// never silently a GPU one.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "core/nn/net_config.h"

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
