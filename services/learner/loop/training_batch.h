#pragma once

// Turns a batch of replay records (raw bytes from the replay daemon) into what nn::Trainer trains
// on: validated samples with their sparse policy, WDL target and importance weight, and an encoder
// that writes each kept sample's input straight into the batch tensor. One implementation per game
// (the game's GameDefinition: its Sample, validation, policy and encoder); records that fail the
// sample's validation are dropped, counted and reported, never trained on.
//
//   auto decoder = BatchDecoder::Create(games::ConnectFour::kId);
//   AZ_RETURN_IF_ERROR(decoder->Decode(records, record_bytes, weights, batch));
//   trainer->TrainStep(batch.samples, decoder->Encoder());
//
// Not thread-safe: one decoder per training loop. The spans in a DecodedBatch stay valid until the
// next Decode.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/nn/net_config.h"
#include "core/nn/sample.h"
#include "services/common/game_kind.h"

namespace az::learner {

struct DroppedRecord {
  std::size_t index = 0;  // position in the sampled batch
  Status why;
};

struct DecodedBatch {
  std::vector<nn::TrainSample> samples;      // the records that passed validation, in batch order
  std::vector<std::size_t> source;           // samples[k] came from record source[k] of the batch
  std::vector<std::uint32_t> model_version;  // provenance: the network that searched samples[k]
  std::vector<DroppedRecord> dropped;        // the records that did not pass
};

struct DecoderOptions {
  // Map each sample by one of the game's board symmetries, drawn at random (games::GameDefinition
  // kSymmetries; chess has none): as many times the data for the network, at no search cost.
  bool augment_symmetries = false;
  std::uint64_t seed = 1;  // of the symmetry draws
  // The value target: (1 - m) * the game's outcome + m * the search root's WDL. 0: the outcome
  // alone (AlphaZero); the root's view is less noisy where one move decided the game late. An
  // off-policy sample (GameDefinition's SampleOffPolicy) takes the root's WDL alone.
  float root_value_mix = 0.0f;
};

class BatchDecoder {
 public:
  static std::unique_ptr<BatchDecoder> Create(service::GameKind game,
                                              const DecoderOptions& options = {});
  virtual ~BatchDecoder() = default;

  // Bytes of one record of this game's sample.
  virtual std::size_t record_bytes() const = 0;
  // How the encoder lays out a position (chess NHWC, Connect Four planar NCHW).
  virtual nn::InputLayout input_layout() const = 0;
  // The game's network input and policy shapes must match the trainer's (checked by the app).
  virtual bool Fits(const nn::NetConfig& net) const = 0;

  // Decodes `records` (count x record_bytes, any alignment) into `out` (cleared first). weights[i]
  // is record i's importance weight (> 0). Malformed records go to out.dropped with the reason.
  // FAILED_PRECONDITION when `record_bytes` is not this game's sample size (the replay daemon
  // stores another game's records), INVALID_ARGUMENT when the sizes of `records` and `weights`
  // disagree.
  virtual Status Decode(std::span<const std::byte> records, std::size_t record_bytes,
                        std::span<const double> weights, DecodedBatch& out) = 0;

  // Writes out.samples[i]'s input (valid until the next Decode).
  virtual nn::EncodeFn Encoder() const = 0;
};

}  // namespace az::learner
