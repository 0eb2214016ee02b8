// The discovery records services write into the run directory.

#include "ipc/discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ipc/file_util.h"
#include "tests/ipc/test_util.h"

namespace az::ipc {
namespace {

using testing::TempDir;

ServiceInfo Sample(const std::string& name) {
  ServiceInfo info;
  info.service = name;
  info.pid = 4242;
  info.host = "box";
  info.control_endpoint = "ipc:///run/" + name + ".ctl";
  info.events_endpoint = "ipc:///run/" + name + ".pub";
  info.metrics_port = 9100;
  info.start_time_unix_ms = 1700000000000;
  info.state = "running";
  return info;
}

TEST(IpcDiscoveryTest, RecordRoundTripsThroughTheRunDirectory) {
  TempDir dir;
  const ServiceInfo info = Sample("learner");
  ASSERT_TRUE(WriteServiceInfo(dir.path(), info).ok());
  Result<ServiceInfo> read = ReadServiceInfo(dir.path(), "learner");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->service, info.service);
  EXPECT_EQ(read->pid, info.pid);
  EXPECT_EQ(read->host, info.host);
  EXPECT_EQ(read->control_endpoint, info.control_endpoint);
  EXPECT_EQ(read->events_endpoint, info.events_endpoint);
  EXPECT_EQ(read->metrics_port, info.metrics_port);
  EXPECT_EQ(read->start_time_unix_ms, info.start_time_unix_ms);
  EXPECT_EQ(read->state, info.state);
  // Replaced atomically: no temporary file is left next to it.
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path()))
    ++files;
  EXPECT_EQ(files, 1u);
}

TEST(IpcDiscoveryTest, MissingRecordIsNotFound) {
  TempDir dir;
  EXPECT_EQ(ReadServiceInfo(dir.path(), "replay").status().code(), StatusCode::kNotFound);
}

TEST(IpcDiscoveryTest, ForeignOrCorruptFilesAreRefusedWithAReason) {
  EXPECT_EQ(ParseServiceInfo("{").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseServiceInfo("[1]").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseServiceInfo(R"({"kind":"config"})").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseServiceInfo(R"({"kind":"az-service","version":1,"service":"x"})").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseServiceInfo(R"({"kind":"az-service","version":99})").status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(IpcDiscoveryTest, ListingFindsServicesAndSkipsEverythingElse) {
  TempDir dir;
  ASSERT_TRUE(WriteServiceInfo(dir.path(), Sample("replay")).ok());
  ASSERT_TRUE(WriteServiceInfo(dir.path(), Sample("learner")).ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/config.json", R"({"lr": 0.1})").ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/broken.json", "{not json").ok());
  ASSERT_TRUE(WriteFileAtomically(dir.path() + "/learner.events.json", "{}").ok());
  // A record whose name does not match its file is not trusted.
  ASSERT_TRUE(
      WriteFileAtomically(dir.path() + "/imposter.json", ServiceInfoToJson(Sample("replay")).dump())
          .ok());
  Result<std::vector<ServiceInfo>> services = ListServices(dir.path());
  ASSERT_TRUE(services.ok()) << services.status().ToString();
  ASSERT_EQ(services->size(), 2u);
  EXPECT_EQ((*services)[0].service, "learner");
  EXPECT_EQ((*services)[1].service, "replay");
  EXPECT_EQ(ListServices(dir.path() + "/missing").status().code(), StatusCode::kNotFound);
}

TEST(IpcDiscoveryTest, ProcessAliveSeesThisProcessAndNotAReapedChild) {
  EXPECT_TRUE(ProcessAlive(::getpid()));
  testing::ChildProcess child({"/bin/true"});
  ASSERT_TRUE(child.started());
  child.Wait();
  EXPECT_FALSE(ProcessAlive(child.pid()));
  EXPECT_FALSE(ProcessAlive(0));
}

}  // namespace
}  // namespace az::ipc
