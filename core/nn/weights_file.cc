#include "core/nn/weights_file.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <span>
#include <sstream>

#include "core/nn/checksum.h"
#include "core/nn/file_io.h"

namespace az::nn {
namespace {

constexpr std::size_t kHeaderChecksumOffset = offsetof(WeightsFileHeader, header_checksum);
constexpr std::size_t kV1HeaderChecksumOffset = offsetof(WeightsFileHeaderV1, header_checksum);
// The bytes that say which header follows: magic, format_version, header_size.
constexpr std::size_t kPreambleSize = 16;

std::array<std::int32_t, 10> PackNet(const NetConfig& c) {
  return {c.blocks,      c.filters,         c.input_planes,   c.board_height, c.board_width,
          c.policy_size, c.policy_channels, c.value_channels, c.value_hidden, c.policy_cell_plane};
}

// The first nine fields are every version's; version 1 has no policy_cell_plane (a dense head).
NetConfig UnpackNet(std::span<const std::int32_t> n) {
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
  c.policy_cell_plane = n.size() > 9 ? n[9] : -1;
  return c;
}

template <typename Header>
std::uint64_t HeaderChecksum(const Header& header, std::size_t checksum_offset) {
  return Xxh64(std::as_bytes(std::span(&header, 1)).first(checksum_offset));
}

std::string Hex(std::uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << v;
  return out.str();
}

// A header of either version, as the reader needs it.
struct ParsedHeader {
  WeightsFileInfo info;
  std::uint32_t kind = 0;
  std::uint64_t header_size = 0;
  std::uint64_t payload_size = 0;
  std::uint64_t payload_checksum = 0;
  bool checksum_matches = false;
};

// The fields of a header of either version (`bytes` holds at least sizeof(Header)); the two
// versions name them alike.
template <typename Header>
ParsedHeader Parse(std::string_view bytes, std::size_t checksum_offset) {
  Header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  ParsedHeader parsed;
  parsed.header_size = h.header_size;
  parsed.kind = h.kind;
  parsed.info.net = UnpackNet(h.net);
  parsed.info.model_version = h.model_version;
  parsed.info.train_step = h.train_step;
  parsed.payload_size = h.payload_size;
  parsed.payload_checksum = h.payload_checksum;
  parsed.checksum_matches = HeaderChecksum(h, checksum_offset) == h.header_checksum;
  return parsed;
}

// The header at the start of `bytes` (at least kPreambleSize of the file's first bytes, the whole
// header when the file holds it), checked as far as the header alone can tell; `file_size` is the
// whole file's size.
Result<ParsedHeader> ReadHeader(std::string_view bytes, std::uint64_t file_size,
                                std::string_view name) {
  const std::string n(name);
  const auto too_short = [&](std::size_t header_size) {
    return DataLoss(n + " is truncated: " + std::to_string(file_size) +
                    " bytes, shorter than the " + std::to_string(header_size) + "-byte header");
  };
  if (bytes.size() < kPreambleSize) return too_short(sizeof(WeightsFileHeader));
  std::array<char, 8> magic;
  std::uint32_t version = 0;
  std::memcpy(magic.data(), bytes.data(), magic.size());
  std::memcpy(&version, bytes.data() + offsetof(WeightsFileHeader, format_version), sizeof version);
  if (magic != kWeightsMagic) {
    return DataLoss(n + " is not a network weights file (bad magic)");
  }
  if (version != kWeightsFormatVersion && version != 1) {
    return FailedPrecondition(n + " has weights format version " + std::to_string(version) +
                              "; this build reads versions 1 and " +
                              std::to_string(kWeightsFormatVersion));
  }
  const std::size_t expected_header =
      version == 1 ? sizeof(WeightsFileHeaderV1) : sizeof(WeightsFileHeader);
  if (bytes.size() < expected_header) return too_short(expected_header);
  ParsedHeader parsed = version == 1 ? Parse<WeightsFileHeaderV1>(bytes, kV1HeaderChecksumOffset)
                                     : Parse<WeightsFileHeader>(bytes, kHeaderChecksumOffset);
  if (!parsed.checksum_matches) {
    return DataLoss(n + " has a corrupt header (header checksum mismatch)");
  }
  if (parsed.header_size != expected_header) {
    return DataLoss(n + " declares a " + std::to_string(parsed.header_size) +
                    "-byte header; version " + std::to_string(version) + " headers are " +
                    std::to_string(expected_header) + " bytes");
  }
  if (parsed.kind != static_cast<std::uint32_t>(WeightsFileKind::kWeights) &&
      parsed.kind != static_cast<std::uint32_t>(WeightsFileKind::kCheckpoint)) {
    return DataLoss(n + " has unknown file kind " + std::to_string(parsed.kind));
  }
  const std::uint64_t expected = parsed.header_size + parsed.payload_size;
  if (file_size < expected) {
    return DataLoss(n + " is truncated: " + std::to_string(file_size) + " bytes, the header says " +
                    std::to_string(expected));
  }
  if (file_size > expected) {
    return DataLoss(n + " has " + std::to_string(file_size - expected) +
                    " unexpected trailing bytes after its payload");
  }
  parsed.info.kind = static_cast<WeightsFileKind>(parsed.kind);
  if (const Status s = parsed.info.net.Validate(); !s.ok()) {
    return DataLoss(n + " holds an impossible network config: " + s.message());
  }
  return parsed;
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
  header.reserved = 0;
  header.model_version = info.model_version;
  header.train_step = info.train_step;
  header.payload_size = payload.size();
  header.payload_checksum = Xxh64(std::as_bytes(std::span(payload.data(), payload.size())));
  header.header_checksum = HeaderChecksum(header, kHeaderChecksumOffset);
  const std::string_view header_bytes(reinterpret_cast<const char*>(&header), sizeof(header));
  return WriteFileAtomically(path, header_bytes, payload);
}

Result<WeightsFileContents> ParseWeightsFile(std::string data, std::string_view name) {
  AZ_ASSIGN_OR_RETURN(ParsedHeader header, ReadHeader(data, data.size(), name));
  const std::string_view payload = std::string_view(data).substr(header.header_size);
  const std::uint64_t checksum = Xxh64(std::as_bytes(std::span(payload.data(), payload.size())));
  if (checksum != header.payload_checksum) {
    return DataLoss(std::string(name) + " is corrupt: payload checksum " + Hex(checksum) +
                    " does not match the header's " + Hex(header.payload_checksum));
  }
  data.erase(0, header.header_size);
  return WeightsFileContents{header.info, std::move(data)};
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
  std::string bytes(std::min<std::uint64_t>(size, sizeof(WeightsFileHeader)), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!in) return FailedPrecondition("reading the header of " + path + " failed");
  AZ_ASSIGN_OR_RETURN(ParsedHeader header, ReadHeader(bytes, size, path));
  return header.info;
}

Status CheckSameShapes(const NetConfig& in_file, const NetConfig& expected, std::string_view name) {
  if (in_file == expected) return Status::Ok();
  return FailedPrecondition(std::string(name) + " holds a network of " + in_file.ToString() +
                            ", but this network is " + expected.ToString());
}

}  // namespace az::nn
