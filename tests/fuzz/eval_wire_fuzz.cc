// libFuzzer target: the eval wire format (services/common/eval_protocol.h) as the evaluator reads
// requests and self-play reads answers out of shared memory, which any process of the run may have
// written: every game's request record and response header, from arbitrary bytes. The first byte
// picks the game; the rest fills the record (zero-padded).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "core/games/registry.h"
#include "services/common/eval_protocol.h"

namespace {

template <typename G>
void ReadBoth(std::span<const std::byte> bytes) {
  using az::service::EvalRequest;
  using az::service::EvalResponse;
  std::vector<std::byte> request(sizeof(EvalRequest<G>));
  std::memcpy(request.data(), bytes.data(), std::min(bytes.size(), request.size()));
  EvalRequest<G> parsed;
  (void)az::service::ReadEvalRequest<G>(request, parsed);

  std::vector<std::byte> response(sizeof(EvalResponse<G>));
  std::memcpy(response.data(), bytes.data(), std::min(bytes.size(), response.size()));
  az::service::EvalResponseHeader header;
  const int expected = bytes.empty() ? 0 : static_cast<int>(bytes[0]);
  if (az::service::ReadEvalResponseHeader<G>(response, expected, header).ok() &&
      header.status == static_cast<std::uint8_t>(az::service::EvalStatus::kOk)) {
    std::vector<float> priors(header.num_moves);
    az::service::CopyPriors<G>(response, priors);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  int index = 0;
  const int pick = data[0] % static_cast<int>(az::games::AllGames().size());
  az::games::ForEachGame([&]<az::games::GameDefinition G>() {
    if (index++ == pick) ReadBoth<G>(bytes);
  });
  return 0;
}
