// The weights-file envelope: round trip, and every kind of damage refused with a message that says
// which. (Real network weights end to end: network_test.cc.) Torch-free: this executable does not
// load LibTorch.

#include "core/nn/weights_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <span>

#include "core/nn/checksum.h"
#include "core/nn/file_io.h"
#include "tests/nn/test_util.h"

namespace az::nn {
namespace {

using ::testing::HasSubstr;

WeightsFileInfo SomeInfo() {
  WeightsFileInfo info;
  info.kind = WeightsFileKind::kWeights;
  info.net = NetConfig::ChessFull();
  info.model_version = 42;
  info.train_step = 1234;
  return info;
}

std::string Slurp(const std::string& path) { return ReadWholeFile(path).value(); }

void Overwrite(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

TEST(WeightsFileTest, RoundTripsHeaderAndPayload) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  const std::string payload = "pretend this is a torch archive";
  ASSERT_TRUE(WriteWeightsFile(path, SomeInfo(), payload).ok());
  const Result<WeightsFileContents> read = ReadWeightsFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->payload, payload);
  EXPECT_EQ(read->info.net, NetConfig::ChessFull());
  EXPECT_EQ(read->info.model_version, 42u);
  EXPECT_EQ(read->info.train_step, 1234u);
  EXPECT_EQ(read->info.kind, WeightsFileKind::kWeights);
  EXPECT_EQ(Slurp(path).size(), sizeof(WeightsFileHeader) + payload.size());
  // Only the file itself is left in the directory: the temporary was renamed over it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
  const Result<WeightsFileInfo> info = ReadWeightsFileInfo(path);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->model_version, 42u);
}

TEST(WeightsFileTest, MissingFileIsNotFound) {
  testing::ScratchDir dir;
  EXPECT_EQ(ReadWeightsFile(dir.File("nope.bin")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadWeightsFileInfo(dir.File("nope.bin")).status().code(), StatusCode::kNotFound);
}

TEST(WeightsFileTest, TruncatedPayloadIsRefused) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  ASSERT_TRUE(WriteWeightsFile(path, SomeInfo(), std::string(1000, 'p')).ok());
  const std::string data = Slurp(path);
  Overwrite(path, data.substr(0, data.size() - 10));
  const Status status = ReadWeightsFile(path).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("truncated"));
  EXPECT_THAT(ReadWeightsFileInfo(path).status().message(), HasSubstr("truncated"));
}

TEST(WeightsFileTest, TruncatedHeaderIsRefused) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  ASSERT_TRUE(WriteWeightsFile(path, SomeInfo(), "payload").ok());
  Overwrite(path, Slurp(path).substr(0, 50));
  const Status status = ReadWeightsFile(path).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("shorter than the 104-byte header"));
}

TEST(WeightsFileTest, TrailingBytesAreRefused) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  ASSERT_TRUE(WriteWeightsFile(path, SomeInfo(), "payload").ok());
  Overwrite(path, Slurp(path) + "xx");
  EXPECT_THAT(ReadWeightsFile(path).status().message(), HasSubstr("2 unexpected trailing bytes"));
}

TEST(WeightsFileTest, FlippedPayloadByteIsRefusedAsCorrupt) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  ASSERT_TRUE(WriteWeightsFile(path, SomeInfo(), std::string(1000, 'p')).ok());
  std::string data = Slurp(path);
  data[sizeof(WeightsFileHeader) + 500] ^= 0x01;
  Overwrite(path, data);
  const Status status = ReadWeightsFile(path).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("payload checksum"));
}

TEST(WeightsFileTest, FlippedHeaderByteIsRefusedAsCorrupt) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  ASSERT_TRUE(WriteWeightsFile(path, SomeInfo(), "payload").ok());
  std::string data = Slurp(path);
  data[offsetof(WeightsFileHeader, net) + 4] ^= 0x01;  // filters: 192 -> 193
  Overwrite(path, data);
  const Status status = ReadWeightsFile(path).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("corrupt header"));
}

TEST(WeightsFileTest, ForeignFileIsRefused) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  Overwrite(path, std::string(200, 'z'));
  const Status status = ReadWeightsFile(path).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("not a network weights file"));
}

TEST(WeightsFileTest, OtherFormatVersionIsRefusedByNumber) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  ASSERT_TRUE(WriteWeightsFile(path, SomeInfo(), "payload").ok());
  std::string data = Slurp(path);
  data[offsetof(WeightsFileHeader, format_version)] = 7;
  Overwrite(path, data);
  const Status status = ReadWeightsFile(path).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("format version 7; this build reads versions 1 and 2"));
}

// Connect Four's preset reads its policy at the landing cells; the file keeps that, so a network
// of the other head is refused as another shape.
TEST(WeightsFileTest, RoundTripsThePolicyCellPlane) {
  testing::ScratchDir dir;
  const std::string path = dir.File("w.bin");
  WeightsFileInfo info = SomeInfo();
  info.net = NetConfig::ConnectFour();
  ASSERT_EQ(info.net.policy_cell_plane, 3);
  ASSERT_TRUE(WriteWeightsFile(path, info, "payload").ok());
  const Result<WeightsFileInfo> read = ReadWeightsFileInfo(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->net, NetConfig::ConnectFour());
  NetConfig dense = NetConfig::ConnectFour();
  dense.policy_cell_plane = -1;
  const Status status = CheckSameShapes(read->net, dense, path);
  EXPECT_THAT(status.message(), HasSubstr("policy 7 (8 ch, read at plane 3)"));
}

// Files written before the cell plane existed (format version 1: a 96-byte header with nine net
// fields) still load, as networks with the dense policy head.
TEST(WeightsFileTest, ReadsFormatVersionOneAsADenseHead) {
  testing::ScratchDir dir;
  const std::string path = dir.File("v1.bin");
  const std::string payload = "an old torch archive";
  WeightsFileHeaderV1 h{};
  h.magic = kWeightsMagic;
  h.format_version = 1;
  h.header_size = sizeof(WeightsFileHeaderV1);
  h.kind = static_cast<std::uint32_t>(WeightsFileKind::kCheckpoint);
  const NetConfig c = NetConfig::ChessSmall();
  h.net = {c.blocks,      c.filters,         c.input_planes,   c.board_height, c.board_width,
           c.policy_size, c.policy_channels, c.value_channels, c.value_hidden};
  h.model_version = 7;
  h.train_step = 700;
  h.payload_size = payload.size();
  h.payload_checksum = Xxh64(std::as_bytes(std::span(payload.data(), payload.size())));
  h.header_checksum =
      Xxh64(std::as_bytes(std::span(&h, 1)).first(offsetof(WeightsFileHeaderV1, header_checksum)));
  Overwrite(path, std::string(reinterpret_cast<const char*>(&h), sizeof h) + payload);
  const Result<WeightsFileContents> read = ReadWeightsFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->payload, payload);
  EXPECT_EQ(read->info.net, c);
  EXPECT_EQ(read->info.net.policy_cell_plane, -1);
  EXPECT_EQ(read->info.kind, WeightsFileKind::kCheckpoint);
  EXPECT_EQ(read->info.model_version, 7u);
  EXPECT_EQ(read->info.train_step, 700u);
  const Result<WeightsFileInfo> info = ReadWeightsFileInfo(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->train_step, 700u);
  // Damage to it is still found.
  std::string data = Slurp(path);
  data[offsetof(WeightsFileHeaderV1, model_version)] ^= 0x01;
  Overwrite(path, data);
  EXPECT_THAT(ReadWeightsFile(path).status().message(), HasSubstr("corrupt header"));
}

TEST(WeightsFileTest, ShapeMismatchNamesBothShapes) {
  const Status status = CheckSameShapes(NetConfig::ChessFull(), NetConfig::ChessSmall(), "f.bin");
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("f.bin holds a network of 15x192"));
  EXPECT_THAT(status.message(), HasSubstr("this network is 6x64"));
  EXPECT_TRUE(CheckSameShapes(NetConfig::ChessFull(), NetConfig::ChessFull(), "f.bin").ok());
}

TEST(NetConfigTest, PresetsAreValidAndBadFieldsAreNamed) {
  EXPECT_TRUE(NetConfig::ChessSmall().Validate().ok());
  EXPECT_TRUE(NetConfig::ChessFull().Validate().ok());
  EXPECT_TRUE(NetConfig::ConnectFour().Validate().ok());
  NetConfig bad = NetConfig::ChessSmall();
  bad.policy_size = 0;
  const Status status = bad.Validate();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("policy_size = 0"));
  EXPECT_EQ(NetConfig::ChessFull().ToString(),
            "15x192, 122 planes 8x8, policy 4672 (2 ch), value 1 ch -> 256 -> 3");
  // A cell-read policy names its plane, which must be an input plane, and needs one action per
  // column.
  EXPECT_EQ(NetConfig::ConnectFour().ToString(),
            "3x32, 7 planes 6x7, policy 7 (8 ch, read at plane 3), value 32 ch -> 64 -> 3");
  NetConfig cells = NetConfig::ConnectFour();
  cells.policy_cell_plane = 7;
  EXPECT_THAT(cells.Validate().message(), HasSubstr("policy_cell_plane = 7 is outside [0, 6]"));
  NetConfig chess = NetConfig::ChessSmall();
  chess.policy_cell_plane = 0;
  EXPECT_THAT(chess.Validate().message(), HasSubstr("needs one action per column"));
}

}  // namespace
}  // namespace az::nn
