#include "services/selfplay/sample_ring_sink.h"

#include "core/base/check.h"

namespace az::selfplay {

Result<std::size_t> SampleRingSink::Push(std::span<const std::byte> records,
                                         std::chrono::milliseconds timeout) {
  const std::size_t size = ring_.record_bytes();
  AZ_CHECK(records.size() % size == 0, "sample records of another size");
  const std::size_t n = records.size() / size;
  for (std::size_t i = 0; i < n; ++i) {
    const Status status = ring_.Push(records.subspan(i * size, size), timeout);
    if (!status.ok()) {
      if (i > 0) return i;
      return status;
    }
  }
  return n;
}

}  // namespace az::selfplay
