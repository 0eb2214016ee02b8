#pragma once

// Publishes the learner's models: writes the trainer's weights to `<model-dir>/model-<N>.azw`
// (atomically: a reader sees the old file or the new one), checksums the file, and announces
// "model N published at PATH with checksum C" on the pipeline's event channel (ipc/event.h), whose
// last-value cache lets an evaluator that starts later still get model N. Old files are pruned:
// model-0 (the initial weights, the arena's baseline) and the newest `keep` stay.
//
// Versions only grow, across restarts: the next version is one above the highest of the last event
// published (persisted by the event publisher), the files in the model directory and what the
// caller restored from a checkpoint, so a learner that crashed between publishing and
// checkpointing never publishes a second, different model N.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/base/status.h"
#include "core/nn/trainer.h"
#include "ipc/event.h"
#include "ipc/event_publisher.h"

namespace az::learner {

struct ModelPublisherOptions {
  std::string run_dir;
  std::string service = "learner";  // the publisher's name in events
  std::string events_endpoint;      // where subscribers connect
  std::string model_dir;            // created if missing
  int keep = 20;                    // newest files kept besides model-0; 0: all
};

class ModelPublisher {
 public:
  // Binds the events endpoint and loads the last event. Errors of EventPublisher::Create, and
  // FAILED_PRECONDITION when the model directory cannot be created.
  static Result<std::unique_ptr<ModelPublisher>> Create(const ModelPublisherOptions& options);

  // The highest version published so far (event or file), or nullopt when none was.
  std::optional<std::uint64_t> LatestVersion() const;

  // Saves the weights as model `version`, checksums the file and publishes the event. Errors of
  // SaveWeights (disk) or of the event file; the weights file may then exist unannounced, and a
  // later Publish of a higher version supersedes it.
  Result<ipc::ModelPublished> Publish(const nn::Trainer& trainer, std::uint64_t version);

  // `<model-dir>/model-<version>.azw`.
  std::string PathFor(std::uint64_t version) const;
  const std::string& endpoint() const { return publisher_->endpoint(); }

 private:
  ModelPublisher(ModelPublisherOptions options, std::unique_ptr<ipc::EventPublisher> publisher)
      : options_(std::move(options)), publisher_(std::move(publisher)) {}
  std::optional<std::uint64_t> HighestFile() const;
  void Prune() const;

  ModelPublisherOptions options_;
  std::unique_ptr<ipc::EventPublisher> publisher_;
};

// "xxh64:<16 hex digits>" of the whole file at `path` (what `xxh64sum PATH` prints). Errors of
// reading the file.
Result<std::string> FileChecksum(const std::string& path);

}  // namespace az::learner
