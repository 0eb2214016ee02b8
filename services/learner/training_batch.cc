#include "services/learner/training_batch.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/encoding/move_index.h"
#include "core/encoding/planes.h"
#include "core/games/connect_four_encoder.h"
#include "core/sample/chess_sample.h"
#include "core/sample/connect_four_sample.h"

namespace az::learner {
namespace {

// What differs between games: the sample type, its checks, its policy and its encoder.
struct ChessTraits {
  using Sample = sample::ChessSample;
  static constexpr const char* kName = "chess";
  static constexpr nn::InputLayout kLayout = nn::InputLayout::kNhwc;

  static Status Validate(const Sample& s) {
    AZ_RETURN_IF_ERROR(sample::ValidateSample(s));
    return sample::CheckPolicyIsLegal(s);
  }
  static void AppendPolicy(const Sample& s, std::vector<nn::PolicyEntry>& out) {
    for (const sample::PolicyEntry& e : sample::Policy(s)) {
      if (e.probability > 0) out.push_back({e.index, sample::Probability(e)});
    }
  }
  static void Encode(const Sample& s, float* dst) {
    encoding::EncodePlanes(s.position, {dst, static_cast<std::size_t>(encoding::kInputFloats)});
  }
  static bool Fits(const nn::NetConfig& net) {
    return net.input_planes == encoding::kNumPlanes && net.board_height == 8 &&
           net.board_width == 8 && net.policy_size == encoding::kPolicySize;
  }
};

struct ConnectFourTraits {
  using Sample = sample::ConnectFourSample;
  static constexpr const char* kName = "connect4";
  static constexpr nn::InputLayout kLayout = nn::InputLayout::kNchw;

  static Status Validate(const Sample& s) { return sample::ValidateConnectFourSample(s); }
  static void AppendPolicy(const Sample& s, std::vector<nn::PolicyEntry>& out) {
    const auto policy = sample::ConnectFourPolicy(s);
    for (int column = 0; column < games::kConnectFourWidth; ++column) {
      if (policy[column] > 0) out.push_back({column, policy[column]});
    }
  }
  static void Encode(const Sample& s, float* dst) {
    games::EncodeConnectFour(s.position,
                             {dst, static_cast<std::size_t>(games::kConnectFourInputSize)});
  }
  static bool Fits(const nn::NetConfig& net) {
    return net.input_planes == games::kConnectFourPlanes &&
           net.board_height == games::kConnectFourHeight &&
           net.board_width == games::kConnectFourWidth &&
           net.policy_size == games::kConnectFourWidth;
  }
};

template <typename Traits>
class TypedDecoder final : public BatchDecoder {
 public:
  using Sample = typename Traits::Sample;

  std::size_t record_bytes() const override { return sizeof(Sample); }
  nn::InputLayout input_layout() const override { return Traits::kLayout; }
  bool Fits(const nn::NetConfig& net) const override { return Traits::Fits(net); }

  Status Decode(std::span<const std::byte> records, std::size_t record_bytes,
                std::span<const double> weights, DecodedBatch& out) override {
    out.samples.clear();
    out.source.clear();
    out.model_version.clear();
    out.dropped.clear();
    if (record_bytes != sizeof(Sample)) {
      return FailedPrecondition("the replay daemon serves " + std::to_string(record_bytes) +
                                "-byte records, but a " + Traits::kName + " sample is " +
                                std::to_string(sizeof(Sample)) +
                                " bytes: is the daemon running for another game?");
    }
    const std::size_t n = weights.size();
    if (records.size() != n * record_bytes) {
      return InvalidArgument(std::to_string(records.size()) + " record bytes for " +
                             std::to_string(n) + " weights of " + std::to_string(record_bytes) +
                             "-byte records");
    }
    kept_.clear();
    // Policy spans point into entries_: sized up front so it never reallocates under them.
    entries_.clear();
    entries_.reserve(n * kMaxEntries);
    for (std::size_t i = 0; i < n; ++i) {
      Sample s;
      // A received frame may be misaligned: copy the record out before reading it.
      std::memcpy(&s, records.data() + i * record_bytes, sizeof s);
      if (Status valid = Traits::Validate(s); !valid.ok()) {
        out.dropped.push_back({i, std::move(valid)});
        continue;
      }
      if (!(weights[i] > 0) || !std::isfinite(weights[i])) {
        out.dropped.push_back(
            {i, InvalidArgument("importance weight " + std::to_string(weights[i]) +
                                " is not a positive finite number")});
        continue;
      }
      const std::size_t first = entries_.size();
      Traits::AppendPolicy(s, entries_);
      nn::TrainSample train;
      train.policy = {entries_.data() + first, entries_.size() - first};
      train.wdl = nn::WdlFromOutcome(s.z);
      train.importance_weight = static_cast<float>(weights[i]);
      out.samples.push_back(train);
      out.source.push_back(i);
      out.model_version.push_back(s.model_version);
      kept_.push_back(s);
    }
    return Status::Ok();
  }

  nn::EncodeFn Encoder() const override {
    return [this](int i, float* dst) { Traits::Encode(kept_[static_cast<std::size_t>(i)], dst); };
  }

 private:
  static constexpr std::size_t kMaxEntries =
      std::is_same_v<Sample, sample::ChessSample>
          ? static_cast<std::size_t>(sample::kMaxPolicyEntries)
          : static_cast<std::size_t>(games::kConnectFourWidth);
  std::vector<Sample> kept_;
  std::vector<nn::PolicyEntry> entries_;
};

}  // namespace

std::unique_ptr<BatchDecoder> BatchDecoder::Create(service::GameKind game) {
  if (game == service::GameKind::kConnectFour) {
    return std::make_unique<TypedDecoder<ConnectFourTraits>>();
  }
  return std::make_unique<TypedDecoder<ChessTraits>>();
}

}  // namespace az::learner
