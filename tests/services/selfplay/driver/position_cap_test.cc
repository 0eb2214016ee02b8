// RecentPositions (position_cap.h): a position is admitted at most `cap` times among the last
// `window` admissions, and admitted again once its earlier admissions leave the window.

#include "services/selfplay/driver/position_cap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <set>

namespace az::selfplay {
namespace {

TEST(RecentPositionsTest, AdmitsAPositionCapTimesAndRefusesItThen) {
  RecentPositions recent(/*cap=*/3, /*window=*/100);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(recent.Admit(42));
  EXPECT_FALSE(recent.Admit(42));
  EXPECT_FALSE(recent.Admit(42));
  EXPECT_TRUE(recent.Admit(7));  // another position has its own count
  EXPECT_EQ(recent.admitted_in_window(), 4u);
  EXPECT_EQ(recent.distinct_in_window(), 2u);
}

TEST(RecentPositionsTest, APositionIsAdmittedAgainOnceItsAdmissionsLeaveTheWindow) {
  RecentPositions recent(/*cap=*/1, /*window=*/3);
  EXPECT_TRUE(recent.Admit(1));
  EXPECT_FALSE(recent.Admit(1));
  EXPECT_TRUE(recent.Admit(2));
  EXPECT_TRUE(recent.Admit(3));
  EXPECT_FALSE(recent.Admit(1));  // still the window's oldest
  EXPECT_TRUE(recent.Admit(4));   // pushes 1 out
  EXPECT_TRUE(recent.Admit(1));
  EXPECT_EQ(recent.admitted_in_window(), 3u);
  EXPECT_EQ(recent.distinct_in_window(), 3u);  // 3, 4, 1
}

TEST(RecentPositionsTest, TheWindowNeverHoldsAPositionMoreThanCapTimes) {
  constexpr int kCap = 2;
  constexpr std::size_t kWindow = 50;
  RecentPositions recent(kCap, kWindow);
  std::array<std::uint64_t, kWindow> window{};  // what the window should hold, oldest overwritten
  std::size_t admitted = 0;
  std::uint64_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint64_t key = (x >> 33) % 20;  // 20 positions, drawn far more often than the cap
    int held = 0;
    for (std::size_t k = 0; k < std::min(admitted, kWindow); ++k) held += window[k] == key;
    EXPECT_EQ(recent.Admit(key), held < kCap) << "draw " << i;
    if (held < kCap) window[admitted++ % kWindow] = key;
  }
}

TEST(PositionKeyTest, EqualBytesShareAKeyAndDifferentBytesDoNot) {
  std::array<std::byte, 16> a{}, b{};
  a[3] = std::byte{1};
  b[3] = std::byte{1};
  EXPECT_EQ(PositionKey(a), PositionKey(b));
  std::set<std::uint64_t> keys;
  for (int i = 0; i < 16; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::array<std::byte, 16> c{};
      c[i] = std::byte(1u << bit);
      keys.insert(PositionKey(c));
    }
  }
  EXPECT_EQ(keys.size(), 128u);
}

}  // namespace
}  // namespace az::selfplay
