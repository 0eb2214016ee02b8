// Regenerates the checked-in version-1 snapshot used by snapshot_test:
//   build/bin/az_replay_make_v1_snapshot tests/replay/data/snapshot_v1.azsnap

#include <cstdio>

#include "tests/replay/snapshot_v1_writer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
    return 2;
  }
  namespace t = az::replay::testing;
  const az::Status status =
      t::WriteSnapshotV1(argv[1], t::kV1RecordSize, t::kV1Alpha, t::CheckedInV1Records());
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
