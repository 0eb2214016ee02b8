// Pins the shared-memory layouts. If one of these fails, a layout changed: bump its version
// constant (processes built before and after must refuse each other's segments), then update the
// pinned numbers here for the new version.

#include <gtest/gtest.h>

#include <cstddef>

#include "shm/request_channel_layout.h"
#include "shm/ring_layout.h"
#include "shm/segment_layout.h"

namespace az::shm {
namespace {

constexpr char kBump[] = "layout changed: bump the version constant and re-pin";

TEST(LayoutTest, SegmentHeaderIsPinnedToVersion1) {
  ASSERT_EQ(kSegmentHeaderVersion, 1u) << "new header version: pin its layout in this test";
  EXPECT_EQ(kSegmentMagic, 0x314745534d485a41u) << kBump;
  EXPECT_EQ(kSegmentPayloadOffset, 4096u) << kBump;
  EXPECT_EQ(sizeof(SegmentHeader), 256u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, magic), 0u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, header_version), 8u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, layout_kind), 12u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, layout_version), 16u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, record_bytes), 20u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, capacity), 24u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, total_bytes), 32u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, payload_offset), 40u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, payload_bytes), 48u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, creator_pid), 56u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, creator_start_ticks), 64u) << kBump;
  EXPECT_EQ(offsetof(SegmentHeader, created_unix_ns), 72u) << kBump;
  EXPECT_EQ(offsetof(SegmentPreamble, attached), 256u) << kBump;
  EXPECT_EQ(kMaxProcesses, 64) << kBump;
  EXPECT_EQ(sizeof(ProcessEntry), 32u) << kBump;
  EXPECT_EQ(offsetof(ProcessEntry, owner), 0u) << kBump;
  EXPECT_EQ(offsetof(ProcessEntry, handles), 8u) << kBump;
  EXPECT_EQ(offsetof(ProcessEntry, waiting), 12u) << kBump;
}

TEST(LayoutTest, RingIsPinnedToVersion1) {
  ASSERT_EQ(kRingLayoutVersion, 1u) << "new ring version: pin its layout in this test";
  EXPECT_EQ(kRingMagic, 0x31474e4952485a41u) << kBump;
  EXPECT_EQ(kRingLayoutKind, FourCc('R', 'I', 'N', 'G')) << kBump;
  EXPECT_EQ(offsetof(RingHeader, magic), 0u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, version), 8u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, record_bytes), 12u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, capacity), 16u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, slot_stride), 24u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, data_offset), 32u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, slots_offset), 40u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, total_bytes), 48u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, head), 128u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, tail), 256u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, not_empty), 384u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, not_full), 512u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, events), 640u) << kBump;
  EXPECT_EQ(offsetof(RingHeader, processes), 768u) << kBump;
  EXPECT_EQ(sizeof(RingHeader), 2816u) << kBump;
  EXPECT_EQ(sizeof(WaitCell), 16u) << kBump;
  EXPECT_EQ(offsetof(WaitCell, wake_pending), 8u) << kBump;
  EXPECT_EQ(sizeof(RingEventCounters), 32u) << kBump;
  // Slot word: | position 39 | state 3 | owner 22 |.
  EXPECT_EQ(kSlotPositionShift, 25) << kBump;
  EXPECT_EQ(MakeSlotWord(1, SlotState::kFree, 0), std::uint64_t{1} << 25) << kBump;
  EXPECT_EQ(MakeSlotWord(0, SlotState::kReading, 0), std::uint64_t{4} << 22) << kBump;
  EXPECT_EQ(MakeSlotWord(0, SlotState::kFree, 0x3fffff), 0x3fffffu) << kBump;
  EXPECT_EQ(static_cast<int>(SlotState::kOrphan), 5) << kBump;
}

TEST(LayoutTest, ChannelIsPinnedToVersion2) {
  ASSERT_EQ(kChannelLayoutVersion, 2u) << "new channel version: pin its layout in this test";
  EXPECT_EQ(kChannelMagic, 0x314e414843485a41u) << kBump;
  EXPECT_EQ(sizeof(Envelope), 16u) << kBump;
  EXPECT_EQ(offsetof(Envelope, worker_id), 0u) << kBump;
  EXPECT_EQ(offsetof(Envelope, generation), 4u) << kBump;
  EXPECT_EQ(offsetof(Envelope, request_id), 8u) << kBump;
  EXPECT_EQ(sizeof(ChannelHeader), 256u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, max_workers), 12u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, request_bytes), 16u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, response_bytes), 20u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, request_capacity), 24u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, response_capacity), 32u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, workers_offset), 40u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, request_ring_offset), 48u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, response_rings_offset), 56u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, response_ring_stride), 64u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, total_bytes), 72u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, servers_lost), 80u) << kBump;
  EXPECT_EQ(offsetof(ChannelHeader, servers), 88u) << kBump;
  EXPECT_EQ(kMaxWatchedServers, 8) << kBump;
  EXPECT_EQ(sizeof(WorkerSlot), 64u) << kBump;
  EXPECT_EQ(offsetof(WorkerSlot, owner), 0u) << kBump;
  EXPECT_EQ(offsetof(WorkerSlot, generation), 8u) << kBump;
}

TEST(SlotWordTest, FieldsRoundTripAndPositionsCompareAcrossTheWrap) {
  const std::uint64_t word = MakeSlotWord(123456789, SlotState::kWriting, 4194303);
  EXPECT_EQ(SlotPosition(word), 123456789u);
  EXPECT_EQ(SlotStateOf(word), SlotState::kWriting);
  EXPECT_EQ(SlotOwner(word), 4194303u);
  // Positions are kept modulo 2^39: a slot position just past the wrap is still "ahead".
  const std::uint64_t wrap = std::uint64_t{1} << 39;
  EXPECT_EQ(PositionDiff(SlotPosition(MakeSlotWord(wrap + 3, SlotState::kFree, 0)), wrap - 5), 8);
  EXPECT_EQ(PositionDiff(SlotPosition(MakeSlotWord(wrap - 5, SlotState::kFull, 0)), wrap + 3), -8);
  EXPECT_EQ(PositionDiff(7, 7), 0);
}

}  // namespace
}  // namespace az::shm
