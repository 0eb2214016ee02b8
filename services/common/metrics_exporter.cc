#include "services/common/metrics_exporter.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

#include "core/base/log.h"

namespace az::service {
namespace {

std::string Errno(std::string_view what) { return std::string(what) + ": " + std::strerror(errno); }

using Clock = std::chrono::steady_clock;

// Milliseconds left until `deadline`, at least 0.
int MillisecondsLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Writes all of `data` before `deadline`, giving up on errors (the scraper went away) and when the
// deadline passes (a scraper that stopped reading must not hold the server, or its shutdown).
bool WriteAll(int fd, std::string_view data, Clock::time_point deadline) {
  while (!data.empty()) {
    pollfd pfd{fd, POLLOUT, 0};
    const int left = MillisecondsLeft(deadline);
    if (left == 0 || ::poll(&pfd, 1, left) <= 0) return false;
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void Reply(int fd, std::string_view status, std::string_view content_type, std::string_view body,
           Clock::time_point deadline) {
  std::string head = "HTTP/1.1 ";
  head += status;
  head += "\r\nContent-Type: ";
  head += content_type;
  head += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (WriteAll(fd, head, deadline)) WriteAll(fd, body, deadline);
}

}  // namespace

Result<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(const std::string& bind_address,
                                                                int port) {
  if (port < 0 || port > 65535) {
    return InvalidArgument("metrics port " + std::to_string(port) + " is not in 0..65535");
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const std::string host = bind_address.empty() ? std::string(kDefaultMetricsBind) : bind_address;
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    return InvalidArgument("metrics bind address \"" + host + "\" is not an IPv4 address");
  }
  const std::string where = host + ":" + std::to_string(port);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(Errno("metrics socket"));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 16) != 0) {
    const std::string error = Errno("serving metrics on " + where);
    ::close(fd);
    return Unavailable(error +
                       " (is the port in use? --metrics-port 0 picks a free one, -1 turns "
                       "metrics off)");
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  std::unique_ptr<MetricsExporter> exporter(new MetricsExporter());
  exporter->listen_fd_ = fd;
  exporter->port_ = ntohs(address.sin_port);
  exporter->host_ = host;
  exporter->registry_ = std::make_shared<prometheus::Registry>();
  exporter->thread_ = std::thread([raw = exporter.get()] { raw->Loop(); });
  return exporter;
}

MetricsExporter::~MetricsExporter() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void MetricsExporter::Loop() {
  while (!stop_.load(std::memory_order_acquire)) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;  // timeout (look at stop_) or EINTR
    const int connection = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    Serve(connection);
    ::close(connection);
  }
}

void MetricsExporter::Serve(int fd) {
  // Read the request head: up to 8 KB, for at most 2 s; the answer gets another 2 s.
  std::string request;
  const Clock::time_point read_deadline = Clock::now() + kReadTimeout;
  const Clock::time_point write_deadline = read_deadline + kWriteTimeout;
  char buffer[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestHead) {
    pollfd pfd{fd, POLLIN, 0};
    const int left = MillisecondsLeft(read_deadline);
    if (left == 0 || ::poll(&pfd, 1, left) <= 0) return;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const std::size_t line_end = request.find("\r\n");
  if (line_end == std::string::npos || request.find("\r\n\r\n") == std::string::npos) {
    Reply(fd, "431 Request Header Fields Too Large", "text/plain",
          "the request head must end within 8 KB\n", write_deadline);
    return;
  }
  const std::string_view line(request.data(), line_end);
  const std::size_t first = line.find(' ');
  const std::size_t second = line.find(' ', first + 1);
  if (first == std::string_view::npos || second == std::string_view::npos) {
    Reply(fd, "400 Bad Request", "text/plain", "bad request\n", write_deadline);
    return;
  }
  const std::string_view method = line.substr(0, first);
  std::string_view path = line.substr(first + 1, second - first - 1);
  path = path.substr(0, path.find('?'));
  if (path != "/metrics" && path != "/") {
    Reply(fd, "404 Not Found", "text/plain", "only /metrics is served here\n", write_deadline);
    return;
  }
  if (method != "GET" && method != "HEAD") {
    Reply(fd, "405 Method Not Allowed", "text/plain", "GET /metrics\n", write_deadline);
    return;
  }
  const std::string body = prometheus::TextSerializer().Serialize(registry_->Collect());
  Reply(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8",
        method == "HEAD" ? std::string_view() : std::string_view(body), write_deadline);
  scrapes_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace az::service
