#include "services/match/uci_client.h"

#include <charconv>
#include <filesystem>
#include <sstream>

namespace az::match {
namespace {

std::string_view FirstWord(std::string_view line) {
  const std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  line.remove_prefix(start);
  return line.substr(0, line.find_first_of(" \t"));
}

template <typename T>
bool ParseNumber(const std::string& text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

void ReadInfoLine(std::string_view line, MoveAnswer& answer) {
  std::istringstream words{std::string(line)};
  std::string word;
  if (!(words >> word) || word != "info") return;
  while (words >> word) {
    if (word == "string") return;  // free text to the end of the line
    std::string value;
    if (word == "depth") {
      int depth = 0;
      if (words >> value && ParseNumber(value, depth)) answer.depth = depth;
    } else if (word == "nodes") {
      std::int64_t nodes = 0;
      if (words >> value && ParseNumber(value, nodes)) answer.nodes = nodes;
    } else if (word == "score") {
      std::string kind;
      int number = 0;
      if (!(words >> kind >> value) || !ParseNumber(value, number)) continue;
      if (kind == "cp") {
        answer.score = EngineScore{.centipawns = number};
      } else if (kind == "mate") {
        const int plies = number > 0 ? 2 * number - 1 : -2 * number;
        answer.score = EngineScore{.centipawns = number > 0 ? 100000 - plies : -(100000 - plies),
                                   .mate = true,
                                   .mate_moves = number};
      }
    } else if (word == "pv") {
      return;  // moves to the end of the line
    }
  }
}

Status UciEngine::WaitFor(std::string_view token, Clock::time_point deadline) {
  for (;;) {
    AZ_ASSIGN_OR_RETURN(std::string line, process_.ReadLine(deadline));
    if (FirstWord(line) == token) return Status::Ok();
    if (token == "uciok" && line.starts_with("id name ") && name_.empty()) {
      name_ = line.substr(8);
    }
  }
}

Status UciEngine::Start(std::chrono::milliseconds timeout) {
  AZ_RETURN_IF_ERROR(CheckEngineSpec(spec_));
  const Clock::time_point deadline = Clock::now() + timeout;
  name_ = spec_.name;
  AZ_RETURN_IF_ERROR(process_.Start(spec_.argv, spec_.working_dir));
  const auto fail = [&](const Status& status, std::string_view step) {
    process_.Stop(std::chrono::milliseconds(100));
    return status.WithContext(spec_.argv[0] + ": " + std::string(step));
  };
  Status status = process_.WriteLine("uci");
  if (status.ok()) status = WaitFor("uciok", deadline);
  if (!status.ok()) return fail(status, "the uci handshake");
  if (name_.empty()) name_ = std::filesystem::path(spec_.argv[0]).filename().string();
  for (const auto& [option, value] : spec_.options) {
    status = process_.WriteLine("setoption name " + option + " value " + value);
    if (!status.ok()) return fail(status, "setoption " + option);
  }
  status = process_.WriteLine("isready");
  if (status.ok()) status = WaitFor("readyok", deadline);
  if (!status.ok()) return fail(status, "isready after the options");
  return Status::Ok();
}

Status UciEngine::NewGame(std::chrono::milliseconds timeout) {
  AZ_RETURN_IF_ERROR(process_.WriteLine("ucinewgame"));
  AZ_RETURN_IF_ERROR(process_.WriteLine("isready"));
  return WaitFor("readyok", Clock::now() + timeout);
}

Result<MoveAnswer> UciEngine::Go(const std::string& position_command, const std::string& go_command,
                                 Clock::time_point deadline, std::chrono::milliseconds stop_grace) {
  AZ_RETURN_IF_ERROR(process_.WriteLine(position_command));
  const Clock::time_point start = Clock::now();
  AZ_RETURN_IF_ERROR(process_.WriteLine(go_command));
  MoveAnswer answer;
  bool stopped = false;
  for (;;) {
    Result<std::string> line = process_.ReadLine(deadline);
    if (!line.ok()) {
      if (line.status().code() != StatusCode::kDeadlineExceeded || stopped) return line.status();
      // Out of time: ask for the move now; the caller decides whether it came too late.
      stopped = true;
      AZ_RETURN_IF_ERROR(process_.WriteLine("stop"));
      deadline = Clock::now() + stop_grace;
      continue;
    }
    const std::string_view first = FirstWord(*line);
    if (first == "info") {
      ReadInfoLine(*line, answer);
    } else if (first == "bestmove") {
      answer.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
      std::istringstream words(*line);
      std::string word;
      words >> word >> answer.bestmove;
      if (answer.bestmove.empty()) return InvalidArgument("'bestmove' without a move");
      if (stopped) {
        return DeadlineExceeded("the engine answered only after stop, in " +
                                std::to_string(answer.elapsed.count()) + " ms");
      }
      return answer;
    }
  }
}

void UciEngine::Quit() {
  if (!process_.running()) return;
  (void)process_.WriteLine("quit");
  process_.Stop(std::chrono::milliseconds(1000));
}

}  // namespace az::match
