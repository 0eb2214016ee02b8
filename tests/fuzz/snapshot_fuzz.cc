// libFuzzer target: the replay snapshot loader (core/replay/snapshot.h LoadSnapshot), what
// `az-replay --restore FILE` and `azctl replay restore` read from disk. Arbitrary file contents are
// refused with an error (and leave the store as it was) or restore records; nothing crashes.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/base/check.h"
#include "core/replay/replay_store.h"
#include "core/replay/snapshot.h"

namespace {

struct Scratch {
  std::filesystem::path dir;
  std::unique_ptr<az::replay::ReplayStore> store;

  Scratch() {
    dir = std::filesystem::temp_directory_path() /
          ("az_snapshot_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    az::replay::ReplayStoreOptions options;
    options.path = (dir / "store").string();
    options.capacity = 64;
    options.record_size = 16;
    auto opened = az::replay::ReplayStore::Open(options);
    AZ_CHECK(opened.ok(), opened.status().ToString());
    store = std::move(opened).value();
  }
  ~Scratch() {
    store.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Scratch scratch;
  const std::string path = (scratch.dir / "snapshot").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const std::uint64_t before = scratch.store->Stats().size;
  const az::Result<az::replay::SnapshotInfo> loaded = az::replay::LoadSnapshot(*scratch.store, path);
  if (!loaded.ok()) {
    AZ_CHECK(scratch.store->Stats().size == before, "a refused snapshot changed the store");
  }
  return 0;
}
