#include "services/learner/model_publisher.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/base/log.h"
#include "core/nn/checksum.h"
#include "core/nn/file_io.h"

namespace az::learner {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "model-";
constexpr std::string_view kSuffix = ".azw";

std::optional<std::uint64_t> VersionOf(std::string_view name) {
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
  const std::string_view digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty()) return std::nullopt;
  std::uint64_t version = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return version;
}

// Every model file in `dir`, highest version first.
std::vector<std::pair<std::uint64_t, std::string>> ModelFiles(const std::string& dir) {
  std::vector<std::pair<std::uint64_t, std::string>> files;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (!entry.is_regular_file(error)) continue;
    if (std::optional<std::uint64_t> v = VersionOf(entry.path().filename().string())) {
      files.emplace_back(*v, entry.path().string());
    }
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  return files;
}

}  // namespace

Result<std::string> FileChecksum(const std::string& path) {
  AZ_ASSIGN_OR_RETURN(std::string data, nn::ReadWholeFile(path));
  return nn::Xxh64Text(std::as_bytes(std::span(data.data(), data.size())));
}

Result<std::unique_ptr<ModelPublisher>> ModelPublisher::Create(
    const ModelPublisherOptions& options) {
  std::error_code error;
  fs::create_directories(options.model_dir, error);
  if (error) {
    return FailedPrecondition("creating the model directory " + options.model_dir + ": " +
                              error.message());
  }
  AZ_ASSIGN_OR_RETURN(std::unique_ptr<ipc::EventPublisher> publisher,
                      ipc::EventPublisher::Create({.service = options.service,
                                                   .run_dir = options.run_dir,
                                                   .endpoint = options.events_endpoint}));
  return std::unique_ptr<ModelPublisher>(new ModelPublisher(options, std::move(publisher)));
}

std::string ModelPublisher::PathFor(std::uint64_t version) const {
  return options_.model_dir + "/model-" + std::to_string(version) + std::string(kSuffix);
}

std::optional<std::uint64_t> ModelPublisher::HighestFile() const {
  const auto files = ModelFiles(options_.model_dir);
  if (files.empty()) return std::nullopt;
  return files.front().first;
}

std::optional<std::uint64_t> ModelPublisher::LatestVersion() const {
  std::optional<std::uint64_t> latest = HighestFile();
  if (std::optional<ipc::Event> event = publisher_->Latest(ipc::kModelTopic)) {
    if (Result<ipc::ModelPublished> model = ipc::ModelPublishedFromEvent(*event);
        model.ok() && model->version >= 0) {
      const auto version = static_cast<std::uint64_t>(model->version);
      latest = latest ? std::max(*latest, version) : version;
    }
  }
  return latest;
}

Result<ipc::ModelPublished> ModelPublisher::Publish(const nn::Trainer& trainer,
                                                    std::uint64_t version) {
  const std::string path = PathFor(version);
  AZ_RETURN_IF_ERROR(trainer.SaveWeights(path, version).WithContext("saving model " + path));
  AZ_ASSIGN_OR_RETURN(std::string checksum, FileChecksum(path));
  ipc::ModelPublished model{
      .version = static_cast<std::int64_t>(version), .path = path, .checksum = std::move(checksum)};
  AZ_RETURN_IF_ERROR(publisher_->Publish(ipc::kModelTopic, ipc::ModelPublishedToJson(model))
                         .status()
                         .WithContext("publishing model " + std::to_string(version)));
  Prune();
  return model;
}

void ModelPublisher::Prune() const {
  if (options_.keep <= 0) return;
  const auto files = ModelFiles(options_.model_dir);
  std::size_t kept = 0;
  for (const auto& [version, path] : files) {
    if (version == 0) continue;  // the initial weights: the baseline of every comparison
    if (kept++ < static_cast<std::size_t>(options_.keep)) continue;
    std::error_code error;
    fs::remove(path, error);
    if (error) {
      AZ_LOG(kWarning) << "removing old model " << path << ": " << error.message();
    }
  }
}

}  // namespace az::learner
