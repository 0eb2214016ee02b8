#include "core/nn/weights_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "core/nn/checksum.h"
#include "core/nn/file_io.h"

namespace az::nn {
namespace {

constexpr std::size_t kHeaderChecksumOffset = offsetof(WeightsFileHeader, header_checksum);

std::array<std::int32_t, 9> PackNet(const NetConfig& c) {
  return {c.blocks,      c.filters,         c.input_planes,   c.board_height, c.board_width,
          c.policy_size, c.policy_channels, c.value_channels, c.value_hidden};
}

NetConfig UnpackNet(const std::array<std::int32_t, 9>& n) {
  NetConfig c;
  c.blocks = n[0];
  c.filters = n[1];
  c.input_planes = n[2];
  c.board_height = n[3];
  c.board_width = n[4];
  c.policy_size = n[5];
  c.policy_channels = n[6];
  c.value_channels = n[7];
  c.value_hidden = n[8];
  return c;
}

std::uint64_t HeaderChecksum(const WeightsFileHeader& header) {
  return Xxh64(std::as_bytes(std::span(&header, 1)).first(kHeaderChecksumOffset));
}

std::string Hex(std::uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << v;
  return out.str();
}

// Checks everything the header alone can tell; `file_size` is the whole file's size.
Result<WeightsFileInfo> VerifyHeader(const WeightsFileHeader& header, std::uint64_t file_size,
                                     std::string_view name) {
  const std::string n(name);
  if (header.magic != kWeightsMagic) {
    return DataLoss(n + " is not a network weights file (bad magic)");
  }
  if (header.format_version != kWeightsFormatVersion) {
    return FailedPrecondition(
        n + " has weights format version " + std::to_string(header.format_version) +
        "; this build reads version " + std::to_string(kWeightsFormatVersion));
  }
  if (HeaderChecksum(header) != header.header_checksum) {
    return DataLoss(n + " has a corrupt header (header checksum mismatch)");
  }
  if (header.header_size != sizeof(WeightsFileHeader)) {
    return DataLoss(n + " declares a " + std::to_string(header.header_size) +
                    "-byte header; version 1 headers are 96 bytes");
  }
  if (header.kind != static_cast<std::uint32_t>(WeightsFileKind::kWeights) &&
      header.kind != static_cast<std::uint32_t>(WeightsFileKind::kCheckpoint)) {
    return DataLoss(n + " has unknown file kind " + std::to_string(header.kind));
  }
  const std::uint64_t expected = sizeof(WeightsFileHeader) + header.payload_size;
  if (file_size < expected) {
    return DataLoss(n + " is truncated: " + std::to_string(file_size) + " bytes, the header says " +
                    std::to_string(expected));
  }
  if (file_size > expected) {
    return DataLoss(n + " has " + std::to_string(file_size - expected) +
                    " unexpected trailing bytes after its payload");
  }
  WeightsFileInfo info;
  info.kind = static_cast<WeightsFileKind>(header.kind);
  info.net = UnpackNet(header.net);
  info.model_version = header.model_version;
  info.train_step = header.train_step;
  if (const Status s = info.net.Validate(); !s.ok()) {
    return DataLoss(n + " holds an impossible network config: " + s.message());
  }
  return info;
}

}  // namespace

std::string_view WeightsFileKindName(WeightsFileKind kind) {
  switch (kind) {
    case WeightsFileKind::kWeights: return "weights";
    case WeightsFileKind::kCheckpoint: return "checkpoint";
  }
  return "unknown";
}

Status WriteWeightsFile(const std::string& path, const WeightsFileInfo& info,
                        std::string_view payload) {
  WeightsFileHeader header{};
  header.magic = kWeightsMagic;
  header.format_version = kWeightsFormatVersion;
  header.header_size = sizeof(WeightsFileHeader);
  header.kind = static_cast<std::uint32_t>(info.kind);
  header.net = PackNet(info.net);
  header.model_version = info.model_version;
  header.train_step = info.train_step;
  header.payload_size = payload.size();
  header.payload_checksum = Xxh64(std::as_bytes(std::span(payload.data(), payload.size())));
  header.header_checksum = HeaderChecksum(header);
  const std::string_view header_bytes(reinterpret_cast<const char*>(&header), sizeof(header));
  return WriteFileAtomically(path, header_bytes, payload);
}

Result<WeightsFileContents> ParseWeightsFile(std::string data, std::string_view name) {
  if (data.size() < sizeof(WeightsFileHeader)) {
    return DataLoss(std::string(name) + " is truncated: " + std::to_string(data.size()) +
                    " bytes, shorter than the " + std::to_string(sizeof(WeightsFileHeader)) +
                    "-byte header");
  }
  WeightsFileHeader header;
  std::memcpy(&header, data.data(), sizeof(header));
  AZ_ASSIGN_OR_RETURN(WeightsFileInfo info, VerifyHeader(header, data.size(), name));
  const std::string_view payload = std::string_view(data).substr(sizeof(header));
  const std::uint64_t checksum = Xxh64(std::as_bytes(std::span(payload.data(), payload.size())));
  if (checksum != header.payload_checksum) {
    return DataLoss(std::string(name) + " is corrupt: payload checksum " + Hex(checksum) +
                    " does not match the header's " + Hex(header.payload_checksum));
  }
  data.erase(0, sizeof(header));
  return WeightsFileContents{info, std::move(data)};
}

Result<WeightsFileContents> ReadWeightsFile(const std::string& path) {
  AZ_ASSIGN_OR_RETURN(std::string data, ReadWholeFile(path));
  return ParseWeightsFile(std::move(data), path);
}

Result<WeightsFileInfo> ReadWeightsFileInfo(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("opening " + path + ": cannot open (missing or unreadable)");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  if (size < sizeof(WeightsFileHeader)) {
    return DataLoss(path + " is truncated: " + std::to_string(size) + " bytes, shorter than the " +
                    std::to_string(sizeof(WeightsFileHeader)) + "-byte header");
  }
  WeightsFileHeader header;
  in.read(reinterpret_cast<char*>(&header), sizeof(header));
  if (!in) return FailedPrecondition("reading the header of " + path + " failed");
  return VerifyHeader(header, size, path);
}

Status CheckSameShapes(const NetConfig& in_file, const NetConfig& expected, std::string_view name) {
  if (in_file == expected) return Status::Ok();
  return FailedPrecondition(std::string(name) + " holds a network of " + in_file.ToString() +
                            ", but this network is " + expected.ToString());
}

}  // namespace az::nn
