#include "services/learner/checkpoints.h"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/base/log.h"
#include "core/nn/model_files.h"

namespace az::learner {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "checkpoint-";
constexpr std::string_view kSuffix = ".azck";

}  // namespace

Result<CheckpointDir> CheckpointDir::Open(const std::string& dir, int keep) {
  AZ_CHECK(keep >= 1);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return FailedPrecondition("creating the checkpoint directory " + dir + ": " + error.message());
  }
  return CheckpointDir(dir, keep);
}

std::string CheckpointDir::PathFor(std::uint64_t step) const {
  char name[64];
  std::snprintf(name, sizeof name, "checkpoint-%010llu.azck",
                static_cast<unsigned long long>(step));
  return dir_ + "/" + name;
}

std::vector<CheckpointFile> CheckpointDir::List() const {
  std::vector<CheckpointFile> files;
  for (auto& [step, path] : nn::ListNumberedFiles(dir_, kPrefix, kSuffix)) {
    files.push_back({std::move(path), step});
  }
  return files;
}

Result<std::string> CheckpointDir::Save(const nn::Trainer& trainer,
                                        std::uint64_t model_version) const {
  const std::string path = PathFor(trainer.counters().steps);
  AZ_RETURN_IF_ERROR(trainer.SaveCheckpoint(path, model_version));
  nn::PruneNumberedFiles(dir_, kPrefix, kSuffix, static_cast<std::size_t>(keep_));
  return path;
}

Result<std::optional<ResumeInfo>> CheckpointDir::RestoreNewest(nn::Trainer& trainer) const {
  const std::vector<CheckpointFile> files = List();
  if (files.empty()) return std::optional<ResumeInfo>();
  ResumeInfo info;
  std::string failures;
  for (const CheckpointFile& file : files) {
    Result<nn::WeightsFileInfo> loaded = trainer.LoadCheckpoint(file.path);
    if (loaded.ok()) {
      info.path = file.path;
      info.step = trainer.counters().steps;
      info.model_version = loaded->model_version;
      // The newer ones that failed are set aside, so that they are not tried again on every start
      // and hold no place among the kept checkpoints; kept for inspection. Only once an older one
      // loaded: if none does, everything stays as it was for a person to look at.
      for (const std::string& refused : info.refused) {
        std::error_code error;
        fs::rename(refused, refused + ".corrupt", error);
        if (error) {
          AZ_LOG(kWarning) << "could not rename " << refused << ": " << error.message();
        }
      }
      return std::optional<ResumeInfo>(std::move(info));
    }
    failures += "\n  " + file.path + ": " + loaded.status().ToString();
    AZ_LOG(kWarning) << "checkpoint " << file.path << " does not load ("
                     << loaded.status().ToString() << "); trying the previous one";
    info.refused.push_back(file.path);
  }
  return DataLoss("no checkpoint in " + dir_ + " loads:" + failures);
}

}  // namespace az::learner
