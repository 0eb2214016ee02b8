// The metrics exporter over a real TCP socket: it serves /metrics, refuses a request head that
// never ends (instead of reading past it), lets go of a client that stops reading so that its
// shutdown is not held, and binds 127.0.0.1 unless told otherwise.

#include "services/common/metrics_exporter.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

#include "services/common/service_options.h"
#include "tests/services/http_get.h"

namespace az::service {
namespace {

using ipc::testing::ConnectLoopback;
using ipc::testing::HttpGet;

std::unique_ptr<MetricsExporter> StartExporter() {
  auto exporter = MetricsExporter::Start("", 0);
  AZ_CHECK(exporter.ok(), exporter.status().ToString());
  return std::move(exporter).value();
}

std::string SendAndRead(int port, const std::string& request) {
  const int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, n);
  ::close(fd);
  return response;
}

TEST(MetricsExporterTest, ServesTheRegistryAndRefusesOtherPaths) {
  auto exporter = StartExporter();
  prometheus::BuildCounter().Name("az_test_total").Help("a test counter").Register(
      exporter->registry()).Add({}).Increment(3);
  const std::string metrics = HttpGet(exporter->port(), "/metrics");
  EXPECT_NE(metrics.find("HTTP/1.1 200 OK"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("az_test_total 3"), std::string::npos) << metrics;
  EXPECT_NE(HttpGet(exporter->port(), "/other").find("404"), std::string::npos);
  EXPECT_EQ(exporter->scrapes(), 1u);
}

TEST(MetricsExporterTest, AHeadWithoutLineEndsIsRefusedAndServingGoesOn) {
  auto exporter = StartExporter();
  // A valid-looking request line that never ends: 8 KB without CRLF. Read as a line up to npos it
  // used to be served (or read past the buffer); it is refused now.
  const std::string endless = "GET /metrics HTTP/1.1" + std::string(9000, 'x');
  const std::string response = SendAndRead(exporter->port(), endless);
  EXPECT_NE(response.find("431"), std::string::npos) << response.substr(0, 200);
  EXPECT_EQ(response.find("200 OK"), std::string::npos);
  // A head with a request line but no blank line before the limit: refused as well.
  std::string unfinished = "GET /metrics HTTP/1.1\r\n";
  while (unfinished.size() < 9000) unfinished += "X-Padding: yyyyyyyyyyyyyyyy\r\n";
  EXPECT_NE(SendAndRead(exporter->port(), unfinished).find("431"), std::string::npos);
  EXPECT_EQ(exporter->scrapes(), 0u);
  EXPECT_NE(HttpGet(exporter->port(), "/metrics").find("200 OK"), std::string::npos);
}

TEST(MetricsExporterTest, AClientThatStopsReadingDoesNotHoldShutdown) {
  auto exporter = StartExporter();
  // About 8 MB of exposition: far more than the socket buffers hold.
  auto& family = prometheus::BuildCounter().Name("az_padding_total").Help("padding").Register(
      exporter->registry());
  for (int i = 0; i < 160000; ++i) family.Add({{"series", std::to_string(i)}}).Increment();
  const int stalled = ConnectLoopback(exporter->port(), /*receive_buffer=*/4096);
  ASSERT_GE(stalled, 0);
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(stalled, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the server is writing now

  const auto started = std::chrono::steady_clock::now();
  auto stopped = std::async(std::launch::async, [&exporter] { exporter.reset(); });
  const bool in_time = stopped.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  ::close(stalled);  // unblocks a server that did hang, so that the test ends either way
  stopped.wait();
  EXPECT_TRUE(in_time) << "the exporter's shutdown waited on a client that stopped reading";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(6));
}

TEST(MetricsExporterTest, BindsLoopbackUnlessAskedOtherwise) {
  EXPECT_EQ(ServiceOptions{}.metrics_bind, "127.0.0.1");
  auto exporter = StartExporter();
  EXPECT_EQ(exporter->host(), "127.0.0.1");
  auto everywhere = MetricsExporter::Start("0.0.0.0", 0);
  ASSERT_TRUE(everywhere.ok()) << everywhere.status().ToString();
  EXPECT_EQ((*everywhere)->host(), "0.0.0.0");
  EXPECT_FALSE(MetricsExporter::Start("not-an-address", 0).ok());
}

}  // namespace
}  // namespace az::service
