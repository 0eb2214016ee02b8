// az-ringbench --producers P --consumers C --record-bytes B --seconds S [--ping-pong]
#include <CLI/CLI.hpp>

#include "core/base/log.h"
#include "services/ringbench/ringbench.h"

int main(int argc, char** argv) {
  az::SetLogComponent("az-ringbench");
  az::ringbench::Options options;
  CLI::App app{"Shared-memory ring benchmark across processes (az_shm)"};
  app.add_option("--producers", options.producers, "producer processes")->check(CLI::Range(1, 64));
  app.add_option("--consumers", options.consumers, "consumer processes")->check(CLI::Range(1, 64));
  app.add_option("--record-bytes", options.record_bytes, "bytes per record")
      ->check(CLI::Range(1u, 16u << 20));
  app.add_option("--seconds", options.seconds, "measured duration")->check(CLI::Range(0.1, 600.0));
  app.add_option("--capacity", options.capacity, "ring slots (a power of two)");
  app.add_option("--batch", options.batch, "records a consumer takes per call")
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--spin-us", options.spin_us, "microseconds a blocked call spins before sleeping")
      ->check(CLI::Range(0u, 1000000u));
  app.add_flag("--ping-pong", options.ping_pong,
               "round-trip latency through a request channel instead of throughput");
  CLI11_PARSE(app, argc, argv);
  az::Status status = az::ringbench::Run(options);
  if (!status.ok()) {
    AZ_LOG(kError) << status.ToString();
    return 1;
  }
  return 0;
}
