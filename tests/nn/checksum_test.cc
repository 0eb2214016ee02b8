#include "core/nn/checksum.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace az::nn {
namespace {

std::uint64_t HashOf(const std::string& s) {
  return Xxh64(std::as_bytes(std::span(s.data(), s.size())));
}

// Vectors from the reference implementation (libxxhash 0.8.1, XXH64 with seed 0). They cover the
// empty input, the 1-, 4- and 8-byte tails and the 32-byte stripe loop.
TEST(Xxh64Test, MatchesReferenceImplementation) {
  EXPECT_EQ(HashOf(""), 0xef46db3751d8e999ULL);
  EXPECT_EQ(HashOf("a"), 0xd24ec4f1a98c6e5bULL);
  EXPECT_EQ(HashOf("abc"), 0x44bc2cf5ad770999ULL);
  EXPECT_EQ(HashOf(std::string(100, 'x')), 0x92f0de5a88a3c094ULL);
  EXPECT_EQ(HashOf("0123456789abcdefghijklmnopqrstuvwxyz0123456789"), 0x4ae5684cd402fbb4ULL);
}

TEST(Xxh64Test, EveryFlippedBitChangesTheHash) {
  std::vector<std::byte> data(257);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 31 + 7);
  const std::uint64_t original = Xxh64(data);
  for (std::size_t i = 0; i < data.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      data[i] ^= static_cast<std::byte>(1 << bit);
      EXPECT_NE(Xxh64(data), original) << "byte " << i << " bit " << bit;
      data[i] ^= static_cast<std::byte>(1 << bit);
    }
  }
  EXPECT_EQ(Xxh64(data), original);
}

TEST(Xxh64Test, SeedChangesTheHash) {
  const std::string s = "weights";
  EXPECT_NE(Xxh64(std::as_bytes(std::span(s.data(), s.size())), 1), HashOf(s));
}

}  // namespace
}  // namespace az::nn
