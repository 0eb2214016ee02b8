#include "core/nn/net_config.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <sstream>
#include <string_view>

#include "core/nn/game_network.h"

namespace az::nn {
namespace {

Status CheckRange(std::string_view name, std::int32_t value, std::int32_t lo, std::int32_t hi) {
  if (value >= lo && value <= hi) return Status::Ok();
  std::ostringstream msg;
  msg << "network config: " << name << " = " << value << " is outside [" << lo << ", " << hi << "]";
  return InvalidArgument(msg.str());
}

}  // namespace

// The games' own definitions (core/games/<game>) hold their default networks; these name them.
NetConfig NetConfig::ChessSmall() { return DefaultNetConfig<games::Chess>(); }

NetConfig NetConfig::ChessFull() {
  NetConfig config = ChessSmall();
  config.blocks = 15;
  config.filters = 192;
  return config;
}

NetConfig NetConfig::ConnectFour() { return DefaultNetConfig<games::ConnectFour>(); }

Status NetConfig::Validate() const {
  AZ_RETURN_IF_ERROR(CheckRange("blocks", blocks, 0, 128));
  AZ_RETURN_IF_ERROR(CheckRange("filters", filters, 1, 4096));
  AZ_RETURN_IF_ERROR(CheckRange("input_planes", input_planes, 1, 4096));
  AZ_RETURN_IF_ERROR(CheckRange("board_height", board_height, 1, 64));
  AZ_RETURN_IF_ERROR(CheckRange("board_width", board_width, 1, 64));
  AZ_RETURN_IF_ERROR(CheckRange("policy_size", policy_size, 1, 1 << 20));
  AZ_RETURN_IF_ERROR(CheckRange("policy_channels", policy_channels, 1, 256));
  AZ_RETURN_IF_ERROR(CheckRange("value_channels", value_channels, 1, 256));
  AZ_RETURN_IF_ERROR(CheckRange("value_hidden", value_hidden, 1, 8192));
  if (policy_cell_plane != -1) {
    AZ_RETURN_IF_ERROR(CheckRange("policy_cell_plane", policy_cell_plane, 0, input_planes - 1));
    if (policy_size != board_width) {
      return InvalidArgument("network config: a policy read at plane " +
                             std::to_string(policy_cell_plane) + " needs one action per column (" +
                             "policy_size " + std::to_string(policy_size) + ", board_width " +
                             std::to_string(board_width) + ")");
    }
  }
  return Status::Ok();
}

std::string NetConfig::ToString() const {
  std::ostringstream out;
  out << blocks << "x" << filters << ", " << input_planes << " planes " << board_height << "x"
      << board_width << ", policy " << policy_size << " (" << policy_channels << " ch";
  if (policy_cell_plane >= 0) out << ", read at plane " << policy_cell_plane;
  out << "), value " << value_channels << " ch -> " << value_hidden << " -> 3";
  return out.str();
}

bool CpuHasNativeBf16() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(1, 0, eax, ebx, ecx, edx);
  if ((ecx & (1u << 27)) == 0) return false;  // OSXSAVE: XGETBV is usable
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  const bool os_avx512 = (xcr0_lo & 0xE6u) == 0xE6u;  // SSE, AVX, opmask, ZMM state
  __cpuid_count(7, 1, eax, ebx, ecx, edx);
  const bool avx512_bf16 = (eax & (1u << 5)) != 0;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool amx_bf16 = (edx & (1u << 22)) != 0;
  return os_avx512 && (avx512_bf16 || amx_bf16);
#else
  return false;
#endif
}

bool ResolveCpuBf16(std::string_view choice) {
  if (choice == "auto") return CpuHasNativeBf16();
  return choice == "on";
}

Status RuntimeOptions::Validate() const {
  if (intra_op_threads < 0 || intra_op_threads > 1024) {
    return InvalidArgument("runtime: intra_op_threads = " + std::to_string(intra_op_threads) +
                           " is outside [0, 1024]");
  }
  return Status::Ok();
}

}  // namespace az::nn
