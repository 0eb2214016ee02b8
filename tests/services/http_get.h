#pragma once

// A plain HTTP GET on localhost for tests that read what a real server serves: a service's
// Prometheus /metrics, or a real Prometheus's query API (tests/dashboards). Small on purpose: no
// HTTP client library is packaged for C++ in Debian that is worth a dependency for this.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace az::ipc::testing {

// A TCP socket connected to 127.0.0.1:port whose reads give up after 10 s, or -1. A receive buffer
// size > 0 is set before connecting (a small one makes a client that stops reading hold the
// server's writes sooner).
inline int ConnectLoopback(int port, int receive_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (receive_buffer > 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  }
  const timeval timeout{.tv_sec = 10, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// GET `target` (path and query, already URL-encoded) from 127.0.0.1:port with HTTP/1.0, so the
// server closes the connection after the answer. The whole response, headers included; empty when
// nothing answers (a read stalled for 10 s ends it).
inline std::string HttpGet(int port, const std::string& target) {
  const int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  std::string response;
  const std::string request =
      "GET " + target + " HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, n);
  }
  ::close(fd);
  return response;
}

// The body of an HTTP response: what follows the blank line after the headers.
inline std::string HttpBody(const std::string& response) {
  const std::size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

// A service's Prometheus exposition, headers included (tests match lines in it).
inline std::string Scrape(int port) { return HttpGet(port, "/metrics"); }

}  // namespace az::ipc::testing
