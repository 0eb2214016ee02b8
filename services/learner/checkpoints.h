#pragma once

// The learner's checkpoint directory: `checkpoint-<step, 10 digits>.azck` files written by
// nn::Trainer::SaveCheckpoint (model + optimizer + step + loss-scaler state, atomically: temporary,
// fsync, rename, fsync of the directory), the newest `keep` kept. On start the newest one that
// loads is restored; a newer one that does not (truncated, corrupt, another network) is logged and
// the previous one is tried. Once one loads, the newer failures are renamed to `<name>.corrupt`,
// so that they are neither tried nor counted again.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/nn/trainer.h"

namespace az::learner {

struct CheckpointFile {
  std::string path;
  std::uint64_t step = 0;  // from the name
};

struct ResumeInfo {
  std::string path;
  std::uint64_t step = 0;            // the trainer's optimizer steps after loading
  std::uint64_t model_version = 0;   // the newest model published before it was written
  std::vector<std::string> refused;  // newer checkpoints that did not load (renamed .corrupt)
};

class CheckpointDir {
 public:
  // Creates the directory if needed. FAILED_PRECONDITION when it cannot be created.
  static Result<CheckpointDir> Open(const std::string& dir, int keep);

  // Checkpoint files, newest (highest step) first. Temporaries and other files are ignored.
  std::vector<CheckpointFile> List() const;

  // Writes the trainer's checkpoint for its current step (replacing one of the same step) and
  // removes all but the newest `keep`. Returns the path. Errors of SaveCheckpoint (disk full...).
  Result<std::string> Save(const nn::Trainer& trainer, std::uint64_t model_version) const;

  // Restores the newest checkpoint that loads into `trainer`; nullopt when there is none. A newer
  // one that fails is logged, and renamed to `<path>.corrupt` once an older one loaded. DATA_LOSS
  // when checkpoints exist but none loads (the message lists each and why; nothing is renamed):
  // the learner must not silently start over.
  Result<std::optional<ResumeInfo>> RestoreNewest(nn::Trainer& trainer) const;

  const std::string& dir() const { return dir_; }

 private:
  CheckpointDir(std::string dir, int keep) : dir_(std::move(dir)), keep_(keep) {}
  std::string PathFor(std::uint64_t step) const;

  std::string dir_;
  int keep_;
};

}  // namespace az::learner
