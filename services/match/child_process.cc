#include "services/match/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace az::match {

Status ChildProcess::Start(const std::vector<std::string>& argv, const std::string& working_dir) {
  if (argv.empty() || argv[0].empty()) return InvalidArgument("no program to start");
  if (running()) return FailedPrecondition("the child process is already running");
  // An engine that dies while we write must fail the write, not end az-match.
  ::signal(SIGPIPE, SIG_IGN);
  int to_child[2];
  int from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) {
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]);
    ::close(to_child[1]);
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> args = argv;
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  if (!working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  // The child gets SIGPIPE's default back (an ignored signal would stay ignored across exec).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &default_signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int spawned =
      ::posix_spawnp(&pid, pointers[0], &actions, &attributes, pointers.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (spawned != 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    return NotFound("cannot start " + argv[0] + ": " + std::strerror(spawned));
  }
  pid_ = pid;
  input_ = to_child[1];
  output_ = from_child[0];
  pending_.clear();
  output_closed_ = false;
  return Status::Ok();
}

Status ChildProcess::WriteLine(const std::string& line) {
  if (input_ < 0) return Unavailable("the engine's input is closed");
  const std::string text = line + "\n";
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(input_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Unavailable(std::string("the engine stopped reading: ") + std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> ChildProcess::ReadLine(Clock::time_point deadline) {
  for (;;) {
    const std::size_t end = pending_.find('\n');
    if (end != std::string::npos) {
      std::string line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (output_closed_ || output_ < 0) return Unavailable("the engine exited (end of its output)");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return DeadlineExceeded("no answer from the engine in time");
    pollfd fd{.fd = output_, .events = POLLIN, .revents = 0};
    const int ready =
        ::poll(&fd, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked above
    char buffer[4096];
    const ssize_t got = ::read(output_, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      output_closed_ = true;
      if (!pending_.empty()) {  // a last line without its newline
        std::string line = std::move(pending_);
        pending_.clear();
        return line;
      }
      continue;
    }
    pending_.append(buffer, static_cast<std::size_t>(got));
  }
}

void ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (input_ >= 0) ::close(input_);
  input_ = -1;
  if (pid_ > 0) {
    const Clock::time_point deadline = Clock::now() + grace;
    bool reaped = false;
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_ || (done < 0 && errno == ECHILD)) {
        reaped = true;
        break;
      }
      if (Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid_ = -1;
  }
  if (output_ >= 0) ::close(output_);
  output_ = -1;
  pending_.clear();
  output_closed_ = true;
}

}  // namespace az::match
