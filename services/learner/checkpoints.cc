#include "services/learner/checkpoints.h"

#include <algorithm>
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

// The step of "checkpoint-0000001234.azck", or nullopt for any other name.
std::optional<std::uint64_t> StepOf(std::string_view name) {
  return nn::NumberInFileName(name, kPrefix, kSuffix);
}

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
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_, error)) {
    if (!entry.is_regular_file(error)) continue;
    if (std::optional<std::uint64_t> step = StepOf(entry.path().filename().string())) {
      files.push_back({entry.path().string(), *step});
    }
  }
  std::sort(files.begin(), files.end(),
            [](const CheckpointFile& a, const CheckpointFile& b) { return a.step > b.step; });
  return files;
}

Result<std::string> CheckpointDir::Save(const nn::Trainer& trainer,
                                        std::uint64_t model_version) const {
  const std::string path = PathFor(trainer.counters().steps);
  AZ_RETURN_IF_ERROR(trainer.SaveCheckpoint(path, model_version));
  const std::vector<CheckpointFile> files = List();
  for (std::size_t i = static_cast<std::size_t>(keep_); i < files.size(); ++i) {
    std::error_code error;
    fs::remove(files[i].path, error);
    if (error) {
      AZ_LOG(kWarning) << "removing old checkpoint " << files[i].path << ": " << error.message();
    }
  }
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
