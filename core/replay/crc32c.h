#pragma once

// CRC-32C (Castagnoli), the checksum of snapshot files. Uses the SSE4.2 instruction when the build
// targets it, a table otherwise; both give the same values (RFC 3720 test vectors).

#include <cstddef>
#include <cstdint>
#include <span>

namespace az::replay {

// Extends `crc` (the value returned for the bytes before, 0 for none) over `bytes`.
std::uint32_t Crc32cExtend(std::uint32_t crc, std::span<const std::byte> bytes);

inline std::uint32_t Crc32c(std::span<const std::byte> bytes) { return Crc32cExtend(0, bytes); }

}  // namespace az::replay
