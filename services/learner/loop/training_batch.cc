#include "services/learner/loop/training_batch.h"

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>

#include "core/games/registry.h"
#include "core/nn/game_network.h"

namespace az::learner {
namespace {

template <games::GameDefinition G>
class TypedDecoder final : public BatchDecoder {
 public:
  explicit TypedDecoder(const DecoderOptions& options)
      : augment_(options.augment_symmetries && G::kSymmetries > 1),
        mix_(options.root_value_mix),
        rng_(options.seed) {}

  using Sample = typename G::Sample;

  std::size_t record_bytes() const override { return sizeof(Sample); }
  nn::InputLayout input_layout() const override { return nn::ToInputLayout(G::kInput.layout); }
  bool Fits(const nn::NetConfig& net) const override {
    return nn::NetFitsGame(net, *games::FindGameById(G::kId));
  }

  Status Decode(std::span<const std::byte> records, std::size_t record_bytes,
                std::span<const double> weights, DecodedBatch& out) override {
    out.samples.clear();
    out.source.clear();
    out.model_version.clear();
    out.dropped.clear();
    if (record_bytes != sizeof(Sample)) {
      return FailedPrecondition("the replay daemon serves " + std::to_string(record_bytes) +
                                "-byte records, but a " + std::string(G::kName) + " sample is " +
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
      if (Status valid = G::ValidateSample(s); !valid.ok()) {
        out.dropped.push_back({i, std::move(valid)});
        continue;
      }
      if (!(weights[i] > 0) || !std::isfinite(weights[i])) {
        out.dropped.push_back(
            {i, InvalidArgument("importance weight " + std::to_string(weights[i]) +
                                " is not a positive finite number")});
        continue;
      }
      // Validated first, then mapped: a symmetry of a valid sample is valid (tests/games).
      if (augment_) s = G::TransformSample(s, static_cast<int>(rng_() % G::kSymmetries));
      const std::size_t first = entries_.size();
      targets_.clear();
      G::AppendPolicy(s, targets_);
      for (const games::PolicyTarget& t : targets_) entries_.push_back({t.action, t.weight});
      nn::TrainSample train;
      train.policy = {entries_.data() + first, entries_.size() - first};
      train.wdl = nn::WdlFromOutcome(G::SampleZ(s));
      // An off-policy sample's outcome followed moves the search did not choose: its value target
      // is the search's own estimate.
      const float mix = G::SampleOffPolicy(s) ? 1.0f : mix_;
      if (mix > 0.0f) {
        const std::array<float, 3> root = G::SampleRootWdl(s);  // validated: sums to 1
        for (int k = 0; k < 3; ++k) train.wdl[k] = (1.0f - mix) * train.wdl[k] + mix * root[k];
      }
      train.importance_weight = static_cast<float>(weights[i]);
      out.samples.push_back(train);
      out.source.push_back(i);
      out.model_version.push_back(G::SampleModelVersion(s));
      kept_.push_back(s);
    }
    return Status::Ok();
  }

  nn::EncodeFn Encoder() const override {
    return [this](int i, float* dst) {
      G::Encode(G::SampleRecord(kept_[static_cast<std::size_t>(i)]),
                std::span<float>(dst, G::kInput.floats()));
    };
  }

 private:
  static constexpr std::size_t kMaxEntries = G::kMaxMoves;
  bool augment_;
  float mix_;
  std::mt19937_64 rng_;
  std::vector<Sample> kept_;
  std::vector<nn::PolicyEntry> entries_;
  std::vector<games::PolicyTarget> targets_;
};

}  // namespace

std::unique_ptr<BatchDecoder> BatchDecoder::Create(service::GameKind game,
                                                   const DecoderOptions& options) {
  return games::VisitGame(game, [&]<games::GameDefinition G>() -> std::unique_ptr<BatchDecoder> {
    return std::make_unique<TypedDecoder<G>>(options);
  });
}

}  // namespace az::learner
