#pragma once

// Helpers for the ipc and azctl tests: a temporary run directory, real child processes, waiting for
// a condition with a deadline (a generous one: these are not timing assertions).

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace az::ipc::testing {

// A fresh directory under /tmp (short, so ipc socket paths stay under the 107-byte limit), removed
// with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/az-ipc-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    if (made != nullptr) path_ = made;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Polls `condition` every 10 ms until it holds or `limit` passes; returns whether it held.
inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0), for a server
// that must keep its port across restarts. 0 when none could be had.
inline int FreeTcpPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

// A child process started with posix_spawn (fork + exec: the child never shares the parent's
// ZeroMQ context). Killed with SIGKILL and reaped on destruction if still running.
class ChildProcess {
 public:
  // Starts argv[0] with the arguments; stdout and stderr go to the given files when not empty.
  explicit ChildProcess(const std::vector<std::string>& argv, const std::string& stdout_path = "",
                        const std::string& stderr_path = "") {
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!stdout_path.empty()) {
      posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    if (!stderr_path.empty() && stderr_path == stdout_path) {
      // One file for both: one open file description, so that neither overwrites the other.
      posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    } else if (!stderr_path.empty()) {
      posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
    }
    if (::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }

  pid_t pid() const { return pid_; }
  bool started() const { return pid_ > 0; }
  void Signal(int signal) const { ::kill(pid_, signal); }
  // Reaps the child, waiting for it to exit; returns its exit code, or 128 + signal.
  int Wait() {
    if (reaped_) return exit_code_;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }
  // Whether it has exited (reaping it then); does not block.
  bool Exited() {
    if (reaped_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    reaped_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }
  // SIGKILL and reap.
  void Kill() {
    Signal(SIGKILL);
    Wait();
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
};

// Where the build put its executables.
inline std::string BinaryPath(const std::string& name) {
  return std::string(AZ_BINARY_DIR) + "/bin/" + name;
}

}  // namespace az::ipc::testing
