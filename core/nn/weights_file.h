#pragma once

// The on-disk envelope of network weights and training checkpoints: a fixed 96-byte header followed
// by a payload (a LibTorch archive, written by core/nn/torch_weights.h). The header carries the
// network's shapes, so a file for another network is refused before its payload is parsed, and two
// XXH64 checksums (header, payload), so a truncated or corrupted file is refused with a message
// that says which. Files are replaced atomically, so a reader never sees a torn file.
//
// Layout (little-endian, format version 2, written since 2026-12-01):
//   0   magic "AZNNWGT1"            8 bytes
//   8   format_version (2)          u32
//   12  header_size (104)           u32
//   16  kind (1 weights, 2 ckpt)    u32
//   20  net config, 10 x i32        blocks, filters, input_planes, board_height, board_width,
//                                   policy_size, policy_channels, value_channels, value_hidden,
//                                   policy_cell_plane
//   60  reserved                    u32  0
//   64  model_version               u64  (the "model N" the learner published)
//   72  train_step                  u64
//   80  payload_size                u64
//   88  payload_checksum            u64  XXH64 of the payload
//   96  header_checksum             u64  XXH64 of bytes [0, 96)
// Format version 1 (until 2026-12-01) is still read: a 96-byte header with the first nine net
// fields at 20 (a dense policy head: policy_cell_plane -1) and the u64s from 56 on, its checksum
// over [0, 88) (WeightsFileHeaderV1).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/base/status.h"
#include "core/nn/net_config.h"

namespace az::nn {

inline constexpr std::array<char, 8> kWeightsMagic = {'A', 'Z', 'N', 'N', 'W', 'G', 'T', '1'};
inline constexpr std::uint32_t kWeightsFormatVersion = 2;

enum class WeightsFileKind : std::uint32_t {
  kWeights = 1,     // the model's parameters and BatchNorm statistics
  kCheckpoint = 2,  // the same, plus optimizer state, step and loss-scaler state
};

struct WeightsFileHeader {
  std::array<char, 8> magic;
  std::uint32_t format_version;
  std::uint32_t header_size;
  std::uint32_t kind;
  std::array<std::int32_t, 10> net;
  std::uint32_t reserved;
  std::uint64_t model_version;
  std::uint64_t train_step;
  std::uint64_t payload_size;
  std::uint64_t payload_checksum;
  std::uint64_t header_checksum;
};
static_assert(std::is_trivially_copyable_v<WeightsFileHeader>);
static_assert(sizeof(WeightsFileHeader) == 104);
static_assert(alignof(WeightsFileHeader) == 8);
static_assert(offsetof(WeightsFileHeader, net) == 20);
static_assert(offsetof(WeightsFileHeader, model_version) == 64);
static_assert(offsetof(WeightsFileHeader, header_checksum) == 96);

// Format version 1's header, read only.
struct WeightsFileHeaderV1 {
  std::array<char, 8> magic;
  std::uint32_t format_version;
  std::uint32_t header_size;
  std::uint32_t kind;
  std::array<std::int32_t, 9> net;
  std::uint64_t model_version;
  std::uint64_t train_step;
  std::uint64_t payload_size;
  std::uint64_t payload_checksum;
  std::uint64_t header_checksum;
};
static_assert(sizeof(WeightsFileHeaderV1) == 96);
static_assert(offsetof(WeightsFileHeaderV1, model_version) == 56);
static_assert(offsetof(WeightsFileHeaderV1, header_checksum) == 88);

struct WeightsFileInfo {
  WeightsFileKind kind = WeightsFileKind::kWeights;
  NetConfig net;
  std::uint64_t model_version = 0;
  std::uint64_t train_step = 0;
};

struct WeightsFileContents {
  WeightsFileInfo info;
  std::string payload;
};

// Writes header + payload atomically (core/nn/file_io.h). Errors as WriteFileAtomically.
Status WriteWeightsFile(const std::string& path, const WeightsFileInfo& info,
                        std::string_view payload);

// Reads and verifies a whole file. NOT_FOUND when it is missing; DATA_LOSS when it is truncated,
// has trailing bytes, is not one of our files, or a checksum does not match (the message says
// which); FAILED_PRECONDITION for a format version other than 1 and 2.
Result<WeightsFileContents> ReadWeightsFile(const std::string& path);

// Verifies an in-memory image (header + payload); `name` is used in messages. Errors as above.
Result<WeightsFileContents> ParseWeightsFile(std::string data, std::string_view name);

// Reads and verifies only the header (e.g. to create a network of the file's shapes before loading
// it). Errors as ReadWeightsFile, except that the payload is not checksummed.
Result<WeightsFileInfo> ReadWeightsFileInfo(const std::string& path);

// FAILED_PRECONDITION "<name> holds a network of <file shapes>, but this network is <expected>"
// unless the shapes are equal.
Status CheckSameShapes(const NetConfig& in_file, const NetConfig& expected, std::string_view name);

std::string_view WeightsFileKindName(WeightsFileKind kind);

}  // namespace az::nn
