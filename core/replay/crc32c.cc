#include "core/replay/crc32c.h"

#include <array>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace az::replay {
namespace {

constexpr std::uint32_t kPolynomial = 0x82f63b78;  // reflected Castagnoli polynomial

constexpr std::array<std::uint32_t, 256> MakeTable() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kTable = MakeTable();

}  // namespace

std::uint32_t Crc32cExtend(std::uint32_t crc, std::span<const std::byte> bytes) {
  std::uint32_t state = ~crc;
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
#if defined(__SSE4_2__)
  std::uint64_t wide = state;
  while (n >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    wide = _mm_crc32_u64(wide, word);
    p += 8;
    n -= 8;
  }
  state = static_cast<std::uint32_t>(wide);
#endif
  while (n > 0) {
    state = kTable[(state ^ static_cast<std::uint8_t>(*p)) & 0xff] ^ (state >> 8);
    ++p;
    --n;
  }
  return ~state;
}

}  // namespace az::replay
