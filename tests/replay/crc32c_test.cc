#include "core/replay/crc32c.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace az::replay {
namespace {

std::span<const std::byte> Bytes(std::string_view text) {
  return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

TEST(Crc32cTest, MatchesPublishedCheckValues) {
  EXPECT_EQ(Crc32c(Bytes("123456789")), 0xe3069283u);  // the CRC catalogue's check value
  std::vector<std::byte> zeros(32, std::byte{0});
  EXPECT_EQ(Crc32c(zeros), 0x8a9136aau);  // RFC 3720, B.4
  std::vector<std::byte> ones(32, std::byte{0xff});
  EXPECT_EQ(Crc32c(ones), 0x62a8ab43u);
  EXPECT_EQ(Crc32c({}), 0u);
}

TEST(Crc32cTest, ExtendingPieceByPieceEqualsTheWhole) {
  const std::string_view text = "prioritized experience replay, stored and checked";
  const std::uint32_t whole = Crc32c(Bytes(text));
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    EXPECT_EQ(Crc32cExtend(Crc32c(Bytes(text.substr(0, cut))), Bytes(text.substr(cut))), whole);
  }
}

TEST(Crc32cTest, DetectsASingleFlippedBit) {
  std::vector<std::byte> data(4096, std::byte{0x5a});
  const std::uint32_t clean = Crc32c(data);
  for (std::size_t i = 0; i < data.size(); i += 97) {
    data[i] ^= std::byte{0x10};
    EXPECT_NE(Crc32c(data), clean);
    data[i] ^= std::byte{0x10};
  }
}

}  // namespace
}  // namespace az::replay
