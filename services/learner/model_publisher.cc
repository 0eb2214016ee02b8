#include "services/learner/model_publisher.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/base/log.h"
#include "core/nn/checksum.h"
#include "core/nn/file_io.h"
#include "core/nn/model_files.h"

namespace az::learner {

namespace fs = std::filesystem;

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
  return options_.model_dir + "/" + nn::ModelFileName(version);
}

std::optional<std::uint64_t> ModelPublisher::HighestFile() const {
  const auto files = nn::ListModelFiles(options_.model_dir);
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
  nn::PruneModelFiles(options_.model_dir, options_.keep, /*keep_initial=*/true);
}

}  // namespace az::learner
