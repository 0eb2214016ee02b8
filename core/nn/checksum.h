#pragma once

// XXH64 (Yann Collet's xxHash, 64-bit variant): a fast, well-distributed checksum for weights
// files. Not cryptographic: it detects truncation and corruption, not tampering. Output matches the
// reference implementation (tests/nn/checksum_test.cc pins its published test vectors).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace az::nn {

std::uint64_t Xxh64(std::span<const std::byte> data, std::uint64_t seed = 0);

// "xxh64:<16 hex digits>": how model events and az-relay name a weights file's checksum.
std::string Xxh64Text(std::span<const std::byte> data);

}  // namespace az::nn
