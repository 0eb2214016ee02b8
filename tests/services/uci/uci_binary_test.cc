// The real az-uci binary as a child process, over pipes, as a GUI or a match runner drives it:
// a scripted session with the uniform evaluator (handshake, isready, positions, go nodes /
// movetime / clocks / infinite + stop, one legal move, quit), stdout holding nothing but protocol
// lines; a real network file; the end of input as quit; a model that cannot be loaded.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/nn/network.h"
#include "tests/services/uci/tiny_network.h"
#include "services/uci/uci_commands.h"
#include "tests/services/uci/transcript.h"

extern char** environ;

namespace az::uci {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Transcript;
using Clock = std::chrono::steady_clock;

// az-uci with its stdin and stdout on pipes; stdout's lines go to a Transcript as they come.
class EngineProcess {
 public:
  explicit EngineProcess(const std::vector<std::string>& arguments) {
    ::signal(SIGPIPE, SIG_IGN);  // writing to an engine that died fails instead of killing us
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) return;
    std::vector<std::string> argv = {std::string(AZ_BINARY_DIR) + "/bin/az-uci"};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    if (::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    input_ = to_child[1];
    output_ = from_child[0];
    reader_ = std::thread([this] { ReadLines(); });
  }
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;
  ~EngineProcess() {
    CloseInput();
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      (void)WaitExit(seconds(10));
    }
    if (reader_.joinable()) reader_.join();
    if (output_ >= 0) ::close(output_);
  }

  bool started() const { return pid_ > 0; }
  void Send(const std::string& line) {
    const std::string text = line + "\n";
    ASSERT_EQ(::write(input_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void CloseInput() {
    if (input_ >= 0) ::close(input_);
    input_ = -1;
  }
  // The exit code, 128 + signal, or -1 when it did not exit within `limit`.
  int WaitExit(milliseconds limit) {
    const Clock::time_point deadline = Clock::now() + limit;
    while (!reaped_) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (Clock::now() >= deadline) return -1;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return exit_code_;
  }
  Transcript& out() { return transcript_; }

 private:
  void ReadLines() {
    std::string pending;
    char buffer[4096];
    for (;;) {
      const ssize_t got = ::read(output_, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      pending.append(buffer, static_cast<std::size_t>(got));
      for (std::size_t end; (end = pending.find('\n')) != std::string::npos;) {
        transcript_.Add(pending.substr(0, end));
        pending.erase(0, end + 1);
      }
    }
    if (!pending.empty()) transcript_.Add(pending);
  }

  pid_t pid_ = -1;
  int input_ = -1;
  int output_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
  Transcript transcript_;
  std::thread reader_;
};

std::string MoveOf(const std::string& bestmove_line) {
  std::istringstream words(bestmove_line);
  std::string keyword, move;
  words >> keyword >> move;
  return move;
}

bool LegalIn(const std::string& position_arguments, const std::string& move) {
  PositionCommand command = ParsePosition(position_arguments);
  return command.game && command.game->PlayUci(move).ok();
}

// Nothing but protocol lines on stdout.
void ExpectOnlyProtocolLines(const Transcript& out) {
  for (const std::string& line : out.Lines()) {
    const bool protocol = line.starts_with("id ") || line.starts_with("option name ") ||
                          line == "uciok" || line == "readyok" || line.starts_with("info ") ||
                          line.starts_with("bestmove ");
    EXPECT_TRUE(protocol) << "not a UCI line on stdout: '" << line << "'";
  }
}

TEST(UciBinaryTest, PlaysAScriptedSessionWithTheUniformEvaluator) {
  EngineProcess engine({"--model", "uniform", "--hash", "64"});
  ASSERT_TRUE(engine.started());
  Transcript& out = engine.out();

  engine.Send("uci");
  ASSERT_TRUE(out.WaitFor("uciok", seconds(30)).has_value()) << out.Text();
  EXPECT_EQ(out.Lines().front(), "id name az-uci");
  EXPECT_FALSE(out.Matching("option name Threads type spin").empty());
  EXPECT_FALSE(out.Matching("option name Hash type spin default 64 ").empty()) << out.Text();
  EXPECT_FALSE(out.Matching("option name NNCacheSize type spin").empty());
  EXPECT_FALSE(out.Matching("option name RiskBeta type string").empty());
  engine.Send("isready");
  ASSERT_TRUE(out.WaitFor("readyok", seconds(30)).has_value());

  // go nodes.
  engine.Send("ucinewgame");
  engine.Send("position startpos moves e2e4 e7e5");
  std::size_t from = out.size();
  engine.Send("go nodes 200");
  std::optional<std::size_t> at = out.WaitFor("bestmove ", seconds(60), from);
  ASSERT_TRUE(at.has_value()) << out.Text();
  EXPECT_TRUE(LegalIn("startpos moves e2e4 e7e5", MoveOf(out.Lines()[*at]))) << out.Lines()[*at];
  EXPECT_FALSE(out.Matching("info depth ", from).empty());

  // A mate in one from a FEN, under a move time: found, and the search stops once it is proven.
  engine.Send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1");
  from = out.size();
  Clock::time_point start = Clock::now();
  engine.Send("go movetime 5000");
  at = out.WaitFor("bestmove ", seconds(30), from);
  ASSERT_TRUE(at.has_value()) << out.Text();
  EXPECT_EQ(out.Lines()[*at], "bestmove d1d8");
  EXPECT_LT(Clock::now() - start, milliseconds(4'000));

  // Clocks: one second each, the move comes well inside it.
  engine.Send("position startpos moves d2d4");
  from = out.size();
  start = Clock::now();
  engine.Send("go wtime 1000 btime 1000 winc 0 binc 0");
  at = out.WaitFor("bestmove ", seconds(30), from);
  ASSERT_TRUE(at.has_value()) << out.Text();
  EXPECT_LT(Clock::now() - start, milliseconds(1'000));
  EXPECT_TRUE(LegalIn("startpos moves d2d4", MoveOf(out.Lines()[*at])));

  // One legal move: answered at once although the clock is long.
  engine.Send("position fen 7k/8/8/8/8/8/6q1/7K w - - 0 1");
  from = out.size();
  start = Clock::now();
  engine.Send("go wtime 600000 btime 600000");
  at = out.WaitFor("bestmove ", seconds(30), from);
  ASSERT_TRUE(at.has_value()) << out.Text();
  EXPECT_EQ(out.Lines()[*at], "bestmove h1g2");
  EXPECT_LT(Clock::now() - start, milliseconds(1'000));

  // go infinite: isready is answered mid-search, stop brings exactly one bestmove.
  engine.Send("position startpos");
  from = out.size();
  engine.Send("go infinite");
  std::this_thread::sleep_for(milliseconds(300));
  engine.Send("isready");
  ASSERT_TRUE(out.WaitFor("readyok", seconds(10), from).has_value()) << out.Text();
  EXPECT_TRUE(out.Matching("bestmove", from).empty()) << out.Text();
  engine.Send("stop");
  at = out.WaitFor("bestmove ", seconds(10), from);
  ASSERT_TRUE(at.has_value()) << out.Text();
  EXPECT_TRUE(LegalIn("startpos", MoveOf(out.Lines()[*at])));

  // Bad input is answered and the session goes on.
  from = out.size();
  engine.Send("position startpos moves e2e5");
  engine.Send("isready");
  ASSERT_TRUE(out.WaitFor("readyok", seconds(10), from).has_value());
  EXPECT_FALSE(out.Matching("info string position:", from).empty()) << out.Text();

  engine.Send("quit");
  EXPECT_EQ(engine.WaitExit(seconds(10)), 0);
  std::this_thread::sleep_for(milliseconds(50));
  // One bestmove per go, and nothing on stdout but protocol lines.
  EXPECT_EQ(out.Matching("bestmove ").size(), 5u) << out.Text();
  ExpectOnlyProtocolLines(out);
}

TEST(UciBinaryTest, PlaysWithANetworkFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("az_uci_binary_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "chess.azw").string();
  {
    const Status saved = testing::SaveTinyChessNetwork(path, 3);
    ASSERT_TRUE(saved.ok()) << saved.ToString();
  }
  {
    EngineProcess engine({"--model", path, "--nn-cache", "1024", "--minibatch", "8"});
    ASSERT_TRUE(engine.started());
    Transcript& out = engine.out();
    engine.Send("uci");
    engine.Send("isready");
    ASSERT_TRUE(out.WaitFor("readyok", seconds(60)).has_value()) << out.Text();
    engine.Send("position startpos moves e2e4");
    engine.Send("go nodes 64");
    const std::optional<std::size_t> at = out.WaitFor("bestmove ", seconds(60));
    ASSERT_TRUE(at.has_value()) << out.Text();
    EXPECT_TRUE(LegalIn("startpos moves e2e4", MoveOf(out.Lines()[*at]))) << out.Text();
    engine.Send("quit");
    EXPECT_EQ(engine.WaitExit(seconds(30)), 0);
    std::this_thread::sleep_for(milliseconds(50));
    ExpectOnlyProtocolLines(out);
  }
  std::filesystem::remove_all(dir);
}

TEST(UciBinaryTest, TheEndOfInputStopsTheSearchAndExits) {
  EngineProcess engine({});
  ASSERT_TRUE(engine.started());
  engine.Send("position startpos");
  engine.Send("go infinite");
  std::this_thread::sleep_for(milliseconds(200));
  engine.CloseInput();
  EXPECT_EQ(engine.WaitExit(seconds(10)), 0);
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(engine.out().Matching("bestmove ").size(), 1u) << engine.out().Text();
}

TEST(UciBinaryTest, AModelThatCannotBeLoadedExitsWithStatusTwo) {
  EngineProcess engine({"--model", "/nonexistent/model.azw"});
  ASSERT_TRUE(engine.started());
  EXPECT_EQ(engine.WaitExit(seconds(30)), 2);
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(engine.out().size(), 0u) << engine.out().Text();  // the reason went to stderr
  EngineProcess bad_flag({"--hash", "0"});
  EXPECT_EQ(bad_flag.WaitExit(seconds(30)), 2);
}

}  // namespace
}  // namespace az::uci
